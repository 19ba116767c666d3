//! Loaded kernels: a module's entry point, with what the launch path checks
//! against read once, at load time.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use cudarc::driver::sys::CUfunction_attribute as F;
use cudarc::driver::{CudaFunction, CudaModule};
use kiln_core::{Error, RawKernel, Result};

use crate::cache::CacheStatus;
use crate::state::DeviceState;

/// A kernel loaded into a device's context (`CUmodule` + `CUfunction`).
pub struct CudaKernel {
    pub(crate) name: String,
    /// Id in `DeviceState`, for naming the kernel when a fault surfaces.
    pub(crate) id: u32,
    pub(crate) function: CudaFunction,
    /// Byte size of each parameter, where the driver reports them.
    pub(crate) params: Option<Box<[usize]>>,
    pub(crate) max_threads: u32,
    pub(crate) registers: u32,
    pub(crate) static_shared: u32,
    /// The device's opt-in shared memory per block.
    pub(crate) shared_limit: u32,
    /// The dynamic shared memory the kernel may use now (48 KiB until raised).
    pub(crate) max_dynamic_shared: AtomicU32,
    pub(crate) cache: CacheStatus,
    pub(crate) target: String,
    state: Arc<DeviceState>,
}

impl CudaKernel {
    /// Find entry point `name` in `module` and read its attributes.
    pub(crate) fn load(
        state: &Arc<DeviceState>,
        module: &Arc<CudaModule>,
        name: &str,
        shared_limit: u32,
        cache: CacheStatus,
        target: String,
    ) -> Result<Self> {
        state.bind("cuModuleGetFunction")?;
        let function = module.load_function(name).map_err(|e| {
            if crate::error::is_not_found(e) {
                Error::Compile {
                    backend: kiln_core::BackendKind::Cuda,
                    kernel: name.to_string(),
                    options: Vec::new(),
                    log: format!(
                        "the compiled module has no entry point `{name}`: declare it `extern \"C\" __global__ void {name}(...)` \
                         (without extern \"C\" its name is mangled)"
                    ),
                }
            } else {
                state.fail("cuModuleGetFunction", e, 0)
            }
        })?;
        let attr = |a: F, what: &str| -> Result<u32> {
            function.get_attribute(a).map(|v| v.max(0) as u32).map_err(|e| state.fail(what, e, 0))
        };
        let max_threads = attr(F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, "cuFuncGetAttribute(max threads)")?;
        let registers = attr(F::CU_FUNC_ATTRIBUTE_NUM_REGS, "cuFuncGetAttribute(registers)")?;
        let static_shared = attr(F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, "cuFuncGetAttribute(shared size)")?;
        let dynamic = attr(F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, "cuFuncGetAttribute(dynamic shared)")?;
        let params = crate::ffi::param_sizes(&function)
            .map_err(|e| state.fail("cuFuncGetParamInfo", e, 0))?
            .map(Vec::into_boxed_slice);
        Ok(CudaKernel {
            name: name.to_string(),
            id: state.register_kernel(name),
            function,
            params,
            max_threads,
            registers,
            static_shared,
            shared_limit,
            max_dynamic_shared: AtomicU32::new(dynamic),
            cache,
            target,
            state: state.clone(),
        })
    }

    /// Allow this kernel `bytes` of dynamic shared memory per block
    /// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`); done once per new maximum.
    pub(crate) fn raise_dynamic_shared(&self, bytes: u32) -> Result<()> {
        self.state.bind("cuFuncSetAttribute")?;
        self.function.set_attribute(F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes as i32).map_err(|e| {
            Error::InvalidLaunch {
                kernel: self.name.clone(),
                reason: format!(
                    "raising the kernel's dynamic shared memory to {bytes} bytes failed: {}",
                    crate::error::describe(e)
                ),
            }
        })?;
        self.max_dynamic_shared.fetch_max(bytes, Ordering::Relaxed);
        Ok(())
    }

    /// The byte size of each parameter as the driver reports it (`None` on
    /// drivers before CUDA 12.4, which cannot say; launches are then unchecked).
    pub fn param_sizes(&self) -> Option<&[usize]> {
        self.params.as_deref()
    }

    /// Registers per thread.
    pub fn registers(&self) -> u32 {
        self.registers
    }

    /// The most threads per block this kernel can run with.
    pub fn max_threads_per_block(&self) -> u32 {
        self.max_threads
    }

    /// Where the module came from: compiled now, or the on-disk cache.
    pub fn cache_status(&self) -> &CacheStatus {
        &self.cache
    }

    /// What NVRTC targeted: `sm_90` (a CUBIN) or `compute_XY` (PTX, compiled by the driver).
    pub fn target(&self) -> &str {
        &self.target
    }

    /// cudarc's function handle, for interop with code written against cudarc directly.
    pub fn driver_function(&self) -> &CudaFunction {
        &self.function
    }
}

impl RawKernel for CudaKernel {
    fn name(&self) -> &str {
        &self.name
    }
}
