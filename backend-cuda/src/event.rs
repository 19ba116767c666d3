//! Events: points in a stream, for cross-stream order and device timing.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use cudarc::driver::CudaEvent as DriverEvent;
use kiln_core::{Error, RawEvent, Result};

use crate::error::is_invalid_handle;
use crate::state::DeviceState;

/// A CUDA event with timing enabled (`CU_EVENT_DEFAULT`), so any two can be
/// subtracted. Waiting on it spins, as CUDA's default does: the lowest latency.
pub struct CudaEvent {
    pub(crate) event: DriverEvent,
    state: Arc<DeviceState>,
    /// The kernel launched last on the stream before this event was recorded,
    /// named if waiting on the event reveals a fault.
    pub(crate) kernel: AtomicU32,
}

impl CudaEvent {
    pub(crate) fn new(event: DriverEvent, state: Arc<DeviceState>) -> Self {
        CudaEvent { event, state, kernel: AtomicU32::new(0) }
    }

    fn fail(&self, call: &str, e: cudarc::driver::DriverError) -> Error {
        self.state.fail(call, e, self.kernel.load(Ordering::Relaxed))
    }
}

impl RawEvent for CudaEvent {
    fn query(&self) -> Result<bool> {
        self.state.check_usable()?;
        self.state.bind("cuEventQuery")?;
        self.event.try_is_complete().map_err(|e| self.fail("cuEventQuery", e))
    }

    fn synchronize(&self) -> Result<()> {
        self.state.check_usable()?;
        self.state.bind("cuEventSynchronize")?;
        self.event.synchronize().map_err(|e| self.fail("cuEventSynchronize", e))
    }

    fn elapsed_since(&self, start: &Self) -> Result<Duration> {
        self.state.check_usable()?;
        // cudarc waits for both events before asking for the time.
        let ms = start.event.elapsed_ms(&self.event).map_err(|e| {
            if is_invalid_handle(e) {
                Error::invalid("Event::elapsed_since", "both events must have been recorded on a stream")
            } else {
                self.fail("cuEventElapsedTime", e)
            }
        })?;
        if ms < 0.0 {
            return Err(Error::invalid(
                "Event::elapsed_since",
                format!("the start event completed {:.3} ms after this one", -ms),
            ));
        }
        Ok(Duration::from_secs_f64(f64::from(ms) / 1e3))
    }
}
