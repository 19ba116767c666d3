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
//!
//! A wait that promises data on the host ends only when the submission's
//! host callbacks have run, whichever thread wgpu ran them in (see
//! [`crate::completion`]).

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use kiln_core::{BackendKind, DeviceInfo, Error, Result};

use crate::bindings::Bindings;
use crate::completion::{Completion, Completions, Hold, State};
use crate::errors::{driver, scoped, Faults};
use crate::resources::{binding, create_buffer};
use builtin::Builtins;

mod builtin;

/// Commands recorded before the batch is submitted on its own, so that the
/// device starts on long sequences of launches without waiting for a sync.
const MAX_BATCH: usize = 128;

/// Bytes of staging and temporary buffers the batch may hold alive before it
/// is submitted on its own, so that long runs of uploads do not pile up
/// memory the device has not started to drain.
const MAX_STAGED: u64 = 256 << 20;

/// Bytes of one block of kernel scalar arguments (see [`Params`]).
const PARAMS_BLOCK: u64 = 128 * 1024;

/// Scalars are bound in slots of a multiple of this many bytes (one bind
/// group per block and slot size).
const PARAMS_SLOT: u64 = 256;

/// How long a wait polls the device without blocking before it blocks in
/// the driver (see [`Context::wait`]).
const SPIN: Duration = Duration::from_micros(250);

/// How long a waiter whose submission the device has finished gives the
/// thread that collected its callbacks to run them, before polling again
/// (in case no thread collected them yet).
const HANDOFF: Duration = Duration::from_millis(2);

/// A submission, for events and waits: done once the device has run it and
/// its host callbacks, and those of every earlier submission, have returned.
#[derive(Clone)]
pub(crate) struct Marker {
    index: Option<wgpu::SubmissionIndex>,
    /// The batch's number in [`Completions`]; 0 for "nothing submitted".
    number: u64,
}

impl Marker {
    /// The marker of "nothing submitted yet": already complete.
    pub(crate) fn completed() -> Self {
        Marker { index: None, number: 0 }
    }
}

/// Scalar arguments of the launches in the batch.
///
/// Each launch takes a slot of a uniform block, at an offset aligned to the
/// device's uniform offset alignment, bound through a dynamic offset; the
/// bytes collect in `shadow` and are written with `Queue::write_buffer`
/// when the block is full or the batch is submitted. Such a write lands
/// before the next submission, which is the one holding every launch that
/// reads the block, and after every earlier submission (the queue orders
/// it), so a block is reused from its start by the next batch: blocks and
/// their bind groups are made once.
struct Params {
    blocks: Vec<ParamsBlock>,
    /// The block the batch fills now.
    current: usize,
    shadow: Vec<u8>,
}

/// A block of scalars and its bind groups, one per slot size.
struct ParamsBlock {
    buffer: wgpu::Buffer,
    groups: HashMap<u64, wgpu::BindGroup>,
}

impl Params {
    /// Write the current block's bytes; the next slot comes from the next block.
    fn retire(&mut self, queue: &wgpu::Queue) {
        if let Some(block) = self.blocks.get(self.current) {
            if !self.shadow.is_empty() {
                queue.write_buffer(&block.buffer, 0, &self.shadow);
                self.current += 1;
            }
        }
        self.shadow.clear();
    }
}

