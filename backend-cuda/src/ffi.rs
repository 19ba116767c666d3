//! Every call into cudarc's lower layers (`sys`, `result`), in one place.
//!
//! The rest of the crate uses cudarc's safe layer (context, streams, events,
//! modules) and the functions here. Each `unsafe` block states why it is sound;
//! the callers' obligations are the `# Safety` bullets of the `unsafe fn`s.
//! Nothing here maps errors to kiln's: the raw `DriverError` (or NVRTC's log)
//! goes back to the caller, which knows the operation and the object.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::mem::MaybeUninit;
use std::sync::OnceLock;

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::{sys, CudaFunction, CudaStream};
use cudarc::nvrtc::sys as nv;

/// A device address.
pub(crate) type DevicePtr = sys::CUdeviceptr;

/// Whether libcuda can be loaded. cudarc panics on first use of a missing
/// library, so this is asked before anything else touches the driver.
pub(crate) fn driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to load the library under its usual names; no symbol is called.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

/// Whether libnvrtc can be loaded (asked before any NVRTC call, for the same reason).
pub(crate) fn nvrtc_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: as in `driver_present`.
    *PRESENT.get_or_init(|| unsafe { nv::is_culib_present() })
}

// ---------------------------------------------------------------- devices

/// `cuInit(0)`; the driver must be present.
pub(crate) fn init() -> Result<(), DriverError> {
    result::init()
}

/// `cuDeviceGetCount`.
pub(crate) fn device_count() -> Result<usize, DriverError> {
    result::device::get_count().map(|n| n.max(0) as usize)
}

/// `cuDeviceGet`.
pub(crate) fn device(ordinal: usize) -> Result<sys::CUdevice, DriverError> {
    result::device::get(ordinal as c_int)
}

/// `cuDeviceGetName`, without trusting the driver to terminate the string.
pub(crate) fn device_name(dev: sys::CUdevice) -> Result<String, DriverError> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for the length passed; `dev` came from `cuDeviceGet`.
    unsafe { sys::cuDeviceGetName(buf.as_mut_ptr().cast(), buf.len() as c_int - 1, dev).result()? };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// `cuDeviceTotalMem`.
pub(crate) fn device_total_mem(dev: sys::CUdevice) -> Result<usize, DriverError> {
    // SAFETY: `dev` came from `cuDeviceGet`; the call only writes its out-parameter.
    unsafe { result::device::total_mem(dev) }
}

/// `cuDeviceGetAttribute`.
pub(crate) fn device_attribute(dev: sys::CUdevice, attr: sys::CUdevice_attribute) -> Result<i32, DriverError> {
    // SAFETY: `dev` came from `cuDeviceGet`; the call only writes its out-parameter.
    unsafe { result::device::get_attribute(dev, attr) }
}

/// `cuDriverGetVersion`, e.g. 13000 for CUDA 13.0.
pub(crate) fn driver_version() -> Result<i32, DriverError> {
    let mut v: c_int = 0;
    // SAFETY: writes one int to a valid location.
    unsafe { sys::cuDriverGetVersion(&mut v).result()? };
    Ok(v)
}

/// `cuCtxGetStreamPriorityRange` as (least, greatest); lower numbers are higher priorities.
/// The context must be current on this thread.
pub(crate) fn stream_priority_range() -> Result<(i32, i32), DriverError> {
    result::stream::get_priority_range()
}

/// Keep memory freed with `cuMemFreeAsync` in the device's default pool
/// instead of returning it to the driver at each synchronization, so that
/// stream-ordered allocation is a pool hit in steady state.
pub(crate) fn keep_pool_memory(dev: sys::CUdevice) -> Result<(), DriverError> {
    let mut threshold: u64 = u64::MAX;
    // SAFETY: `dev` came from `cuDeviceGet`; the attribute takes a pointer to a
    // u64, which lives across the call.
    unsafe {
        let pool = result::device::get_default_mem_pool(dev)?;
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
        .result()
    }
}

/// Return the memory the device's default pool holds unused to the driver
/// (`cuMemPoolTrimTo(pool, 0)`); memory still pending a stream-ordered free is kept.
pub(crate) fn trim_pool(dev: sys::CUdevice) -> Result<(), DriverError> {
    // SAFETY: `dev` came from the context; trimming releases only unused pool memory.
    unsafe {
        let pool = result::device::get_default_mem_pool(dev)?;
        sys::cuMemPoolTrimTo(pool, 0).result()
    }
}

// ---------------------------------------------------------------- memory

