//! Streams: non-blocking CUDA streams with a priority, carrying copies,
//! fills, launches and events.
//!
//! Every operation that touches a device buffer allocated on another stream
//! records that use with the buffer (see `memory.rs`), so its memory outlives
//! the work; a buffer used on its own stream costs one pointer compare.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use cudarc::driver::CudaStream as DriverStream;
use kiln_core::{LaunchConfig, Priority, RawArg, RawStream, Result};

use crate::ffi;
use crate::memory::{CudaBuffer, CudaHostBuffer, Progress};
use crate::state::DeviceState;
use crate::{Cuda, CudaEvent, CudaKernel};

/// A non-blocking CUDA stream (`CU_STREAM_NON_BLOCKING`: no implicit order
/// with the legacy default stream). Work is ordered against other streams
/// only by events.
pub struct CudaStream {
    pub(crate) stream: Arc<DriverStream>,
    pub(crate) state: Arc<DeviceState>,
    priority: Priority,
    cuda_priority: i32,
    /// The kernel launched last on this stream (an id of `DeviceState`), named
    /// when a fault surfaces here.
    pub(crate) last_kernel: AtomicU32,
    /// Completed synchronizes, shared with the buffers allocated here.
    pub(crate) progress: Arc<Progress>,
    /// A private stream capturing a graph: what is enqueued here is
    /// recorded by the driver, not run, and buffers need no use recorded.
    pub(crate) captures: bool,
}

/// The CUDA priority for `wanted` within `(least, greatest)` (numerically
/// `least >= greatest`: lower numbers run first), and the kiln priority it
/// amounts to. `Low` is the least priority, `High` the greatest, `Normal` the
/// middle, rounded towards least; where two levels coincide (a range of fewer
/// than three values) the stream reports the level it really got, preferring `Normal`.
///
/// # Examples
/// ```
/// use kiln_core::Priority;
/// use kiln_cuda::clamp_priority;
/// assert_eq!(clamp_priority(Priority::High, (0, -5)), (Priority::High, -5));
/// assert_eq!(clamp_priority(Priority::Normal, (0, -5)), (Priority::Normal, -2));
/// assert_eq!(clamp_priority(Priority::Low, (0, -5)), (Priority::Low, 0));
/// assert_eq!(clamp_priority(Priority::High, (0, 0)), (Priority::Normal, 0));
/// ```
pub fn clamp_priority(wanted: Priority, (least, greatest): (i32, i32)) -> (Priority, i32) {
    let (lo, hi) = (least.max(greatest), least.min(greatest));
    let mid = lo - (lo - hi) / 2;
    let value = match wanted {
        Priority::Low => lo,
        Priority::Normal => mid,
        Priority::High => hi,
    };
    let got = if value == mid {
        Priority::Normal
    } else if value == lo {
        Priority::Low
    } else {
        Priority::High
    };
    (got, value)
}

impl CudaStream {
    /// A private stream for capturing a graph (see `graph.rs`).
    pub(crate) fn capturing(state: Arc<DeviceState>) -> Result<Self> {
        let mut stream = Self::new(state, Priority::Normal, (0, 0))?;
        stream.captures = true;
        Ok(stream)
    }

    pub(crate) fn new(state: Arc<DeviceState>, wanted: Priority, range: (i32, i32)) -> Result<Self> {
        state.check_usable()?;
        let (priority, cuda_priority) = clamp_priority(wanted, range);
        state.bind("cuStreamCreateWithPriority")?;
        let stream = state
            .ctx
            .new_stream_with_priority(cuda_priority)
            .map_err(|e| state.fail("cuStreamCreateWithPriority", e, 0))?;
        Ok(CudaStream {
            stream,
            state,
            priority,
            cuda_priority,
            last_kernel: AtomicU32::new(0),
            progress: Arc::default(),
            captures: false,
        })
    }

    /// The CUDA priority number the stream was created with (lower runs first).
    pub fn cuda_priority(&self) -> i32 {
        self.cuda_priority
    }

    /// cudarc's stream, for interop with code written against cudarc directly.
    pub fn driver_stream(&self) -> &Arc<DriverStream> {
        &self.stream
    }

    /// Map a failed call on this stream, naming the kernel last launched here.
    pub(crate) fn fail(&self, call: &str, e: cudarc::driver::DriverError) -> kiln_core::Error {
        self.state.fail(call, e, self.last_kernel.load(Ordering::Relaxed))
    }

    pub(crate) fn enter(&self, call: &str) -> Result<()> {
        self.state.check_usable()?;
        self.state.bind(call)
    }

    /// Wait for everything enqueued so far, without reporting the errors kept
    /// from `Drop` (those belong to an explicit synchronize).
    fn sync(&self) -> Result<()> {
        let ticket = self.progress.begin();
        self.stream.synchronize().map_err(|e| self.fail("cuStreamSynchronize", e))?;
        self.progress.end(ticket);
        Ok(())
    }

