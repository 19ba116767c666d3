//! One opened device: its wgpu device and queue, and the batch of commands
//! every kiln stream records into.
//!
//! wgpu has a single queue per device. kiln streams therefore share one
//! command encoder (the *batch*), recorded in program order under a lock;
//! the batch is submitted when a caller needs a submission to exist (an
//! event is recorded, data is read back, a stream or the device is
//! synchronized) or when it holds [`MAX_BATCH`] commands. Submissions
//! execute in order, so work is ordered across streams exactly as it was
//! enqueued.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use kiln_core::{DeviceInfo, Error, Result};

use crate::builtin::Builtins;
use crate::errors::{driver, scoped, Faults};

/// Commands recorded before the batch is submitted on its own, so that the
/// device starts on long sequences of launches without waiting for a sync.
const MAX_BATCH: usize = 128;

/// Bytes of staging and temporary buffers the batch may hold alive before it
/// is submitted on its own, so that long runs of uploads do not pile up
/// memory the device has not started to drain.
const MAX_STAGED: u64 = 256 << 20;

/// Bytes of one block of kernel scalar arguments (see [`Params`]).
const PARAMS_BLOCK: u64 = 64 * 1024;

/// A submission, for events and waits: done once the device has run it.
#[derive(Clone)]
pub(crate) struct Marker {
    index: Option<wgpu::SubmissionIndex>,
    done: Arc<AtomicBool>,
}

impl Marker {
    /// The marker of "nothing submitted yet": already complete.
    pub(crate) fn completed() -> Self {
        Marker { index: None, done: Arc::new(AtomicBool::new(true)) }
    }

    /// Whether the submission has run (as of the last poll of the device).
    pub(crate) fn is_done(&self) -> bool {
        self.done.load(Ordering::Acquire)
    }
}

/// Scalar arguments of the launches in the batch.
///
/// Each launch takes a slot of a uniform block, aligned to the device's
/// uniform offset alignment; the bytes collect in `shadow` and are written
/// with `Queue::write_buffer` when the block is full or the batch is
/// submitted. Such a write lands before the next submission, which is the
/// one holding every launch that reads the block, and a block is never
/// reused, so no launch can see another's values.
struct Params {
    block: Option<wgpu::Buffer>,
    shadow: Vec<u8>,
}

impl Params {
    fn retire(&mut self, queue: &wgpu::Queue) {
        if let Some(block) = self.block.take() {
            if !self.shadow.is_empty() {
                queue.write_buffer(&block, 0, &self.shadow);
            }
        }
        self.shadow.clear();
    }
}

/// The commands recorded since the last submission.
pub(crate) struct Batch {
    encoder: Option<wgpu::CommandEncoder>,
    commands: usize,
    /// Bytes of staging and temporary buffers the recorded commands use.
    staged: u64,
    /// Whether the batch holds work (copies, fills, launches), not only event timestamps.
    work: bool,
    params: Params,
    last: Marker,
    /// The marker the batch will have once submitted (see [`Batch::pending`]).
    next: Arc<OnceLock<Marker>>,
}

impl Batch {
    /// The encoder of the batch, created on first use, to record work into.
    pub(crate) fn encoder(&mut self, device: &wgpu::Device) -> &mut wgpu::CommandEncoder {
        self.work = true;
        self.marks(device)
    }

    /// The encoder, to record event timestamps into (which are not work).
    pub(crate) fn marks(&mut self, device: &wgpu::Device) -> &mut wgpu::CommandEncoder {
        self.commands += 1;
        self.encoder.get_or_insert_with(|| {
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("kiln batch") })
        })
    }

    /// Count `bytes` of staging or temporary memory the batch keeps alive.
    pub(crate) fn stage(&mut self, bytes: u64) {
        self.staged += bytes;
    }

    /// Whether the batch should be submitted now rather than grow further.
    fn is_full(&self) -> bool {
        self.commands >= MAX_BATCH || self.staged >= MAX_STAGED
    }

    /// Whether the batch holds work.
    pub(crate) fn has_work(&self) -> bool {
        self.work
    }

    /// The marker of the latest submission.
    pub(crate) fn last(&self) -> Marker {
        self.last.clone()
    }

    /// A slot that receives this batch's marker when it is submitted.
    pub(crate) fn pending(&self) -> Arc<OnceLock<Marker>> {
        self.next.clone()
    }
}

/// An opened device, shared by its streams, events, buffers and kernels.
pub(crate) struct Context {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) info: DeviceInfo,
    pub(crate) limits: wgpu::Limits,
    pub(crate) faults: Arc<Faults>,
    batch: Mutex<Batch>,
    builtins: OnceLock<std::result::Result<Builtins, Error>>,
}

