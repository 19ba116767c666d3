//! wgpu reports errors out of band; this file turns them into `kiln_core::Error`s.
//!
//! wgpu's default handler for an error nobody captured panics. kiln never
//! lets it: device-level calls that can fail run inside error scopes
//! ([`scoped`]), and whatever escapes them (an error raised on another
//! thread, a lost device) is recorded by the handlers installed in
//! [`Faults::install`] and reported by the next call that waits on the device.

use std::sync::{Arc, Mutex};

use kiln_core::{BackendKind, Error, Result};

/// Run `f` with validation, out-of-memory and internal errors captured, and
/// return its result with the first error raised during it, if any.
///
/// Error scopes are per thread in wgpu, and `f` runs on this thread, so
/// work done concurrently by other threads is not caught here.
pub(crate) fn scoped<R>(device: &wgpu::Device, f: impl FnOnce() -> R) -> (R, Option<wgpu::Error>) {
    let validation = device.push_error_scope(wgpu::ErrorFilter::Validation);
    let oom = device.push_error_scope(wgpu::ErrorFilter::OutOfMemory);
    let internal = device.push_error_scope(wgpu::ErrorFilter::Internal);
    let out = f();
    // Scopes pop in reverse order of their pushes. On native the futures are
    // ready at once; block_on only unwraps them.
    let internal = pollster::block_on(internal.pop());
    let oom = pollster::block_on(oom.pop());
    let validation = pollster::block_on(validation.pop());
    (out, validation.or(oom).or(internal))
}

/// The full text of a wgpu error, with the chain of causes wgpu keeps in
/// its sources (where shader diagnostics and limit names live).
pub(crate) fn describe(error: &wgpu::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(s_text.trim()) {
            text.push_str("\n  caused by: ");
            text.push_str(s_text.trim());
        }
        source = s.source();
    }
    text
}

/// A wgpu error from `call` as a kiln `Driver` error.
pub(crate) fn driver(call: &str, error: &wgpu::Error) -> Error {
    Error::driver(BackendKind::Wgpu, call, describe(error))
}

/// Errors that reached no error scope, and the loss of the device.
#[derive(Default)]
pub(crate) struct Faults {
    device: String,
    uncaptured: Mutex<Vec<String>>,
    lost: Mutex<Option<String>>,
}

impl Faults {
    /// Install recording handlers on `device`, replacing wgpu's panicking default.
    pub(crate) fn install(device: &wgpu::Device, name: &str) -> Arc<Faults> {
        let faults = Arc::new(Faults { device: name.to_string(), ..Faults::default() });
        let f = faults.clone();
        device.on_uncaptured_error(Arc::new(move |e: wgpu::Error| {
            f.uncaptured.lock().unwrap_or_else(|p| p.into_inner()).push(describe(&e));
        }));
        let f = faults.clone();
        device.set_device_lost_callback(move |reason, message| {
            // A lost device on purpose (our own drop) is not a failure to report.
            if reason != wgpu::DeviceLostReason::Destroyed {
                let mut lost = f.lost.lock().unwrap_or_else(|p| p.into_inner());
                lost.get_or_insert_with(|| format!("device lost ({reason:?}): {message}"));
            }
        });
        faults
    }

    /// `Err(DeviceLost)` once the device is gone.
    pub(crate) fn check_lost(&self) -> Result<()> {
        match &*self.lost.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(cause) => Err(Error::DeviceLost { device: self.device.clone(), cause: cause.clone() }),
            None => Ok(()),
        }
    }

    /// Record an error met where it cannot be returned (a map callback).
    pub(crate) fn note(&self, message: String) {
        self.uncaptured.lock().unwrap_or_else(|p| p.into_inner()).push(message);
    }

    /// Report, once, every error recorded since the last call; `Err(DeviceLost)` first.
    pub(crate) fn take(&self) -> Result<()> {
        self.check_lost()?;
        let errors = std::mem::take(&mut *self.uncaptured.lock().unwrap_or_else(|p| p.into_inner()));
        if errors.is_empty() {
            Ok(())
        } else {
            Err(Error::driver(
                BackendKind::Wgpu,
                "earlier asynchronous work",
                format!("{} error(s) on {}:\n{}", errors.len(), self.device, errors.join("\n")),
            ))
        }
    }
}
