//! Device allocations, freed in stream order once every stream that used
//! them is done, and page-locked host memory.
//!
//! A buffer belongs to the stream it was allocated on (its *own* stream), but
//! every stream of the device may use it. Uses on the own stream need nothing:
//! the free is enqueued there, behind them. A use on any other stream (a
//! *foreign* use) is recorded: the first one on a stream orders that stream
//! after the allocation (memory from `cuMemAllocAsync` is valid elsewhere only
//! once the allocation has happened in stream order), and each one re-records
//! an event the buffer keeps for that stream. Dropping the buffer makes its own
//! stream wait for those events before `cuMemFreeAsync`, so the pool hands the
//! memory out again only after every stream that used it has finished with it.
//! The same-stream test is one pointer compare, so single-stream work pays
//! nothing: no lock, no event.

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent as DriverEvent, CudaStream as DriverStream};
use kiln_core::{RawBuffer, RawHostBuffer, Result};

use crate::ffi::{self, DevicePtr};
use crate::state::DeviceState;
use crate::CudaStream;

/// A buffer used on this many streams forgets the streams whose uses have
/// completed when a new one is added, so a long-lived buffer does not keep
/// every short-lived stream it met alive.
const PRUNE_AT: usize = 8;

/// How far a stream is known to have completed, so that a buffer can tell
/// whether its allocation has happened without asking the device: each
/// synchronize of the stream takes a ticket before it waits and publishes it
/// once the wait has returned.
#[derive(Default)]
pub(crate) struct Progress {
    /// Tickets handed out (synchronizes begun).
    begun: AtomicU64,
    /// The highest ticket whose synchronize has returned.
    done: AtomicU64,
}

impl Progress {
    /// A mark for work enqueued before this call: it is complete once
    /// [`passed`](Self::passed) says so.
    pub(crate) fn mark(&self) -> u64 {
        self.begun.load(Ordering::SeqCst)
    }

    /// Whether a synchronize begun after `mark` was taken has returned. Such a
    /// synchronize took a ticket above `mark`, after the work was enqueued.
    pub(crate) fn passed(&self, mark: u64) -> bool {
        self.done.load(Ordering::SeqCst) > mark
    }

    /// A ticket for a synchronize about to begin.
    pub(crate) fn begin(&self) -> u64 {
        self.begun.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The synchronize holding `ticket` has returned.
    pub(crate) fn end(&self, ticket: u64) {
        self.done.fetch_max(ticket, Ordering::SeqCst);
    }
}

/// The stream a buffer was allocated on, and how to tell that its
/// allocation has happened.
struct Home {
    stream: Arc<DriverStream>,
    progress: Arc<Progress>,
    /// `progress.mark()` right after the allocation was enqueued; `None` when
    /// the allocation was complete on return (`cuMemAlloc`).
    mark: Option<u64>,
}

/// Uses of a buffer on streams other than its own.
#[derive(Default)]
struct Foreign {
    uses: Vec<ForeignUse>,
    /// A use was enqueued that could be neither recorded nor waited for: the
    /// memory is never released (a leak, not a use after free).
    untracked: bool,
}

/// One foreign stream: it is ordered after the allocation, and `event` was
/// recorded on it after the latest use there (a later record covers the
/// earlier uses, by stream order). An event never recorded (the use failed
/// before it was enqueued) is complete, so waiting on it costs nothing.
struct ForeignUse {
    stream: Arc<DriverStream>,
    event: DriverEvent,
}

fn lock(m: &Mutex<Foreign>) -> MutexGuard<'_, Foreign> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Device memory: an allocation made on a stream and freed on that stream
/// when dropped (`cuMemFreeAsync`), after the work enqueued before the drop on
/// that stream and after every use recorded on other streams (see the module
/// docs). A failed free is kept and reported at the next synchronize.
pub struct CudaBuffer {
    pub(crate) ptr: DevicePtr,
    len: usize,
    home: Home,
    state: Arc<DeviceState>,
    foreign: Mutex<Foreign>,
}

impl std::fmt::Debug for CudaBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CudaBuffer({} bytes at {:#x} on {})", self.len, self.ptr, self.state.name)
    }
}

impl CudaBuffer {
    /// Wrap an allocation of `len` bytes just enqueued on `stream` (a null
    /// pointer when `len` is 0).
    pub(crate) fn new(ptr: DevicePtr, len: usize, stream: &CudaStream) -> Self {
        let mark = (stream.state.pooled && len != 0).then(|| stream.progress.mark());
        CudaBuffer {
            ptr,
            len,
            home: Home { stream: stream.stream.clone(), progress: stream.progress.clone(), mark },
            state: stream.state.clone(),
            foreign: Mutex::new(Foreign::default()),
        }
    }

