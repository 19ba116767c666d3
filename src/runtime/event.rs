//! [`Event`] of the run-time tier.

use std::time::Duration;

use kiln_core::Result;

use super::{Device, Event, Tier, describe, dispatch, handle_basics, mismatch};

handle_basics!(Event, event, "event");

impl Event {
    /// Whether everything before the event has completed; does not block.
    pub fn query(&self) -> Result<bool> {
        dispatch!(self, Event, e => e.query())
    }

    /// Block until everything before the event has completed.
    pub fn synchronize(&self) -> Result<()> {
        dispatch!(self, Event, e => e.synchronize())
    }

    /// Device time from `start` to this event. Both must have been recorded
    /// on one device and completed; a backend without device timestamps
    /// answers `Unsupported`.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> kiln::Result<()> {
    /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
    /// let s = dev.stream();
    /// let start = s.record_event()?;
    /// let _x = s.alloc_zeroed::<f32>(1 << 16)?;
    /// let stop = s.record_event()?;
    /// stop.synchronize()?;
    /// assert!(stop.elapsed_since(&start)? >= std::time::Duration::ZERO);
    /// # Ok(()) }
    /// ```
    pub fn elapsed_since(&self, start: &Event) -> Result<Duration> {
        dispatch!(self, Event, e => match B::event(start) {
            Some(s) => e.elapsed_since(s),
            None => Err(mismatch("Event::elapsed_since", describe(e.device()), start.describe())),
        })
    }

    /// "cpu:0 name", for errors.
    pub(crate) fn describe(&self) -> String {
        dispatch!(self, Event, e => describe(e.device()))
    }
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Event({})", self.describe())
    }
}
