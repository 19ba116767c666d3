//! Events: points in a stream, for ordering and timing.

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use crate::graph::record::EventMark;
use crate::{Backend, Device, Error, RawEvent, Result};

/// A point in a stream. Record it with [`Stream::record`](crate::Stream::record),
/// wait for it from another stream with [`Stream::wait`](crate::Stream::wait),
/// and measure device time between two of them.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let start = s.record_event()?;
/// let _buf = s.alloc_zeroed::<f32>(1 << 16)?;
/// let stop = s.record_event()?;
/// stop.synchronize()?;
/// assert!(stop.query()?);
/// let t = stop.elapsed_since(&start)?;
/// assert!(t.as_secs_f64() >= 0.0);
/// # Ok(()) }
/// ```
pub struct Event<B: Backend> {
    raw: B::Event,
    device: Device<B>,
    /// Where the event was last recorded when that was inside a graph capture.
    mark: Mutex<Option<EventMark<B>>>,
}

impl<B: Backend> Event<B> {
    pub(crate) fn from_parts(raw: B::Event, device: Device<B>) -> Self {
        Event { raw, device, mark: Mutex::new(None) }
    }

    fn mark_slot(&self) -> MutexGuard<'_, Option<EventMark<B>>> {
        self.mark.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Where the event was last recorded, when that was inside a capture.
    pub(crate) fn mark(&self) -> Option<EventMark<B>> {
        self.mark_slot().clone()
    }

    pub(crate) fn set_mark(&self, mark: Option<EventMark<B>>) {
        *self.mark_slot() = mark;
    }

    /// An error for `call` when the event marks a point inside a graph,
    /// which no stream has reached.
    fn refuse_marked(&self, call: &str) -> Result<()> {
        match &*self.mark_slot() {
            None => Ok(()),
            Some(mark) => Err(Error::graph(
                call,
                format!(
                    "the event was recorded during graph capture {}: it marks a point inside the graph, which only a stream of the capture can wait for; record it outside a capture to query or time it",
                    mark.capture
                ),
            )),
        }
    }

    /// The backend's event.
    pub fn raw(&self) -> &B::Event {
        &self.raw
    }

    /// The device the event belongs to.
    pub fn device(&self) -> &Device<B> {
        &self.device
    }

    /// Whether everything before the event has completed; does not block.
    pub fn query(&self) -> Result<bool> {
        self.refuse_marked("Event::query")?;
        self.raw.query()
    }

    /// Block until everything before the event has completed.
    pub fn synchronize(&self) -> Result<()> {
        self.refuse_marked("Event::synchronize")?;
        self.raw.synchronize().inspect_err(|e| self.device.note_failure(e))
    }

    /// Device time from `start` to this event. Both must have been recorded
    /// and completed; a backend without device timestamps answers `Unsupported`.
    pub fn elapsed_since(&self, start: &Event<B>) -> Result<Duration> {
        self.refuse_marked("Event::elapsed_since")?;
        start.refuse_marked("Event::elapsed_since (start)")?;
        self.raw.elapsed_since(&start.raw)
    }
}