    /// The device address of the first byte.
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// The state of the device this memory belongs to.
    pub(crate) fn state(&self) -> &Arc<DeviceState> {
        &self.state
    }

    /// Whether using this buffer on `stream` must be recorded: the stream is
    /// not the buffer's own, there is memory to protect, and the stream runs
    /// its work (a stream capturing a graph enqueues nothing: the graph's
    /// launches record their uses). One pointer compare on the common path.
    #[inline]
    pub(crate) fn is_foreign(&self, stream: &CudaStream) -> bool {
        !Arc::ptr_eq(&self.home.stream, &stream.stream) && self.len != 0 && !stream.captures
    }

    /// Prepare a use on `on`, a foreign stream, to be enqueued next: on the
    /// first use there, order `on` after the allocation (unless it is known
    /// complete) and make the event that [`after_foreign_use`](Self::after_foreign_use)
    /// records. On error nothing was enqueued that uses the memory.
    ///
    /// The context must be current.
    #[cold]
    pub(crate) fn before_foreign_use(&self, on: &CudaStream) -> Result<()> {
        let mut foreign = lock(&self.foreign);
        if foreign.uses.iter().any(|u| Arc::ptr_eq(&u.stream, &on.stream)) {
            return Ok(());
        }
        if foreign.uses.len() >= PRUNE_AT {
            // A complete event's uses are over; an error keeps the entry.
            foreign.uses.retain(|u| !matches!(u.event.try_is_complete(), Ok(true)));
        }
        let event = new_event(on)?;
        let allocated = match self.home.mark {
            None => true,
            Some(mark) => self.home.progress.passed(mark),
        };
        if !allocated {
            // Under the lock, so that a use on `on` from another thread, which
            // finds the entry below, is enqueued after this wait. An event is
            // recorded on a stream of its own context: the home stream's
            // (which `on`'s is not, for a stream of another device).
            let made = self.state.ctx.new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING));
            let allocation = made.map_err(|e| on.fail("cuEventCreate (buffer allocation)", e))?;
            allocation.record(&self.home.stream).map_err(|e| on.fail("cuEventRecord (buffer allocation)", e))?;
            on.stream.wait(&allocation).map_err(|e| on.fail("cuStreamWaitEvent (buffer allocation)", e))?;
        }
        foreign.uses.push(ForeignUse { stream: on.stream.clone(), event });
        Ok(())
    }

    /// Record the use just enqueued on `on`, a foreign stream (after
    /// [`before_foreign_use`](Self::before_foreign_use) succeeded there, whether
    /// or not the enqueue did). If the event cannot be recorded, `on` is
    /// synchronized instead, so the use is over; if that fails too, the
    /// memory is never released. Either way the failure is returned.
    ///
    /// The context must be current.
    #[cold]
    pub(crate) fn after_foreign_use(&self, on: &CudaStream) -> Result<()> {
        let mut foreign = lock(&self.foreign);
        let recorded = match foreign.uses.iter().position(|u| Arc::ptr_eq(&u.stream, &on.stream)) {
            Some(i) => foreign.uses[i].event.record(&on.stream).map_err(|e| on.fail("cuEventRecord (buffer use)", e)),
            // Another thread pruned the entry: its uses had completed, not this one.
            None => new_event(on).and_then(|event| {
                event.record(&on.stream).map_err(|e| on.fail("cuEventRecord (buffer use)", e))?;
                foreign.uses.push(ForeignUse { stream: on.stream.clone(), event });
                Ok(())
            }),
        };
        if recorded.is_err() && on.stream.synchronize().is_err() {
            foreign.untracked = true;
        }
        recorded
    }
}

/// An event to record uses on `on` with: of `on`'s context, which for a
/// stream of another device is not the buffer's.
fn new_event(on: &CudaStream) -> Result<DriverEvent> {
    on.state
        .ctx
        .new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
        .map_err(|e| on.fail("cuEventCreate (buffer use)", e))
}