impl Context {
    pub(crate) fn new(device: wgpu::Device, queue: wgpu::Queue, info: DeviceInfo, limits: wgpu::Limits) -> Self {
        let faults = Faults::install(&device, &info.name);
        let batch = Batch {
            encoder: None,
            commands: 0,
            staged: 0,
            work: false,
            params: Params { block: None, shadow: Vec::new() },
            last: Marker::completed(),
            next: Arc::new(OnceLock::new()),
        };
        Context { device, queue, info, limits, faults, batch: Mutex::new(batch), builtins: OnceLock::new() }
    }

    /// The kernels kiln itself uses for byte-granular fills and copies, built on first use.
    pub(crate) fn builtins(&self) -> Result<&Builtins> {
        self.builtins.get_or_init(|| Builtins::new(self)).as_ref().map_err(Clone::clone)
    }

    /// Lock the batch; `Err(DeviceLost)` once the device is gone.
    pub(crate) fn batch(&self) -> Result<MutexGuard<'_, Batch>> {
        self.faults.check_lost()?;
        Ok(self.batch.lock().unwrap_or_else(|p| p.into_inner()))
    }

    /// Record commands with `f` (the operation `what`, for error messages),
    /// then submit the batch if it has grown long. Errors wgpu raises while
    /// `f` creates resources are returned, not left to the uncaptured handler.
    pub(crate) fn record<R>(&self, what: &str, f: impl FnOnce(&mut Batch) -> Result<R>) -> Result<R> {
        let mut batch = self.batch()?;
        match scoped(&self.device, || f(&mut batch)) {
            (out, None) => {
                let out = out?;
                if batch.is_full() {
                    self.submit(&mut batch)?;
                }
                Ok(out)
            }
            (_, Some(e)) => Err(driver(what, &e)),
        }
    }

    /// A slot in the batch's uniform block holding `bytes`: the block and the offset.
    pub(crate) fn params(&self, batch: &mut Batch, bytes: &[u8]) -> (wgpu::Buffer, u64) {
        let align = u64::from(self.limits.min_uniform_buffer_offset_alignment.max(16));
        let p = &mut batch.params;
        let offset = (p.shadow.len() as u64).next_multiple_of(align);
        let (block, offset) = match &p.block {
            Some(block) if offset + bytes.len() as u64 <= PARAMS_BLOCK => (block.clone(), offset),
            _ => {
                p.retire(&self.queue);
                let block = self.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("kiln kernel scalars"),
                    size: PARAMS_BLOCK,
                    usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                p.block = Some(block.clone());
                (block, 0)
            }
        };
        p.shadow.resize(offset as usize, 0);
        p.shadow.extend_from_slice(bytes);
        (block, offset)
    }

    /// Submit the batch (if it holds anything) and return the marker of the
    /// latest submission.
    pub(crate) fn submit(&self, batch: &mut Batch) -> Result<Marker> {
        let Some(encoder) = batch.encoder.take() else {
            return Ok(batch.last.clone());
        };
        batch.commands = 0;
        batch.staged = 0;
        batch.work = false;
        batch.params.retire(&self.queue);
        let (index, error) = scoped(&self.device, || self.queue.submit([encoder.finish()]));
        let done = Arc::new(AtomicBool::new(false));
        let flag = done.clone();
        // Runs inside a later poll of the device, after the map callbacks of the same submission.
        self.queue.on_submitted_work_done(move || flag.store(true, Ordering::Release));
        batch.last = Marker { index: Some(index), done };
        // Events recorded into this batch learn their submission here.
        let _ = batch.next.set(batch.last.clone());
        batch.next = Arc::new(OnceLock::new());
        match error {
            Some(e) => Err(driver("queue submit", &e)),
            None => Ok(batch.last.clone()),
        }
    }

    /// Submit the batch; the marker of everything enqueued so far.
    pub(crate) fn flush(&self) -> Result<Marker> {
        let mut batch = self.batch()?;
        self.submit(&mut batch)
    }

    /// Run the callbacks of finished submissions without blocking.
    pub(crate) fn poll(&self) -> Result<()> {
        self.device.poll(wgpu::PollType::Poll).map_err(|e| poll_error(&e))?;
        self.faults.check_lost()
    }

    /// Block until `marker`'s submission has run.
    pub(crate) fn wait(&self, marker: &Marker) -> Result<()> {
        if let Some(index) = &marker.index {
            if !marker.is_done() {
                let wait = wgpu::PollType::Wait { submission_index: Some(index.clone()), timeout: None };
                self.device.poll(wait).map_err(|e| poll_error(&e))?;
            }
        }
        self.faults.check_lost()
    }

    /// Submit everything, wait for it, and report errors kept from earlier work.
    pub(crate) fn synchronize(&self) -> Result<()> {
        let marker = self.flush()?;
        self.wait(&marker)?;
        self.faults.take()
    }
}

fn poll_error(e: &wgpu::PollError) -> Error {
    Error::driver(kiln_core::BackendKind::Wgpu, "device poll", e)
}
