//! Host buffers for asynchronous copies (page-locked memory on CUDA), their
//! blocks kept for reuse by the device's host pool (`host_pool.rs`).

use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::sync::{Mutex, MutexGuard};

use crate::{Backend, Device, Element, Error, Event, RawHostBuffer, Result, Stream};

/// Host memory that streams copy to and from without blocking the host.
///
/// The buffer keeps the events of the asynchronous copies that use it:
/// [`as_slice`](Self::as_slice) waits for copies into it, and
/// [`as_mut_slice`](Self::as_mut_slice) and drop wait for every copy, so a
/// copy in flight is never raced by the host, and the memory is never freed
/// under one. It holds at most one event per stream and direction (a new copy
/// on a stream re-records that stream's event, which then marks the later of
/// the two), and lets go of events already complete, so a buffer re-used for
/// any number of copies holds events in proportion to the streams it is used
/// on, not to the copies.
///
/// If waiting for a copy fails (a device fault), dropping the buffer leaks
/// its memory rather than free it while the copy might still be running.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let mut host = dev.alloc_host::<u32>(4)?;
/// host.as_mut_slice()?.copy_from_slice(&[1, 2, 3, 4]);
/// let mut dev_buf = s.alloc::<u32>(4)?;
/// s.copy_to_device_async(&host, &mut dev_buf)?;   // returns at once
/// let mut back = dev.alloc_host::<u32>(4)?;
/// s.copy_to_host_async(&dev_buf, &mut back)?;
/// assert_eq!(back.as_slice()?, &[1, 2, 3, 4]);    // waits for the copy
/// # Ok(()) }
/// ```
pub struct HostBuffer<B: Backend, T: Element> {
    raw: ManuallyDrop<B::HostBuffer>,
    len: usize,
    device: Device<B>,
    /// Copies reading this memory (host to device), not yet known complete.
    reads: Mutex<Vec<Pending<B>>>,
    /// Copies writing this memory (device to host), not yet known complete.
    writes: Mutex<Vec<Pending<B>>>,
    _t: PhantomData<T>,
}

/// The latest copies on one stream that use a host buffer in one direction.
struct Pending<B: Backend> {
    /// Held so the stream's identity cannot be reused while the entry lives.
    stream: Stream<B>,
    /// Recorded after the stream's latest such copy; `None` when recording
    /// failed and the stream itself must be waited for.
    event: Option<Event<B>>,
}

impl<B: Backend> Pending<B> {
    fn wait(&self) -> Result<()> {
        match &self.event {
            Some(e) => e.synchronize(),
            None => self.stream.synchronize(),
        }
    }

    fn known_complete(&self) -> bool {
        matches!(self.event.as_ref().map(Event::query), Some(Ok(true)))
    }
}

impl<B: Backend, T: Element> std::fmt::Debug for HostBuffer<B, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostBuffer({} x {} on {})", self.len, T::DTYPE, self.device.name())
    }
}

impl<B: Backend, T: Element> HostBuffer<B, T> {
    pub(crate) fn new(device: &Device<B>, len: usize) -> Result<Self> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or_else(|| {
            Error::invalid("Device::alloc_host", format!("{len} elements of {} overflow the address space", T::DTYPE))
        })?;
        let raw = device.host_pool().take(device.raw(), bytes, "Device::alloc_host")?;
        Ok(HostBuffer {
            raw: ManuallyDrop::new(raw),
            len,
            device: device.clone(),
            reads: Mutex::new(Vec::new()),
            writes: Mutex::new(Vec::new()),
            _t: PhantomData,
        })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device this memory is registered with.
    pub fn device(&self) -> &Device<B> {
        &self.device
    }

    /// The backend's host buffer: a block of the device's host pool, which
    /// may be longer than this buffer (whose elements are its first bytes).
    pub fn raw(&self) -> &B::HostBuffer {
        &self.raw
    }

    /// The contents; blocks until every copy into the buffer has completed.
    pub fn as_slice(&self) -> Result<&[T]> {
        self.wait_for_device_writes()?;
        // SAFETY: every copy into the buffer has completed (waited above), and
        // new ones need `&mut self`, which this borrow excludes.
        let bytes = unsafe { self.raw.bytes() };
        Ok(bytemuck::cast_slice(&bytes[..self.len * size_of::<T>()]))
    }