/// Allocate `bytes` (> 0) of device memory, stream-ordered (`cuMemAllocAsync`)
/// when `pooled`, else `cuMemAlloc`. The stream's context must be current.
pub(crate) fn alloc_device(stream: &CudaStream, bytes: usize, pooled: bool) -> Result<DevicePtr, DriverError> {
    // SAFETY: the stream is alive (borrowed); the calls only write the out-pointer.
    unsafe {
        if pooled {
            result::malloc_async(stream.cu_stream(), bytes)
        } else {
            result::malloc_sync(bytes)
        }
    }
}

/// Free device memory allocated by [`alloc_device`] with the same `pooled`.
///
/// # Safety
/// - `ptr` came from [`alloc_device`] and is freed once.
/// - When not `pooled`, no work that uses `ptr` is still pending (the caller synchronizes first).
pub(crate) unsafe fn free_device(ptr: DevicePtr, stream: &CudaStream, pooled: bool) -> Result<(), DriverError> {
    // SAFETY: by the caller's contract.
    unsafe {
        if pooled {
            result::free_async(ptr, stream.cu_stream())
        } else {
            result::free_sync(ptr)
        }
    }
}

/// Allocate `bytes` (> 0) of page-locked host memory, zeroed. Not
/// write-combined: kiln reads these buffers back on the host, and reads from
/// write-combined memory are uncached and slow. The context must be current.
pub(crate) fn alloc_pinned(bytes: usize) -> Result<*mut u8, DriverError> {
    // SAFETY: flags 0 = plain page-locked memory; on success the pointer is valid
    // for `bytes` bytes, which are zeroed before anyone reads them.
    unsafe {
        let ptr = result::malloc_host(bytes, 0)?.cast::<u8>();
        std::ptr::write_bytes(ptr, 0, bytes);
        Ok(ptr)
    }
}

/// Free page-locked memory.
///
/// # Safety
/// - `ptr` came from [`alloc_pinned`], is freed once, and no copy using it is pending.
pub(crate) unsafe fn free_pinned(ptr: *mut u8) -> Result<(), DriverError> {
    // SAFETY: by the caller's contract.
    unsafe { result::free_host(ptr.cast()) }
}

/// Enqueue a host-to-device copy. From pageable memory the driver stages the
/// source before returning, so `src` may be reused at once; from page-locked
/// memory the copy is truly asynchronous.
///
/// # Safety
/// - `dst..dst + bytes` lies in one live device allocation of the stream's context.
/// - `src..src + bytes` is readable; if page-locked, it stays alive and unwritten until the copy completes.
pub(crate) unsafe fn copy_htod(
    dst: DevicePtr,
    src: *const u8,
    bytes: usize,
    stream: &CudaStream,
) -> Result<(), DriverError> {
    // SAFETY: by the caller's contract.
    unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src.cast(), bytes, stream.cu_stream()).result() }
}

/// Enqueue a device-to-host copy (complete on return when `dst` is pageable).
///
/// # Safety
/// - `src..src + bytes` lies in one live device allocation of the stream's context.
/// - `dst..dst + bytes` is writable and nothing else touches it until the copy completes.
pub(crate) unsafe fn copy_dtoh(
    dst: *mut u8,
    src: DevicePtr,
    bytes: usize,
    stream: &CudaStream,
) -> Result<(), DriverError> {
    // SAFETY: by the caller's contract.
    unsafe { sys::cuMemcpyDtoHAsync_v2(dst.cast(), src, bytes, stream.cu_stream()).result() }
}

/// Enqueue a device-to-device copy.
///
/// # Safety
/// - Both ranges lie in live device allocations of the stream's context and do not overlap.
pub(crate) unsafe fn copy_dtod(
    dst: DevicePtr,
    src: DevicePtr,
    bytes: usize,
    stream: &CudaStream,
) -> Result<(), DriverError> {
    // SAFETY: by the caller's contract.
    unsafe { sys::cuMemcpyDtoDAsync_v2(dst, src, bytes, stream.cu_stream()).result() }
}