impl RawBuffer for CudaBuffer {
    fn len(&self) -> usize {
        self.len
    }
}

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        // A faulted context refuses every call; its memory goes with it.
        if self.len == 0 || self.state.is_lost() {
            return;
        }
        let len = self.len;
        let what = |doing: &str| format!("{doing} a device buffer of {len} bytes");
        if let Err(e) = self.state.ctx.bind_to_thread() {
            self.state.defer(&what("making the context current to free"), e);
            return;
        }
        let foreign = self.foreign.get_mut().unwrap_or_else(|p| p.into_inner());
        if foreign.untracked {
            // A use elsewhere may still be pending and nothing can say when it
            // ends: keep the memory. The failure was returned by that use.
            return;
        }
        for u in &foreign.uses {
            // Pooled memory: the own stream waits on the device and the free
            // below is enqueued behind the wait. Otherwise (or should that
            // wait fail) the host waits, as cuMemFree does not.
            let queued = self.state.pooled
                && match self.home.stream.wait(&u.event) {
                    Ok(()) => true,
                    Err(e) => {
                        self.state.defer(&what("cuStreamWaitEvent (waited on the host instead) before freeing"), e);
                        false
                    }
                };
            if !queued {
                if let Err(e) = u.event.synchronize() {
                    self.state.defer(&what("waiting for a use on another stream, so not freeing"), e);
                    return;
                }
            }
        }
        if !self.state.pooled {
            // cuMemFree does not wait for pending work that uses the memory.
            if let Err(e) = self.home.stream.synchronize() {
                self.state.defer(&what("waiting to free"), e);
                return;
            }
        }
        // SAFETY: allocated by `ffi::alloc_device` with the same `pooled`, freed
        // only here, on the stream it was allocated on: after its work there
        // and, by the waits above, after every use recorded on other streams.
        if let Err(e) = unsafe { ffi::free_device(self.ptr, &self.home.stream, self.state.pooled) } {
            self.state.defer(&what("cuMemFreeAsync of"), e);
        }
    }
}

/// Page-locked host memory (`cuMemHostAlloc`, not write-combined), which
/// copies reach at full PCIe speed and without blocking the host.
pub struct CudaHostBuffer {
    ptr: NonNull<u8>,
    len: usize,
    state: Arc<DeviceState>,
}

// SAFETY: the memory is a plain allocation owned by this value; concurrent
// access is governed by the RawHostBuffer and RawStream safety contracts.
unsafe impl Send for CudaHostBuffer {}
// SAFETY: as above.
unsafe impl Sync for CudaHostBuffer {}

impl CudaHostBuffer {
    /// Wrap `len` bytes at `ptr` (dangling when `len` is 0).
    pub(crate) fn new(ptr: NonNull<u8>, len: usize, state: Arc<DeviceState>) -> Self {
        CudaHostBuffer { ptr, len, state }
    }

    /// The host address of the first byte.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl RawHostBuffer for CudaHostBuffer {
    fn len(&self) -> usize {
        self.len
    }

    unsafe fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes were allocated at `ptr` (or `len` is 0 and the
        // pointer is dangling but aligned); the caller guarantees no copy writes them now.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    unsafe fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` plus the caller's promise make the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for CudaHostBuffer {
    fn drop(&mut self) {
        if self.len == 0 {
            return;
        }
        // Host memory survives a device fault, so it is freed even then.
        let _ = self.state.ctx.bind_to_thread();
        // SAFETY: allocated by `ffi::alloc_pinned` and freed only here; the typed
        // layer waits for every copy that uses it before dropping it.
        if let Err(e) = unsafe { ffi::free_pinned(self.ptr.as_ptr()) } {
            self.state.defer(&format!("cuMemFreeHost of a page-locked buffer of {} bytes", self.len), e);
        }
    }
}

/// Enqueue a library's work on `stream` (cuBLAS, cuBLASLt, cuSOLVER) that uses
/// `buffers`: each buffer that is not `stream`'s own is prepared before and
/// its use recorded after, whatever `enqueue` answered (a failed call may
/// have enqueued part of its work); on success `kernel` is the stream's and
/// the device's last, the id a fault surfacing later is reported under.
#[cfg(feature = "cublas")]
pub(crate) fn library_work(
    stream: &CudaStream,
    kernel: u32,
    buffers: &[&CudaBuffer],
    enqueue: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let foreign: Vec<bool> = buffers.iter().map(|b| b.is_foreign(stream)).collect();
    for (b, _) in buffers.iter().zip(&foreign).filter(|(_, f)| **f) {
        b.before_foreign_use(stream)?;
    }
    let done = enqueue();
    let mut recorded = Ok(());
    for (b, _) in buffers.iter().zip(&foreign).filter(|(_, f)| **f) {
        let r = b.after_foreign_use(stream);
        recorded = recorded.and(r);
    }
    if done.is_ok() {
        stream.last_kernel.store(kernel, Ordering::Relaxed);
        stream.state.last_kernel.store(kernel, Ordering::Relaxed);
    }
    done.and(recorded)
}