    /// Run `op`, which enqueues work on this stream that uses `buffers`,
    /// recording the uses of buffers allocated on other streams: before it,
    /// this stream is ordered after their allocation; after it (even if it
    /// failed, since part of it may have been enqueued), their event for this
    /// stream is recorded. `op`'s error comes first. When every buffer is this
    /// stream's own, this is a pointer compare per buffer and `op()`.
    ///
    /// Every enqueue that touches device buffers goes through this (or, for
    /// launches, `launch.rs`'s equivalent); the context must be current.
    #[inline]
    pub(crate) fn tracked<const N: usize>(
        &self,
        buffers: [&CudaBuffer; N],
        op: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let foreign = buffers.map(|b| b.is_foreign(self));
        if !foreign.contains(&true) {
            return op();
        }
        for (b, _) in buffers.iter().zip(foreign).filter(|(_, f)| *f) {
            b.before_foreign_use(self)?;
        }
        let done = op();
        let mut recorded = Ok(());
        for (b, _) in buffers.iter().zip(foreign).filter(|(_, f)| *f) {
            let r = b.after_foreign_use(self);
            recorded = recorded.and(r);
        }
        done.and(recorded)
    }
}

impl RawStream for CudaStream {
    type B = Cuda;

    fn priority(&self) -> Priority {
        self.priority
    }

    fn alloc(&self, bytes: usize) -> Result<CudaBuffer> {
        self.state.check_usable()?;
        if bytes == 0 {
            return Ok(CudaBuffer::new(0, 0, self));
        }
        self.state.bind("cuMemAllocAsync")?;
        let mut allocated = ffi::alloc_device(&self.stream, bytes, self.state.pooled);
        if self.state.pooled && allocated.is_err_and(crate::error::is_out_of_memory) {
            // The pool keeps freed memory for reuse; hand it back and try once
            // more before reporting, and so that a failed request leaves
            // nothing held that other processes could use.
            let _ = ffi::trim_pool(self.state.ctx.cu_device(), 0);
            allocated = ffi::alloc_device(&self.stream, bytes, self.state.pooled);
            if allocated.is_err() {
                let _ = ffi::trim_pool(self.state.ctx.cu_device(), 0);
            }
        }
        let ptr = allocated.map_err(|e| {
            if crate::error::is_out_of_memory(e) {
                self.state.out_of_memory(&format!("device buffer of {bytes} bytes"), bytes)
            } else {
                self.fail("cuMemAllocAsync", e)
            }
        })?;
        Ok(CudaBuffer::new(ptr, bytes, self))
    }

    /// Blocks until the data is on the device, as `cudaMemcpy` from pageable
    /// memory does: a buffer filled this way (`Device::upload`) is then ready
    /// for every stream, not only this one. Copies that must not block go
    /// through page-locked memory (`write_async`).
    ///
    /// Errors kept from earlier `Drop`s are left for the next explicit
    /// synchronize: this copy's own result is what it reports.
    unsafe fn write(&self, dst: &CudaBuffer, dst_offset: usize, src: &[u8]) -> Result<()> {
        self.enter("cuMemcpyHtoDAsync")?;
        let copied = self.tracked([dst], || {
            // SAFETY: the range is inside `dst` (caller's contract); from pageable
            // memory the driver stages `src` before returning, so it may be reused.
            unsafe { ffi::copy_htod(dst.ptr + dst_offset as u64, src.as_ptr(), src.len(), &self.stream) }
                .map_err(|e| self.fail("cuMemcpyHtoDAsync", e))
        });
        let synced = self.sync();
        copied.and(synced)
    }

    /// Errors kept from earlier `Drop`s are left for the next explicit
    /// synchronize: the data read is returned.
    unsafe fn read(&self, src: &CudaBuffer, src_offset: usize, dst: &mut [u8]) -> Result<()> {
        self.enter("cuMemcpyDtoHAsync")?;
        let copied = self.tracked([src], || {
            // SAFETY: the range is inside `src` (caller's contract); `dst` is
            // borrowed exclusively until the synchronize below has returned.
            unsafe { ffi::copy_dtoh(dst.as_mut_ptr(), src.ptr + src_offset as u64, dst.len(), &self.stream) }
                .map_err(|e| self.fail("cuMemcpyDtoHAsync", e))
        });
        let synced = self.sync();
        copied.and(synced)
    }

    unsafe fn write_async(
        &self,
        dst: &CudaBuffer,
        dst_offset: usize,
        src: &CudaHostBuffer,
        src_offset: usize,
        bytes: usize,
    ) -> Result<()> {
        self.enter("cuMemcpyHtoDAsync")?;
        self.tracked([dst], || {
            // SAFETY: both ranges are in bounds and `src` stays untouched until the
            // copy completes (caller's contract); `src` is page-locked.
            unsafe { ffi::copy_htod(dst.ptr + dst_offset as u64, src.as_ptr().add(src_offset), bytes, &self.stream) }
                .map_err(|e| self.fail("cuMemcpyHtoDAsync", e))
        })
    }

