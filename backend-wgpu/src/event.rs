//! Events: submission markers, with a device timestamp where the adapter
//! can write one between commands.

use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use kiln_core::{BackendKind, Error, RawEvent, Result};

use crate::context::{Context, Marker};

/// A device timestamp, filled in by the map callback of its read-back buffer.
type Stamp = Arc<Mutex<Option<std::result::Result<u64, String>>>>;

/// The submission an event belongs to.
#[derive(Clone)]
enum Submission {
    /// Submitted when the event was recorded.
    Done(Marker),
    /// Still in the batch: an event recorded when the batch held no work
    /// (typically the start of a timed region) only wrote its timestamp, so
    /// that the work that follows shares its submission and the time between
    /// the two excludes the host's recording and submitting.
    Pending(Arc<OnceLock<Marker>>),
}

/// Where an event was last recorded.
#[derive(Clone)]
struct Recorded {
    submission: Submission,
    stamp: Option<Stamp>,
}

/// A point in the device's single queue.
///
/// Recording submits the batch (so that the work before the event starts),
/// and the event stands for that submission: [`query`](RawEvent::query)
/// polls the device and asks whether it is complete,
/// [`synchronize`](RawEvent::synchronize) waits for it; complete means the
/// device has run it and every host callback of it and of earlier
/// submissions (the copies of asynchronous read-backs into host memory)
/// has returned, whichever thread ran them. When the batch holds
/// no work there is nothing to start, and an event with a timestamp leaves
/// it in the batch; querying or waiting for the event submits it. Where the adapter has
/// `TIMESTAMP_QUERY_INSIDE_ENCODERS`, recording also writes a timestamp
/// after all earlier work, and [`elapsed_since`](RawEvent::elapsed_since) is
/// the difference of two such timestamps times the queue's timestamp period.
/// Without that feature it is `Unsupported`: kiln never substitutes host time.
pub struct WgpuEvent {
    ctx: Arc<Context>,
    query_set: Option<wgpu::QuerySet>,
    resolve: Option<wgpu::Buffer>,
    state: Mutex<Option<Recorded>>,
}