    /// The contents, writable; blocks until every copy from or into the buffer has completed.
    pub fn as_mut_slice(&mut self) -> Result<&mut [T]> {
        self.wait_for_device_writes()?;
        self.wait_for_device_reads()?;
        // SAFETY: no copy from or into the buffer is in flight (waited above),
        // and new ones need a borrow of `self`, which this one excludes.
        let bytes = unsafe { self.raw.bytes_mut() };
        Ok(bytemuck::cast_slice_mut(&mut bytes[..self.len * size_of::<T>()]))
    }

    /// A copy of the contents; blocks like [`as_slice`](Self::as_slice).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        Ok(self.as_slice()?.to_vec())
    }

    pub(crate) fn wait_for_device_writes(&self) -> Result<()> {
        drain(&self.writes)
    }

    pub(crate) fn wait_for_device_reads(&self) -> Result<()> {
        drain(&self.reads)
    }

    /// Enqueue, through `enqueue`, a copy on `stream` that reads this buffer,
    /// and track it until it completes.
    pub(crate) fn track_device_read(&self, stream: &Stream<B>, enqueue: impl FnOnce() -> Result<()>) -> Result<()> {
        track(&self.reads, stream, enqueue)
    }

    /// Enqueue, through `enqueue`, a copy on `stream` that writes this buffer,
    /// and track it until it completes.
    pub(crate) fn track_device_write(&self, stream: &Stream<B>, enqueue: impl FnOnce() -> Result<()>) -> Result<()> {
        track(&self.writes, stream, enqueue)
    }
}

fn lock<B: Backend>(pending: &Mutex<Vec<Pending<B>>>) -> MutexGuard<'_, Vec<Pending<B>>> {
    pending.lock().unwrap_or_else(|p| p.into_inner())
}

/// Run `enqueue` between having an event and recording it, so that no copy is
/// ever in flight without something the host can wait on.
///
/// The lock is held throughout: two threads copying from one buffer at once
/// must not both take, or both create, the same stream's entry.
fn track<B: Backend>(
    pending: &Mutex<Vec<Pending<B>>>,
    stream: &Stream<B>,
    enqueue: impl FnOnce() -> Result<()>,
) -> Result<()> {
    let mut pending = lock(pending);
    // Entries of other streams whose copies are done need no waiting; this
    // stream's entry is kept and re-recorded below.
    pending.retain(|p| p.stream.same_queue(stream) || !p.known_complete());
    let slot = pending.iter().position(|p| p.stream.same_queue(stream));
    // The event exists before the copy is enqueued: if it cannot be had, no
    // copy is made. This stream's event is re-recorded when it has one.
    let reused = slot.and_then(|i| pending[i].event.take());
    let was_reused = reused.is_some();
    let event = match reused {
        Some(e) => e,
        None => stream.device().create_event()?,
    };
    if let Err(e) = enqueue() {
        if let (Some(i), true) = (slot, was_reused) {
            pending[i].event = Some(event);
        }
        return Err(e);
    }
    if let Err(e) = stream.record(&event) {
        // The copy is queued but nothing marks its end: wait for the whole
        // stream instead. If even that fails, an entry stays that waits for
        // the stream, for the accessors and drop to retry.
        let waited = stream.synchronize().is_ok();
        match (slot, waited) {
            (Some(i), true) => {
                pending.swap_remove(i);
            }
            (Some(_), false) => {} // its event was taken: the entry now waits for the stream
            (None, true) => {}
            (None, false) => pending.push(Pending { stream: stream.clone(), event: None }),
        }
        return Err(e);
    }
    match slot {
        Some(i) => pending[i].event = Some(event),
        None => pending.push(Pending { stream: stream.clone(), event: Some(event) }),
    }
    Ok(())
}

fn drain<B: Backend>(pending: &Mutex<Vec<Pending<B>>>) -> Result<()> {
    let mut pending = lock(pending);
    while let Some(p) = pending.last() {
        p.wait()?;
        pending.pop();
    }
    Ok(())
}