    unsafe fn read_async(
        &self,
        src: &CudaBuffer,
        src_offset: usize,
        dst: &CudaHostBuffer,
        dst_offset: usize,
        bytes: usize,
    ) -> Result<()> {
        self.enter("cuMemcpyDtoHAsync")?;
        self.tracked([src], || {
            // SAFETY: both ranges are in bounds and `dst` stays untouched until the
            // copy completes (caller's contract); `dst` is page-locked.
            unsafe { ffi::copy_dtoh(dst.as_ptr().add(dst_offset), src.ptr + src_offset as u64, bytes, &self.stream) }
                .map_err(|e| self.fail("cuMemcpyDtoHAsync", e))
        })
    }

    unsafe fn copy(
        &self,
        src: &CudaBuffer,
        src_offset: usize,
        dst: &CudaBuffer,
        dst_offset: usize,
        bytes: usize,
    ) -> Result<()> {
        self.enter("cuMemcpyDtoDAsync")?;
        self.tracked([src, dst], || {
            // SAFETY: both ranges are in bounds and do not overlap (caller's contract).
            unsafe { ffi::copy_dtod(dst.ptr + dst_offset as u64, src.ptr + src_offset as u64, bytes, &self.stream) }
                .map_err(|e| self.fail("cuMemcpyDtoDAsync", e))
        })
    }

    /// `cuMemcpyPeerAsync`: peer to peer where the devices allow it (this
    /// device is granted access to the source's memory at the first copy
    /// between them), staged by the driver otherwise; `src`'s use here is
    /// recorded with it, as any buffer's use on a stream other than its own.
    unsafe fn copy_peer(
        &self,
        src: &CudaBuffer,
        src_offset: usize,
        dst: &CudaBuffer,
        dst_offset: usize,
        bytes: usize,
    ) -> Result<bool> {
        self.enter("cuMemcpyPeerAsync")?;
        src.state().check_usable()?;
        if src.state().ordinal != self.state.ordinal {
            self.state.reach_peer(src.state());
        }
        self.tracked([src, dst], || {
            // SAFETY: both ranges are in bounds (caller's contract), each in a
            // live allocation of its own device's context.
            unsafe {
                ffi::copy_peer(
                    dst.ptr + dst_offset as u64,
                    &self.state.ctx,
                    src.ptr + src_offset as u64,
                    &src.state().ctx,
                    bytes,
                    &self.stream,
                )
            }
            .map_err(|e| self.fail("cuMemcpyPeerAsync", e))
        })?;
        Ok(true)
    }

    /// CUDA events order streams of any device in the process.
    fn wait_peer(&self, event: &CudaEvent) -> Result<bool> {
        self.wait(event)?;
        Ok(true)
    }

    unsafe fn fill(&self, dst: &CudaBuffer, offset: usize, bytes: usize, pattern: &[u8]) -> Result<()> {
        if pattern.len() == 16 && pattern[..8] == pattern[8..] {
            // SAFETY: 8 divides whatever 16 divides; the rest is the caller's contract.
            return unsafe { self.fill(dst, offset, bytes, &pattern[..8]) };
        }
        if pattern.len() == 8 && pattern[..4] != pattern[4..] {
            self.enter("cuLaunchKernel (8-byte fill)")?;
            let func = self.state.fill64()?;
            let value = u64::from_le_bytes(pattern.try_into().unwrap_or_default());
            return self.tracked([dst], || {
                // SAFETY: in bounds and 8-byte aligned (caller's contract; allocations
                // are 256-byte aligned); the kernel writes that range only.
                unsafe { ffi::fill64(func, dst.ptr + offset as u64, bytes / 8, value, &self.stream) }
                    .map_err(|e| self.fail("cuLaunchKernel (8-byte fill)", e))
            });
        }
        self.enter("cuMemsetAsync")?;
        self.tracked([dst], || {
            // SAFETY: in bounds, and the pattern size divides offset and length
            // (caller's contract); allocations are 256-byte aligned, so the address is aligned too.
            unsafe { ffi::fill(dst.ptr + offset as u64, bytes, pattern, &self.stream) }
                .map_err(|e| self.fail("cuMemsetAsync", e))
        })
    }

    unsafe fn launch(&self, kernel: &CudaKernel, config: &LaunchConfig, args: &[RawArg<'_, Cuda>]) -> Result<()> {
        // SAFETY: the caller's contract is the one `launch::launch` asks for.
        unsafe { crate::launch::launch(self, kernel, config, args) }
    }

    fn record(&self, event: &CudaEvent) -> Result<()> {
        self.enter("cuEventRecord")?;
        event.event.record(&self.stream).map_err(|e| self.fail("cuEventRecord", e))?;
        event.kernel.store(self.last_kernel.load(Ordering::Relaxed), Ordering::Relaxed);
        Ok(())
    }

    fn wait(&self, event: &CudaEvent) -> Result<()> {
        self.enter("cuStreamWaitEvent")?;
        self.stream.wait(&event.event).map_err(|e| self.fail("cuStreamWaitEvent", e))
    }

    fn synchronize(&self) -> Result<()> {
        self.enter("cuStreamSynchronize")?;
        self.sync()?;
        self.state.take_deferred()
    }
}