/// The commands recorded since the last submission.
pub(crate) struct Batch {
    encoder: Option<wgpu::CommandEncoder>,
    /// The compute pass consecutive launches record into, open until the
    /// next command of another kind (or the submission) ends it: one pass
    /// for a run of launches rather than one each. wgpu orders the
    /// dispatches of a pass as it orders passes (each dispatch is its own
    /// usage scope, with the barriers between them it needs).
    pass: Option<wgpu::ComputePass<'static>>,
    commands: usize,
    /// Bytes of staging and temporary buffers the recorded commands use.
    staged: u64,
    /// Whether the batch holds work (copies, fills, launches), not only event timestamps.
    work: bool,
    params: Params,
    /// The host callbacks recorded into the batch; see [`Batch::map_on_submit`].
    completion: Arc<Completion>,
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
        // The encoder is locked while a pass is open: end it first.
        self.pass = None;
        self.commands += 1;
        self.encoder.get_or_insert_with(|| {
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("kiln batch") })
        })
    }

    /// The open compute pass to record a launch into, begun on first use.
    pub(crate) fn pass(&mut self, device: &wgpu::Device) -> &mut wgpu::ComputePass<'static> {
        self.work = true;
        self.commands += 1;
        let encoder = self.encoder.get_or_insert_with(|| {
            device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("kiln batch") })
        });
        self.pass.get_or_insert_with(|| {
            let desc = wgpu::ComputePassDescriptor { label: Some("kiln launches"), timestamp_writes: None };
            encoder.begin_compute_pass(&desc).forget_lifetime()
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

    /// Map `buffer` for reading once the batch's submission has run, and
    /// call `f` with the outcome. The batch, and every wait for it, is
    /// complete only once `f` has returned.
    pub(crate) fn map_on_submit(
        &mut self,
        device: &wgpu::Device,
        buffer: &wgpu::Buffer,
        f: impl FnOnce(std::result::Result<(), wgpu::BufferAsyncError>) + Send + 'static,
    ) {
        self.map_on_submit_as(device, buffer, wgpu::MapMode::Read, f);
    }

    /// [`Batch::map_on_submit`], mapping for `mode`.
    pub(crate) fn map_on_submit_as(
        &mut self,
        device: &wgpu::Device,
        buffer: &wgpu::Buffer,
        mode: wgpu::MapMode,
        f: impl FnOnce(std::result::Result<(), wgpu::BufferAsyncError>) + Send + 'static,
    ) {
        let hold = Hold::new(&self.completion);
        self.marks(device).map_buffer_on_submit(buffer, mode, .., move |r| {
            f(r);
            hold.ran();
        });
    }
}

/// An opened device, shared by its streams, events, buffers and kernels.
pub(crate) struct Context {
    pub(crate) device: wgpu::Device,
    pub(crate) queue: wgpu::Queue,
    pub(crate) info: DeviceInfo,
    pub(crate) limits: wgpu::Limits,
    pub(crate) faults: Arc<Faults>,
    completions: Arc<Completions>,
    batch: Mutex<Batch>,
    builtins: OnceLock<std::result::Result<Builtins, Error>>,
    /// Shared layouts and cached bind groups.
    pub(crate) bindings: Arc<Bindings>,
    /// Read-back buffers of event timestamps, unmapped and free for the next event.
    pub(crate) stamp_buffers: Arc<Mutex<Vec<wgpu::Buffer>>>,
    /// Device buffers dropped and kept for reuse.
    pub(crate) pool: Arc<crate::pool::Pool>,
    /// Staging buffers of transfers, kept for reuse.
    pub(crate) staging: Arc<crate::staging::Staging>,
    /// Where kiln writes the SPIR-V of kernels with `kiln_mul_wide` itself
    /// (`spirv.rs`): the device takes SPIR-V as it is.
    pub(crate) spirv: Option<crate::spirv::Target>,
}

impl Context {
    pub(crate) fn new(
        device: wgpu::Device,
        queue: wgpu::Queue,
        info: DeviceInfo,
        limits: wgpu::Limits,
        spirv: Option<crate::spirv::Target>,
    ) -> Self {
        let faults = Faults::install(&device, &info.name);
        let completions = Completions::new();
        let batch = Batch {
            encoder: None,
            pass: None,
            commands: 0,
            staged: 0,
            work: false,
            params: Params { blocks: Vec::new(), current: 0, shadow: Vec::new() },
            completion: Completion::new(1, &completions),
            last: Marker::completed(),
            next: Arc::new(OnceLock::new()),
        };
        let batch = Mutex::new(batch);
        let bindings = Arc::new(Bindings::new(&device));
        let pool = Arc::new(crate::pool::Pool::new(limits.max_buffer_size));
        Context {
            pool,
            device,
            queue,
            info,
            limits,
            faults,
            completions,
            batch,
            builtins: OnceLock::new(),
            bindings,
            stamp_buffers: Arc::default(),
            staging: Arc::default(),
            spirv,
        }
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

    /// Record commands with `f` like [`Context::record`], without an error
    /// scope: for `f` that creates nothing, or scopes what it creates itself.
    pub(crate) fn record_unscoped<R>(&self, f: impl FnOnce(&mut Batch) -> Result<R>) -> Result<R> {
        let mut batch = self.batch()?;
        let out = f(&mut batch)?;
        if batch.is_full() {
            self.submit(&mut batch)?;
        }
        Ok(out)
    }

    /// A slot in the batch's scalar block holding `bytes`: the bind group
    /// of the block (layout [`Bindings::params`]) and the dynamic offset.
    /// `bytes` is at most 64 KiB (checked by the launch).
    pub(crate) fn params(&self, batch: &mut Batch, bytes: &[u8]) -> Result<(wgpu::BindGroup, u32)> {
        let (slot, align) = self.params_slot(bytes.len() as u64);
        let p = &mut batch.params;
        let mut offset = (p.shadow.len() as u64).next_multiple_of(align);
        if p.current < p.blocks.len() && offset + slot > PARAMS_BLOCK {
            p.retire(&self.queue);
            offset = 0;
        }
        if p.current == p.blocks.len() {
            let what = "kiln kernel scalars";
            let usage = wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST;
            let buffer = create_buffer(&self.device, &self.info.name, what, PARAMS_BLOCK, usage, false)?;
            p.blocks.push(ParamsBlock { buffer, groups: HashMap::new() });
        }
        let block = &mut p.blocks[p.current];
        let group = match block.groups.get(&slot) {
            Some(g) => g.clone(),
            None => {
                let group = self.params_group(&block.buffer, slot)?;
                block.groups.insert(slot, group.clone());
                group
            }
        };
        p.shadow.resize(offset as usize, 0);
        p.shadow.extend_from_slice(bytes);
        Ok((group, offset as u32))
    }

    /// A bind group of the scalars' layout binding `slot` bytes of `buffer`
    /// from its start (each launch then picks its slot by dynamic offset).
    pub(crate) fn params_group(&self, buffer: &wgpu::Buffer, slot: u64) -> Result<wgpu::BindGroup> {
        let make = || {
            self.device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("kiln kernel scalars"),
                layout: &self.bindings.params,
                entries: &[wgpu::BindGroupEntry { binding: 0, resource: binding(buffer, 0, slot) }],
            })
        };
        match scoped(&self.device, make) {
            (group, None) => Ok(group),
            (_, Some(e)) => Err(driver("binding kernel scalars", &e)),
        }
    }

    /// The size of the uniform binding that holds `len` bytes of scalars,
    /// and the alignment of its dynamic offset.
    pub(crate) fn params_slot(&self, len: u64) -> (u64, u64) {
        let align = u64::from(self.limits.min_uniform_buffer_offset_alignment.max(16));
        let slot = len.max(16).next_multiple_of(PARAMS_SLOT).min(self.limits.max_uniform_buffer_binding_size.max(len));
        (slot, align)
    }

    /// Submit the batch (if it holds anything) and return the marker of the
    /// latest submission.
    pub(crate) fn submit(&self, batch: &mut Batch) -> Result<Marker> {
        batch.pass = None;
        let Some(encoder) = batch.encoder.take() else {
            return Ok(batch.last.clone());
        };
        batch.commands = 0;
        batch.staged = 0;
        batch.work = false;
        batch.params.retire(&self.queue);
        batch.params.current = 0;
        // The batch's own share of its completion goes to a callback that
        // wgpu runs only once the device has finished the submission, so
        // that a batch without map callbacks is not complete at once. It is
        // registered on the encoder, hence for this very submission.
        let number = batch.completion.number();
        let next = Completion::new(number + 1, &self.completions);
        let hold = Hold::new(&std::mem::replace(&mut batch.completion, next));
        encoder.on_submitted_work_done(move || hold.ran());
        let (index, error) = scoped(&self.device, || self.queue.submit([encoder.finish()]));
        batch.last = Marker { index: Some(index), number };
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

    /// Whether `marker`'s submission is complete, host callbacks included,
    /// polling the device once (without blocking) if it is not yet; `what`
    /// names the query for errors.
    pub(crate) fn is_done(&self, marker: &Marker, what: &str) -> Result<bool> {
        if self.completions.state(marker.number) == State::Running {
            self.lost_during(what)?;
            self.poll(wgpu::PollType::Poll, what)?;
        }
        match self.completions.state(marker.number) {
            State::Running => Ok(false),
            State::Complete => Ok(true),
            State::Abandoned => Err(self.abandoned(what)),
        }
    }

    /// Block until `marker`'s submission is complete, host callbacks
    /// included, with any number of threads polling the same device;
    /// `what` names the wait for errors.
    ///
    /// On a GPU, for the first [`SPIN`] the device is polled without blocking, as
    /// CUDA's default synchronization spins: a blocking wait in the driver
    /// wakes late (NVIDIA's Vulkan driver on an H200: a launch and a wait
    /// took 100 to 150 us where the work took a few). After that, each
    /// round polls the device, waiting for the submission (a poll runs
    /// the callbacks it collects before returning), then, if the callbacks
    /// have not all run, gives the thread that collected them a moment to
    /// run them before polling again. A lost device, or callbacks wgpu
    /// dropped without running, end the wait with an error.
    ///
    /// The device wait has no timeout: one that expires races with other
    /// threads' polls and submits in wgpu-core 30 (`Device::maintain` reads
    /// the fence, another thread retires the later submissions, and the
    /// stale fence value then fails an assertion, dropping the callbacks it
    /// collected). The driver ends a wait on a lost device with an error.
    pub(crate) fn wait(&self, marker: &Marker, what: &str) -> Result<()> {
        let Some(index) = &marker.index else { return self.lost_during(what) };
        // A software adapter runs the work on the host's cores, which a spin would take from it.
        let spin = self.info.kind.is_gpu().then(Instant::now);
        loop {
            match self.completions.state(marker.number) {
                State::Complete => return self.lost_during(what),
                State::Abandoned => return Err(self.abandoned(what)),
                State::Running => {}
            }
            self.lost_during(what)?;
            // A poll without a wait index never meets the assertion the
            // timeout note below describes: wgpu-core checks it only for waits.
            if spin.is_some_and(|t| t.elapsed() < SPIN) {
                self.poll(wgpu::PollType::Poll, what)?;
                std::hint::spin_loop();
                continue;
            }
            let wait = wgpu::PollType::Wait { submission_index: Some(index.clone()), timeout: None };
            if self.poll(wait, what)? {
                self.completions.wait(marker.number, HANDOFF);
            }
        }
    }

    /// Poll the device: run the callbacks of finished submissions, waiting
    /// first as `poll_type` says. `Ok(false)` when a wait timed out.
    ///
    /// wgpu panics where a poll meets a lost device (its `Device::poll`
    /// treats every error but a timeout or a wrong index as fatal); kiln
    /// returns `DeviceLost` (the device-lost callback has recorded the
    /// cause by then) or a driver error instead.
    fn poll(&self, poll_type: wgpu::PollType, what: &str) -> Result<bool> {
        match catch_unwind(AssertUnwindSafe(|| self.device.poll(poll_type))) {
            Ok(Ok(_)) => Ok(true),
            Ok(Err(wgpu::PollError::Timeout)) => Ok(false),
            Ok(Err(e)) => Err(Error::driver(BackendKind::Wgpu, format!("device poll ({what})"), e)),
            Err(panic) => {
                self.lost_during(what)?;
                let text = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied());
                Err(Error::driver(BackendKind::Wgpu, format!("device poll ({what})"), text.unwrap_or("wgpu panicked")))
            }
        }
    }

    /// `Err(DeviceLost)`, naming `what` was under way, once the device is gone.
    fn lost_during(&self, what: &str) -> Result<()> {
        self.faults.check_lost().map_err(|e| match e {
            Error::DeviceLost { device, cause } => {
                Error::DeviceLost { device, cause: format!("{cause} (during {what})") }
            }
            e => e,
        })
    }

    fn abandoned(&self, what: &str) -> Error {
        match self.lost_during(what) {
            Err(e) => e,
            Ok(()) => Error::driver(
                BackendKind::Wgpu,
                what,
                "wgpu dropped callbacks of the submission without running them (the device was lost or destroyed)",
            ),
        }
    }

    /// Submit everything, wait for it, and report errors kept from earlier work.
    pub(crate) fn synchronize(&self, what: &str) -> Result<()> {
        let marker = self.flush()?;
        self.wait(&marker, what)?;
        self.faults.take()
    }
}
