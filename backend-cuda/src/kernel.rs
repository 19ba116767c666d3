//! Loaded kernels: a module's entry point, with what the launch path checks
//! against read once, at load time.

mod params;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::CUfunction_attribute as F;
use cudarc::driver::{CudaFunction, CudaModule};
use kiln_core::{Error, RawKernel, Result};

use crate::cache::CacheStatus;
use crate::ffi::NvrtcImage;
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
    /// The dynamic shared memory the kernel may use now (48 KiB until
    /// raised): what the driver was last told, written only under
    /// `raise_lock`, after the driver accepted it, so never more than the
    /// driver allows. The launch path reads it without the lock.
    pub(crate) max_dynamic_shared: AtomicU32,
    /// Serializes [`raise_dynamic_shared`](Self::raise_dynamic_shared).
    raise_lock: Mutex<()>,
    pub(crate) cache: CacheStatus,
    pub(crate) target: String,
    state: Arc<DeviceState>,
}

impl CudaKernel {
    /// Find entry point `name` in `module`, loaded from `image`, and read its attributes.
    pub(crate) fn load(
        state: &Arc<DeviceState>,
        module: &Arc<CudaModule>,
        image: &NvrtcImage,
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
        // Drivers before 13.2 cannot count the parameters: the image says how
        // many, and the driver's sizes must agree with it.
        let declared =
            if crate::ffi::driver_counts_params() { None } else { params::declared(&image.bytes, image.cubin, name) };
        let params = crate::ffi::param_sizes(&function, declared.as_ref().map(Vec::len))
            .map_err(|e| state.fail("cuFuncGetParamInfo", e, 0))?
            .filter(|sizes| declared.as_ref().is_none_or(|d| params::agree(sizes, d)))
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
            raise_lock: Mutex::new(()),
            cache,
            target,
            state: state.clone(),
        })
    }

    /// Allow this kernel at least `bytes` of dynamic shared memory per block
    /// (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`); done once per new
    /// maximum, and never lowering what an earlier call allowed.
    pub(crate) fn raise_dynamic_shared(&self, bytes: u32) -> Result<()> {
        raise_to(&self.max_dynamic_shared, &self.raise_lock, bytes, |bytes| {
            self.state.bind("cuFuncSetAttribute")?;
            self.function.set_attribute(F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes as i32).map_err(|e| {
                Error::InvalidLaunch {
                    kernel: self.name.clone(),
                    reason: format!(
                        "raising the kernel's dynamic shared memory to {bytes} bytes failed: {}",
                        crate::error::describe(e)
                    ),
                }
            })
        })
    }

    /// The byte size of each parameter as the driver reports it. `None` on
    /// drivers before CUDA 12.4, which cannot say, and where the number of
    /// parameters is unknown (a driver before 13.2 with a module image that
    /// does not declare them readably); launches are then unchecked.
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

/// Raise `granted` to `bytes` through `set` (which tells the driver), unless
/// it already allows that much.
///
/// Check, set and record happen under `lock`: two threads raising at once
/// (to 64 KiB and to 100 KiB, say) must not leave the driver at the smaller
/// value while `granted` records the larger, or every later launch of the
/// larger size would skip the raise and fail. `granted` is stored only after
/// the driver accepted the value, so a reader that skips the raise on its
/// word never launches past what the driver allows.
fn raise_to(granted: &AtomicU32, lock: &Mutex<()>, bytes: u32, set: impl FnOnce(u32) -> Result<()>) -> Result<()> {
    let _held = lock.lock().unwrap_or_else(|p| p.into_inner());
    if bytes <= granted.load(Ordering::Acquire) {
        return Ok(());
    }
    set(bytes)?;
    granted.store(bytes, Ordering::Release);
    Ok(())
}

impl RawKernel for CudaKernel {
    fn name(&self) -> &str {
        &self.name
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;
    use std::time::Duration;

    /// Threads raise one limit at once, each to its own size, through a fake
    /// driver attribute whose setter is slow enough that they overlap; the
    /// smaller sizes take longest, so an unserialized raise would leave the
    /// attribute at a small size while the recorded limit says the largest.
    #[test]
    fn racing_raises_leave_the_driver_at_the_largest() {
        const DEFAULT: u32 = 48 << 10;
        let sizes: Vec<u32> = (0..8).map(|i| (64 + 8 * i) << 10).collect();
        let largest = *sizes.iter().max().unwrap();
        for round in 0..20 {
            let granted = AtomicU32::new(DEFAULT);
            let lock = Mutex::new(());
            let driver = AtomicU32::new(DEFAULT);
            let sets = AtomicU32::new(0);
            let barrier = Barrier::new(sizes.len());
            std::thread::scope(|s| {
                for &bytes in &sizes {
                    let (granted, lock, driver, sets, barrier) = (&granted, &lock, &driver, &sets, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        if bytes > granted.load(Ordering::Relaxed) {
                            raise_to(granted, lock, bytes, |b| {
                                std::thread::sleep(Duration::from_micros(u64::from(largest - b) / 64 + 50));
                                driver.store(b, Ordering::SeqCst);
                                sets.fetch_add(1, Ordering::Relaxed);
                                Ok(())
                            })
                            .unwrap();
                        }
                    });
                }
            });
            let (driver, granted) = (driver.into_inner(), granted.into_inner());
            assert_eq!(granted, largest, "round {round}");
            assert_eq!(driver, largest, "round {round}: the driver was left below the recorded limit");
            assert!(sets.into_inner() <= sizes.len() as u32);
        }
    }

    #[test]
    fn a_failed_raise_records_nothing() {
        let (granted, lock) = (AtomicU32::new(48 << 10), Mutex::new(()));
        let refuse = |_| Err(Error::InvalidLaunch { kernel: "k".into(), reason: "refused".into() });
        assert!(raise_to(&granted, &lock, 100 << 10, refuse).is_err());
        assert_eq!(granted.load(Ordering::Relaxed), 48 << 10);
        // At or below the recorded limit the driver is not asked.
        raise_to(&granted, &lock, 40 << 10, |_| panic!("asked the driver to lower the limit")).unwrap();
        raise_to(&granted, &lock, 48 << 10, |_| panic!("asked the driver again")).unwrap();
    }
}