impl<B: Backend, T: Element> Drop for HostBuffer<B, T> {
    fn drop(&mut self) {
        // The memory must outlive every copy that uses it. A failure here has
        // already been noted on the device and surfaces at its next
        // synchronize; the memory is then leaked, not freed under a copy that
        // might still be running.
        let done = self.wait_for_device_writes().is_ok() & self.wait_for_device_reads().is_ok();
        if done {
            // SAFETY: no copy uses the memory any more, and `raw` is not touched again.
            let raw = unsafe { ManuallyDrop::take(&mut self.raw) };
            self.device.host_pool().put(raw);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use crate::testing;
    use crate::Priority;

    #[test]
    fn no_copy_is_enqueued_without_its_event() {
        let (dev, counters) = testing::device();
        let s = dev.stream();
        let host = dev.alloc_host::<u32>(4).unwrap();
        let mut buf = s.alloc::<u32>(4).unwrap();
        counters.fail_create_event.store(true, Ordering::SeqCst);
        assert!(s.copy_to_device_async(&host, &mut buf).is_err());
        let mut back = dev.alloc_host::<u32>(4).unwrap();
        assert!(s.copy_to_host_async(&buf, &mut back).is_err());
        assert_eq!(counters.async_copies.load(Ordering::SeqCst), 0);
        assert_eq!(counters.take_log(), ["create_event", "create_event"]);
    }

    #[test]
    fn a_copy_whose_event_cannot_be_recorded_is_waited_for() {
        let (dev, counters) = testing::device();
        let s = dev.stream();
        let mut host = dev.alloc_host::<u32>(4).unwrap();
        let mut buf = s.alloc::<u32>(4).unwrap();
        counters.fail_record.store(true, Ordering::SeqCst);
        assert!(s.copy_to_device_async(&host, &mut buf).is_err());
        assert_eq!(counters.take_log(), ["create_event", "copy", "record", "sync"]);
        assert!(s.copy_to_host_async(&buf, &mut host).is_err());
        assert_eq!(counters.take_log(), ["create_event", "copy", "record", "sync"]);
        // The stream was waited for, so nothing is left pending.
        assert_eq!(counters.live_events.load(Ordering::SeqCst), 0);

        // A re-recorded event that fails the same way: the stream is waited
        // for and the entry let go.
        counters.fail_record.store(false, Ordering::SeqCst);
        s.copy_to_device_async(&host, &mut buf).unwrap();
        assert_eq!(counters.take_log(), ["create_event", "copy", "record"]);
        counters.fail_record.store(true, Ordering::SeqCst);
        assert!(s.copy_to_device_async(&host, &mut buf).is_err());
        assert_eq!(counters.take_log(), ["copy", "record", "sync"]);
        assert_eq!(counters.live_events.load(Ordering::SeqCst), 0);
    }

    #[test]
    fn reuse_holds_one_event_per_stream_and_direction() {
        let (dev, counters) = testing::device();
        let streams =
            [dev.stream(), dev.create_stream(Priority::High).unwrap(), dev.create_stream(Priority::Low).unwrap()];
        let mut host = dev.alloc_host::<f32>(16).unwrap();
        let mut bufs = streams.iter().map(|s| s.alloc::<f32>(16).unwrap()).collect::<Vec<_>>();
        // Events never complete on their own here, as on a GPU kept busy.
        for i in 0..10_000 {
            let k = i % streams.len();
            streams[k].copy_to_device_async(&host, &mut bufs[k]).unwrap();
        }
        assert_eq!(counters.async_copies.load(Ordering::SeqCst), 10_000);
        assert_eq!(counters.live_events.load(Ordering::SeqCst), 3);
        for _ in 0..1_000 {
            streams[1].copy_to_host_async(&bufs[1], &mut host).unwrap();
        }
        // The first copy back waited for the three uploads (reads); one write remains.
        assert_eq!(counters.live_events.load(Ordering::SeqCst), 1);
        host.as_mut_slice().unwrap();
        assert_eq!(counters.live_events.load(Ordering::SeqCst), 0);

        // Events known complete are let go as soon as the buffer is used again.
        counters.events_complete.store(true, Ordering::SeqCst);
        for i in 0..300 {
            let k = i % streams.len();
            streams[k].copy_to_device_async(&host, &mut bufs[k]).unwrap();
        }
        assert_eq!(counters.live_events.load(Ordering::SeqCst), 1);
        drop(host);
        assert_eq!(counters.live_events.load(Ordering::SeqCst), 0);
    }
}
