//! Opened devices: the primary context and what hangs off it.

use std::path::PathBuf;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::CudaContext;
use kiln_core::{CachePolicy, CacheStats, DeviceInfo, MemoryInfo, Priority, Program, RawDevice, Result};

use crate::compile::Compiler;
use crate::error::before_open;
use crate::memory::CudaHostBuffer;
use crate::state::DeviceState;
use crate::{ffi, info, Cuda, CudaEvent, CudaKernel, CudaStream};

/// An opened CUDA device: its primary context, with cudarc's automatic
/// per-buffer event tracking turned off (data is ordered between streams by
/// the user's events; buffers track their own uses on other streams), and
/// memory freed with `cuMemFreeAsync` kept in the device's pool.
pub struct CudaDevice {
    state: Arc<DeviceState>,
    info: DeviceInfo,
    priority_range: (i32, i32),
    compiler: Compiler,
    /// cuBLAS: its handle, destroyed with the device.
    blas: crate::blas::Blas,
    /// cuFFT: its plans, destroyed with the device.
    fft: crate::fft::Fft,
    /// cuSOLVER: its handle, destroyed with the device.
    solver: crate::solver::Solver,
}

impl CudaDevice {
    /// The device's shared state (its context, faults, allocator).
    pub(crate) fn state(&self) -> &Arc<DeviceState> {
        &self.state
    }

    pub(crate) fn open(ordinal: usize) -> Result<Self> {
        let info = info::query(ordinal)?;
        // A faulted primary context cannot be used again in this process.
        if let Some(cause) = crate::state::earlier_fault(ordinal) {
            return Err(kiln_core::Error::DeviceLost { device: info.name, cause });
        }
        let dev = info::device_handle(ordinal)?;
        let ctx = CudaContext::new(ordinal).map_err(|e| before_open("cuDevicePrimaryCtxRetain", e))?;
        // SAFETY: kiln never hands out cudarc slices. Its own buffers record
        // their uses on streams other than their own and are freed only after
        // them (`memory.rs`); the order of their data between streams is the
        // user's, through events, as it must be once tracking is off.
        unsafe { ctx.disable_event_tracking() };
        let pooled = info::has_memory_pools(dev);
        let state = Arc::new(DeviceState::new(ordinal, info.name.clone(), ctx, pooled));
        state.check_usable()?;
        if pooled {
            crate::pool_policy::set_policy(&state, CachePolicy::default())?;
        }
        state.bind("cuCtxGetStreamPriorityRange")?;
        let priority_range =
            ffi::stream_priority_range().map_err(|e| state.fail("cuCtxGetStreamPriorityRange", e, 0))?;
        let compiler = Compiler::new(info.compute_capability.unwrap_or((0, 0)));
        let (major, minor) = info.compute_capability.unwrap_or((0, 0));
        let blas = crate::blas::Blas::new(state.clone(), major * 10 + minor);
        let fft = crate::fft::Fft::new(state.clone());
        let solver = crate::solver::Solver::new(state.clone());
        Ok(CudaDevice { state, info, priority_range, compiler, blas, fft, solver })
    }

    /// The device's stream priorities as CUDA numbers, (least, greatest):
    /// (0, -5) on the H100. Lower numbers run first; kiln's `Priority` levels
    /// are clamped into this range (see [`clamp_priority`](crate::clamp_priority)).
    pub fn stream_priority_range(&self) -> (i32, i32) {
        self.priority_range
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.state.ordinal
    }

    /// cudarc's context, for interop with code written against cudarc directly.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.state.ctx
    }

    /// NVRTC's (major, minor) version, or `None` when NVRTC is not installed.
    pub fn nvrtc_version(&self) -> Option<(i32, i32)> {
        self.compiler.nvrtc_version()
    }

    /// Where compiled modules are cached on disk, or `None` when the cache is off.
    /// Initially from the environment (`KILN_CACHE_DIR`, `KILN_CACHE=0`).
    pub fn disk_cache_dir(&self) -> Option<PathBuf> {
        self.compiler.cache_dir()
    }

    /// Move the disk cache of this device to `dir`, or turn it off with `None`.
    pub fn set_disk_cache_dir(&self, dir: Option<PathBuf>) {
        self.compiler.set_cache_dir(dir)
    }

    /// Whether a device fault has made the device unusable.
    pub fn is_lost(&self) -> bool {
        self.state.is_lost()
    }
}

impl RawDevice for CudaDevice {
    type B = Cuda;

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn memory(&self) -> Result<MemoryInfo> {
        self.state.check_usable()?;
        self.state.bind("cuMemGetInfo")?;
        let (free, total) = ffi::mem_info().map_err(|e| self.state.fail("cuMemGetInfo", e, 0))?;
        // Every kiln allocation comes from the default pool when the device has pools.
        let pool = if self.state.pooled {
            let usage = ffi::pool_usage(self.state.ctx.cu_device());
            Some(usage.map_err(|e| self.state.fail("cuMemPoolGetAttribute(used, reserved)", e, 0))?)
        } else {
            None
        };
        Ok(MemoryInfo {
            free: free as u64,
            total: total as u64,
            allocated: pool.map(|p| p.0),
            reserved: pool.map(|p| p.1),
        })
    }