/// Enqueue a fill of `bytes` bytes at `dst` with `pattern` repeated.
///
/// An 8-byte pattern has no memset of its own: it is two strided 32-bit
/// memsets (`cuMemsetD2D32Async` with a pitch of 8 bytes), one per half.
///
/// # Safety
/// - `dst..dst + bytes` lies in one live device allocation of the stream's context.
/// - `pattern.len()` is 1, 2, 4 or 8 and divides `bytes`; `dst` is aligned to it.
pub(crate) unsafe fn fill(
    dst: DevicePtr,
    bytes: usize,
    pattern: &[u8],
    stream: &CudaStream,
) -> Result<(), DriverError> {
    let s = stream.cu_stream();
    let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    // SAFETY: by the caller's contract, each memset stays inside the range and is aligned.
    unsafe {
        match pattern.len() {
            1 => sys::cuMemsetD8Async(dst, pattern[0], bytes, s).result(),
            2 => sys::cuMemsetD16Async(dst, u16::from_le_bytes([pattern[0], pattern[1]]), bytes / 2, s).result(),
            4 => sys::cuMemsetD32Async(dst, word(pattern), bytes / 4, s).result(),
            8 if pattern[..4] == pattern[4..] => sys::cuMemsetD32Async(dst, word(pattern), bytes / 4, s).result(),
            8 => {
                let n = bytes / 8;
                sys::cuMemsetD2D32Async(dst, 8, word(&pattern[..4]), 1, n, s).result()?;
                sys::cuMemsetD2D32Async(dst + 4, 8, word(&pattern[4..]), 1, n, s).result()
            }
            _ => Err(DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE)),
        }
    }
}

/// `cuMemGetInfo` as (free, total); the context must be current.
pub(crate) fn mem_info() -> Result<(usize, usize), DriverError> {
    result::mem_get_info()
}

// ---------------------------------------------------------------- kernels

/// Enqueue a kernel launch.
///
/// # Safety
/// - `func` is a live function of the stream's context, and `params` holds one
///   pointer per kernel parameter, each to a value of that parameter's size,
///   all alive for the duration of the call.
/// - Every device pointer passed stays alive until the kernel completes, and the
///   kernel touches only memory the caller allows it to.
pub(crate) unsafe fn launch(
    func: &CudaFunction,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    stream: &CudaStream,
    params: *mut *mut c_void,
) -> Result<(), DriverError> {
    // SAFETY: by the caller's contract; `extra` is null, as the driver allows.
    unsafe {
        sys::cuLaunchKernel(
            func.cu_function(),
            grid[0],
            grid[1],
            grid[2],
            block[0],
            block[1],
            block[2],
            shared,
            stream.cu_stream(),
            params,
            std::ptr::null_mut(),
        )
        .result()
    }
}

/// The byte size of each parameter of `func`, from `cuFuncGetParamInfo`
/// (driver 12.4 and later); `None` when the driver lacks it.
pub(crate) fn param_sizes(func: &CudaFunction) -> Result<Option<Vec<usize>>, DriverError> {
    // cudarc panics on a missing symbol, so look it up first.
    // SAFETY: `culib` is loaded (the driver is present); looking up a symbol calls nothing.
    let present = unsafe { sys::culib().get::<unsafe extern "C" fn()>(b"cuFuncGetParamInfo\0").is_ok() };
    if !present {
        return Ok(None);
    }
    // The count has no call of its own before CUDA 13.2: ask for parameters
    // until the driver answers that the index is past the end. 32764 bytes of
    // parameters bound their number.
    let mut sizes = Vec::new();
    for index in 0..32764usize {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: `func` is a live function; the call writes two usizes.
        match unsafe { sys::cuFuncGetParamInfo(func.cu_function(), index, &mut offset, &mut size).result() } {
            Ok(()) => sizes.push(size),
            Err(DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE)) => return Ok(Some(sizes)),
            Err(e) => return Err(e),
        }
    }
    Ok(Some(sizes))
}

// ---------------------------------------------------------------- NVRTC

/// NVRTC's (major, minor) version.
pub(crate) fn nvrtc_version() -> Result<(i32, i32), String> {
    let (mut major, mut minor) = (0, 0);
    // SAFETY: writes two ints; NVRTC is present (checked by the caller).
    unsafe { nv::nvrtcVersion(&mut major, &mut minor) }.result().map_err(|e| format!("nvrtcVersion: {e:?}"))?;
    Ok((major, minor))
}

/// The `sm_XY` architectures this NVRTC can target, as numbers (90 for sm_90).
pub(crate) fn nvrtc_archs() -> Result<Vec<i32>, String> {
    let mut n: c_int = 0;
    // SAFETY: writes one int, then `n` ints into a buffer of that length.
    unsafe {
        nv::nvrtcGetNumSupportedArchs(&mut n).result().map_err(|e| format!("nvrtcGetNumSupportedArchs: {e:?}"))?;
        let mut archs = vec![0 as c_int; n.max(0) as usize];
        nv::nvrtcGetSupportedArchs(archs.as_mut_ptr())
            .result()
            .map_err(|e| format!("nvrtcGetSupportedArchs: {e:?}"))?;
        Ok(archs)
    }
}