impl WgpuEvent {
    pub(crate) fn new(ctx: Arc<Context>) -> Result<Self> {
        let (query_set, resolve) = if ctx.info.features.timestamps {
            let qs = ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("kiln event"),
                ty: wgpu::QueryType::Timestamp,
                count: 1,
            });
            let resolve = crate::resources::create_buffer(
                &ctx.device,
                &ctx.info.name,
                "event timestamp",
                wgpu::QUERY_SIZE as u64,
                wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                false,
            )?;
            (Some(qs), Some(resolve))
        } else {
            (None, None)
        };
        Ok(WgpuEvent { ctx, query_set, resolve, state: Mutex::new(None) })
    }

    fn recorded(&self) -> Option<Recorded> {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Mark the current end of the queue: write a timestamp (when the
    /// adapter can), and submit the batch if it holds work.
    pub(crate) fn record(&self) -> Result<()> {
        let ctx = &self.ctx;
        let mut batch = ctx.batch()?;
        let work = batch.has_work();
        let stamp = match (&self.query_set, &self.resolve) {
            (Some(qs), Some(resolve)) => {
                let size = wgpu::QUERY_SIZE as u64;
                let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
                let pooled = ctx.stamp_buffers.lock().unwrap_or_else(|p| p.into_inner()).pop();
                let readback = match pooled {
                    Some(b) => b,
                    None => crate::resources::create_buffer(
                        &ctx.device,
                        &ctx.info.name,
                        "event timestamp",
                        size,
                        usage,
                        false,
                    )?,
                };
                let slot: Stamp = Arc::default();
                let (out, mapped, pool) = (slot.clone(), readback.clone(), ctx.stamp_buffers.clone());
                let encoder = batch.marks(&ctx.device);
                encoder.write_timestamp(qs, 0);
                encoder.resolve_query_set(qs, 0..1, resolve, 0);
                encoder.copy_buffer_to_buffer(resolve, 0, &readback, 0, size);
                batch.map_on_submit(&ctx.device, &readback, move |r| {
                    let mapped_ok = r.is_ok();
                    let value = r.map_err(|e| e.to_string()).and_then(|()| {
                        let view = mapped.get_mapped_range(..).map_err(|e| e.to_string())?;
                        let bytes = view.get(..8).and_then(|b| <[u8; 8]>::try_from(b).ok());
                        bytes.map(u64::from_le_bytes).ok_or_else(|| "short timestamp".to_string())
                    });
                    mapped.unmap();
                    *out.lock().unwrap_or_else(|p| p.into_inner()) = Some(value);
                    // Unmapped, it can take the next event's timestamp.
                    if mapped_ok {
                        pool.lock().unwrap_or_else(|p| p.into_inner()).push(mapped);
                    }
                });
                Some(slot)
            }
            _ => None,
        };
        let submission = match (work, &stamp) {
            (false, Some(_)) => Submission::Pending(batch.pending()),
            (false, None) => Submission::Done(batch.last()),
            (true, _) => Submission::Done(ctx.submit(&mut batch)?),
        };
        drop(batch);
        *self.state.lock().unwrap_or_else(|p| p.into_inner()) = Some(Recorded { submission, stamp });
        Ok(())
    }

    /// The marker of the event's submission, submitting the batch if the
    /// event is still in it; `None` when never recorded.
    fn marker(&self) -> Result<Option<(Marker, Option<Stamp>)>> {
        let Some(rec) = self.recorded() else { return Ok(None) };
        let marker = match rec.submission {
            Submission::Done(m) => m,
            Submission::Pending(slot) => match slot.get() {
                Some(m) => m.clone(),
                None => {
                    self.ctx.flush()?;
                    slot.get().cloned().ok_or_else(|| {
                        Error::driver(BackendKind::Wgpu, "event", "the batch holding the event was not submitted")
                    })?
                }
            },
        };
        Ok(Some((marker, rec.stamp)))
    }

    fn stamp(&self, which: &str) -> Result<u64> {
        let what = "Event::elapsed_since";
        let Some((marker, stamp)) = self.marker()? else {
            return Err(Error::invalid(what, format!("the {which} event was never recorded")));
        };
        if !self.ctx.is_done(&marker, what)? {
            return Err(Error::invalid(what, format!("the {which} event has not completed yet; synchronize it first")));
        }
        let Some(stamp) = stamp else {
            return Err(Error::invalid(what, format!("the {which} event was recorded without a timestamp")));
        };
        let value = stamp.lock().unwrap_or_else(|p| p.into_inner()).clone();
        match value {
            Some(Ok(v)) => Ok(v),
            Some(Err(e)) => Err(Error::driver(BackendKind::Wgpu, "timestamp read-back", e)),
            None => Err(Error::driver(BackendKind::Wgpu, "timestamp read-back", "the mapping did not complete")),
        }
    }
}

impl RawEvent for WgpuEvent {
    fn query(&self) -> Result<bool> {
        let Some((marker, _)) = self.marker()? else { return Ok(true) };
        self.ctx.is_done(&marker, "Event::query")
    }

    fn synchronize(&self) -> Result<()> {
        match self.marker()? {
            Some((marker, _)) => self.ctx.wait(&marker, "Event::synchronize"),
            None => Ok(()),
        }
    }

    fn elapsed_since(&self, start: &Self) -> Result<Duration> {
        if !self.ctx.info.features.timestamps {
            return Err(Error::unsupported(
                BackendKind::Wgpu,
                "Event::elapsed_since (device timestamps)",
                format!(
                    "adapter {} lacks TIMESTAMP_QUERY and TIMESTAMP_QUERY_INSIDE_ENCODERS, so events carry no device time",
                    self.ctx.info.name
                ),
            ));
        }
        let (t0, t1) = (start.stamp("start")?, self.stamp("end")?);
        let ticks = t1.checked_sub(t0).ok_or_else(|| {
            Error::invalid(
                "Event::elapsed_since",
                format!("the end event's timestamp ({t1}) precedes the start's ({t0})"),
            )
        })?;
        let period = f64::from(self.ctx.queue.get_timestamp_period());
        Ok(Duration::from_secs_f64(ticks as f64 * period * 1e-9))
    }
}