    /// `cuMemPoolTrimTo` on the default pool kiln allocates from, to its
    /// bytes in use and `keep` more, and a reset of its high watermark;
    /// nothing where the device has no pools (every free then returns its
    /// memory).
    fn trim_memory(&self, keep: u64) -> Result<()> {
        crate::pool_policy::trim(&self.state, keep)
    }

    /// The budget becomes the default pool's release threshold; the peak
    /// bound is applied at each device synchronize (see `pool_policy.rs`).
    fn set_cache_policy(&self, policy: CachePolicy) -> Result<()> {
        crate::pool_policy::set_policy(&self.state, policy)
    }

    fn cache_stats(&self) -> Result<CacheStats> {
        crate::pool_policy::stats(&self.state)
    }

    fn create_stream(&self, priority: Priority) -> Result<CudaStream> {
        CudaStream::new(self.state.clone(), priority, self.priority_range)
    }

    fn create_event(&self) -> Result<CudaEvent> {
        self.state.check_usable()?;
        let event = self
            .state
            .ctx
            .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(|e| self.state.fail("cuEventCreate", e, 0))?;
        Ok(CudaEvent::new(event, self.state.clone()))
    }

    fn alloc_host(&self, bytes: usize) -> Result<CudaHostBuffer> {
        self.state.check_usable()?;
        if bytes == 0 {
            return Ok(CudaHostBuffer::new(NonNull::<u64>::dangling().cast(), 0, self.state.clone()));
        }
        self.state.bind("cuMemHostAlloc")?;
        let ptr = ffi::alloc_pinned(bytes).map_err(|e| {
            if crate::error::is_out_of_memory(e) {
                self.state.out_of_memory(&format!("page-locked host buffer of {bytes} bytes"), bytes)
            } else {
                self.state.fail("cuMemHostAlloc", e, 0)
            }
        })?;
        match NonNull::new(ptr) {
            Some(ptr) => Ok(CudaHostBuffer::new(ptr, bytes, self.state.clone())),
            None => Err(self.state.out_of_memory(&format!("page-locked host buffer of {bytes} bytes"), bytes)),
        }
    }

    fn compile(&self, program: &Program) -> Result<CudaKernel> {
        self.compiler.compile(&self.state, program, self.info.limits.max_shared_mem_per_block)
    }

    fn synchronize(&self) -> Result<()> {
        self.state.check_usable()?;
        self.state.bind("cuCtxSynchronize")?;
        let kernel = self.state.last_kernel.load(Ordering::Relaxed);
        self.state.ctx.synchronize().map_err(|e| self.state.fail("cuCtxSynchronize", e, kernel))?;
        self.state.take_deferred()?;
        // Every stream-ordered free has happened: the pool's unused memory is all releasable.
        crate::pool_policy::enforce(&self.state)
    }

    /// cuBLAS, where kiln-cuda is built with its `cublas` feature and the library loads.
    fn vendor_gemm(&self) -> Option<kiln_core::VendorGemm> {
        self.blas.offer()
    }

    unsafe fn gemm(&self, stream: &CudaStream, call: &kiln_core::Gemm<'_, Cuda>) -> Result<()> {
        // SAFETY: the caller keeps this method's contract, which `Blas::gemm` shares.
        unsafe { self.blas.gemm(stream, call) }
    }

    /// cuFFT, where kiln-cuda is built with its `cufft` feature and the library loads.
    fn vendor_fft(&self) -> Option<kiln_core::VendorFft> {
        self.fft.offer()
    }

    fn fft_work_size(&self, layout: &kiln_core::FftLayout) -> Result<usize> {
        self.fft.work_size(layout)
    }

    /// cuFFT's complex-to-real transforms overwrite their input, which
    /// callers that still need it copy first (kiln-kernels' `fft` does).
    unsafe fn fft(&self, stream: &CudaStream, call: &kiln_core::FftCall<'_, Cuda>) -> Result<()> {
        // SAFETY: the caller keeps this method's contract, which `Fft::fft`
        // shares (a complex-to-real call's input is the caller's to copy).
        unsafe { self.fft.fft(stream, call) }
    }

    /// cuSOLVER, where kiln-cuda is built with its `cusolver` feature and the library loads.
    fn vendor_solver(&self) -> Option<kiln_core::VendorSolver> {
        self.solver.offer()
    }

    fn solver_work_size(&self, layout: &kiln_core::SolverLayout) -> Result<usize> {
        self.solver.work_size(layout)
    }

    unsafe fn solver(&self, stream: &CudaStream, call: &kiln_core::SolverCall<'_, Cuda>) -> Result<()> {
        // SAFETY: the caller keeps this method's contract, which `Solver::solve` shares.
        unsafe { self.solver.solve(stream, call) }
    }

    unsafe fn instantiate_graph(
        &self,
        steps: &[kiln_core::GraphStep<'_, Cuda>],
        lanes: usize,
    ) -> Result<Option<Box<dyn kiln_core::RawGraph<Cuda>>>> {
        // SAFETY: the caller keeps this method's contract, which `instantiate` shares.
        unsafe { crate::graph::instantiate(self, steps, lanes) }.map(Some)
    }
}