/// What NVRTC produced: a CUBIN for a real architecture, or NUL-terminated PTX.
pub(crate) struct NvrtcImage {
    /// The module image, ready for `cuModuleLoadData`.
    pub bytes: Vec<u8>,
    /// Whether `bytes` is a CUBIN (else PTX).
    pub cubin: bool,
}

/// Why NVRTC produced nothing.
pub(crate) enum NvrtcFailure {
    /// The source did not compile; the full program log.
    Compile(String),
    /// An NVRTC call failed outside compilation.
    Call(String),
}

/// `nvrtcGetCUBINSize` or `nvrtcGetPTXSize`.
type SizeFn = unsafe fn(nv::nvrtcProgram, *mut usize) -> nv::nvrtcResult;
/// `nvrtcGetCUBIN` or `nvrtcGetPTX`.
type GetFn = unsafe fn(nv::nvrtcProgram, *mut c_char) -> nv::nvrtcResult;

/// Destroys the program on every path out of [`nvrtc_compile`].
struct ProgramGuard(nv::nvrtcProgram);

impl Drop for ProgramGuard {
    fn drop(&mut self) {
        // SAFETY: the program was created and is destroyed once; an error here
        // only leaks host memory and is not worth reporting over the result.
        let _ = unsafe { nv::nvrtcDestroyProgram(&mut self.0) };
    }
}

/// Compile `source` with `options`; fetch the CUBIN when `cubin` (the
/// options name a real `sm_` architecture), else the PTX.
pub(crate) fn nvrtc_compile(
    source: &CStr,
    name: &CStr,
    options: &[CString],
    cubin: bool,
) -> Result<NvrtcImage, NvrtcFailure> {
    let call = |what: &str, e: nv::nvrtcResult| NvrtcFailure::Call(format!("{what}: {e:?}"));
    let mut prog = MaybeUninit::uninit();
    // SAFETY: source and name are NUL-terminated and outlive the program (the guard drops first).
    unsafe {
        nv::nvrtcCreateProgram(prog.as_mut_ptr(), source.as_ptr(), name.as_ptr(), 0, std::ptr::null(), std::ptr::null())
    }
    .result()
    .map_err(|e| call("nvrtcCreateProgram", e.0))?;
    // SAFETY: created above.
    let guard = ProgramGuard(unsafe { prog.assume_init() });
    let opts: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: `opts` points at `options.len()` NUL-terminated strings alive for the call.
    let compiled = unsafe { nv::nvrtcCompileProgram(guard.0, opts.len() as c_int, opts.as_ptr()) };
    if compiled != nv::nvrtcResult::NVRTC_SUCCESS {
        let log = program_log(guard.0).unwrap_or_else(|e| format!("(the log could not be read: {e})"));
        return Err(match compiled {
            nv::nvrtcResult::NVRTC_ERROR_COMPILATION => NvrtcFailure::Compile(log),
            other => NvrtcFailure::Call(format!("nvrtcCompileProgram: {other:?}\n{log}")),
        });
    }
    let (size_fn, get_fn, what): (SizeFn, GetFn, &str) = if cubin {
        (nv::nvrtcGetCUBINSize, nv::nvrtcGetCUBIN, "nvrtcGetCUBIN")
    } else {
        (nv::nvrtcGetPTXSize, nv::nvrtcGetPTX, "nvrtcGetPTX")
    };
    let mut size = 0usize;
    // SAFETY: the program compiled; the size call writes one usize, then the
    // image call fills a buffer of exactly that size.
    unsafe {
        size_fn(guard.0, &mut size).result().map_err(|e| call(what, e.0))?;
        let mut bytes = vec![0u8; size];
        get_fn(guard.0, bytes.as_mut_ptr().cast()).result().map_err(|e| call(what, e.0))?;
        if bytes.is_empty() {
            return Err(NvrtcFailure::Call(format!("{what}: NVRTC returned an empty image")));
        }
        Ok(NvrtcImage { bytes, cubin })
    }
}

fn program_log(prog: nv::nvrtcProgram) -> Result<String, String> {
    let mut size = 0usize;
    // SAFETY: `prog` is a live program; the buffer has the size NVRTC asked for.
    unsafe {
        nv::nvrtcGetProgramLogSize(prog, &mut size).result().map_err(|e| format!("{e:?}"))?;
        let mut log = vec![0u8; size.max(1)];
        nv::nvrtcGetProgramLog(prog, log.as_mut_ptr().cast()).result().map_err(|e| format!("{e:?}"))?;
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        Ok(String::from_utf8_lossy(&log[..end]).trim_end().to_string())
    }
}
