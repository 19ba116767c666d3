//! Listing devices and reading their properties, without creating a context
//! (a context costs hundreds of milliseconds and device memory).

use cudarc::driver::sys::CUdevice;
use cudarc::driver::sys::CUdevice_attribute as A;
use kiln_core::{BackendKind, DeviceInfo, DeviceKind, Error, Features, IndexWidth, Limits, MatrixUnits, Result};

use crate::error::{before_open, unavailable, NO_DRIVER};
use crate::ffi;

/// Check for the driver, initialise it, and count the devices.
pub(crate) fn driver_devices() -> Result<usize> {
    if !ffi::driver_present() {
        return Err(unavailable(NO_DRIVER));
    }
    ffi::init().map_err(|e| before_open("cuInit", e))?;
    let count = ffi::device_count().map_err(|e| before_open("cuDeviceGetCount", e))?;
    if count == 0 {
        return Err(unavailable("the CUDA driver is installed but sees no device"));
    }
    Ok(count)
}

/// Every device the driver sees.
pub(crate) fn list() -> Result<Vec<DeviceInfo>> {
    let count = driver_devices()?;
    (0..count).map(query).collect()
}

/// The driver's device handle for `ordinal`, or `DeviceNotFound`.
pub(crate) fn device_handle(ordinal: usize) -> Result<CUdevice> {
    let count = driver_devices()?;
    if ordinal >= count {
        return Err(Error::DeviceNotFound { backend: BackendKind::Cuda, ordinal, count });
    }
    ffi::device(ordinal).map_err(|e| before_open("cuDeviceGet", e))
}

/// Identity, limits and features of device `ordinal`.
///
/// `max_shared_mem_per_block` is the opt-in maximum (227 KiB on the H100):
/// launches that ask for more than the default 48 KiB get the kernel's limit
/// raised for them (see `launch.rs`).
pub(crate) fn query(ordinal: usize) -> Result<DeviceInfo> {
    let dev = device_handle(ordinal)?;
    let attr = |a: A, name: &str| -> Result<u32> {
        ffi::device_attribute(dev, a)
            .map(|v| v.max(0) as u32)
            .map_err(|e| before_open(&format!("cuDeviceGetAttribute({name})"), e))
    };
    let name = ffi::device_name(dev).map_err(|e| before_open("cuDeviceGetName", e))?;
    let memory = ffi::device_total_mem(dev).map_err(|e| before_open("cuDeviceTotalMem", e))? as u64;
    let major = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute capability major")?;
    let minor = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute capability minor")?;
    let version = ffi::driver_version().map_err(|e| before_open("cuDriverGetVersion", e))?;
    let warp_size = attr(A::CU_DEVICE_ATTRIBUTE_WARP_SIZE, "warp size")?;
    let limits = Limits {
        max_threads_per_block: attr(A::CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "max threads per block")?,
        max_block: [
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, "max block x")?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, "max block y")?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, "max block z")?,
        ],
        max_grid: [
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, "max grid x")?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, "max grid y")?,
            attr(A::CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, "max grid z")?,
        ],
        max_shared_mem_per_block: attr(
            A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            "max shared memory per block (opt-in)",
        )?,
        max_buffer_bytes: memory,
        max_binding_bytes: memory,
        warp_size,
        min_warp_size: warp_size,
    };
    let cc = major * 10 + minor;
    let integrated = attr(A::CU_DEVICE_ATTRIBUTE_INTEGRATED, "integrated")? != 0;
    Ok(DeviceInfo {
        backend: BackendKind::Cuda,
        ordinal,
        name,
        kind: if integrated { DeviceKind::IntegratedGpu } else { DeviceKind::DiscreteGpu },
        compute_units: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessor count")?,
        memory_bytes: memory,
        compute_capability: Some((major, minor)),
        driver: format!("CUDA driver {}.{}", version / 1000, (version % 1000) / 10),
        limits,
        features: Features {
            f64: true,
            f16: cc >= 53,
            // kiln's own `kiln_bf16` converts through f32 on every architecture.
            bf16: true,
            float_atomics: true,
            int64: true,
            wide_multiply: true,
            subgroups: true,
            timestamps: true,
            // Resident blocks keep running while others spin (decoupled look-back).
            forward_progress: true,
            index_width: IndexWidth::U64,
            // 128-bit vector loads and stores.
            vector_bytes: 16,
            // kiln's mma.sync kernels (kiln-kernels' matmul) need sm_80's shapes.
            matrix_units: if cc >= 80 { MatrixUnits::ALL } else { MatrixUnits::default() },
        },
    })
}

/// Whether the device supports stream-ordered allocation (memory pools).
pub(crate) fn has_memory_pools(dev: CUdevice) -> bool {
    ffi::device_attribute(dev, A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED).map(|v| v > 0).unwrap_or(false)
}
