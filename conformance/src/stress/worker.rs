//! One worker thread: its streams and pinned buffers, its steps, the checks
//! it keeps in flight, and how it stops.

use std::collections::VecDeque;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use kiln_core::{Backend, Device, Priority, Stream};
use rand::{Rng, SeedableRng};

use super::kind::OpKind;
use super::ops;
use super::report::{Cause, Site, Tally};
use super::step::{Check, Fault, Finish, Pinned, Plan, Started, Step};
use super::watchdog::Heartbeat;
use super::{StepAction, StepHook, StepInfo};
use crate::CaseRng;

/// Page-locked buffer pairs per worker.
const PINNED_PAIRS: usize = 2;

/// What the workers and the thread that runs them share.
#[derive(Debug, Default)]
pub(crate) struct Shared {
    pub stop: AtomicBool,
    failure: Mutex<Option<Cause>>,
    pub tally: Arc<Tally>,
}

impl Shared {
    /// Keep `cause` if it is the first failure, and stop every worker.
    pub(crate) fn fail(&self, cause: Cause) {
        self.failure.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(cause);
        self.stop.store(true, Ordering::Release);
    }

    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    pub(crate) fn take_failure(&self) -> Option<Cause> {
        self.failure.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// One worker's part of a run.
pub(crate) struct Worker<B: Backend> {
    pub index: usize,
    pub dev: Device<B>,
    pub plan: Arc<Plan>,
    pub seed: u64,
    pub streams: usize,
    /// This worker's share of the iterations.
    pub steps: Option<u64>,
    pub deadline: Option<Instant>,
    pub shared: Arc<Shared>,
    pub heartbeat: Arc<Heartbeat>,
    pub hook: Option<StepHook>,
}

/// A SplitMix64 step: a well-mixed 64-bit function of its input.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The seed of one step's generator: the same for the same base seed,
/// thread and step, whatever the other threads do.
pub(crate) fn step_seed(seed: u64, thread: usize, step: u64) -> u64 {
    mix(mix(seed ^ mix(thread as u64)) ^ step)
}

impl<B: Backend> Worker<B> {
    /// Run the steps, record a failure, and mark the heartbeat finished
    /// once everything the worker owned is dropped.
    pub(crate) fn run(self) {
        let (shared, heartbeat, index) = (self.shared.clone(), self.heartbeat.clone(), self.index);
        match catch_unwind(AssertUnwindSafe(|| self.steps())) {
            Ok(Ok(())) => {}
            Ok(Err(cause)) => shared.fail(*cause),
            Err(panic) => {
                shared.fail(Cause::Panic { thread: index, message: crate::runner::panic_text(&*panic) });
            }
        }
        heartbeat.finish();
    }

    fn site(&self, op: &'static str, step: u64, detail: String) -> Site {
        Site { thread: self.index, step, op, detail, step_seed: step_seed(self.seed, self.index, step) }
    }

    /// Count an operation's outcome; `Err` for a failure.
    fn settle(&self, op: OpKind, site: Site, outcome: Result<(), Fault>) -> Result<(), Box<Cause>> {
        match outcome {
            Ok(()) => self.shared.tally.ran(op),
            Err(Fault::Unsupported) => self.shared.tally.skipped(op),
            Err(Fault::Mismatch(mismatch)) => return Err(Box::new(Cause::Mismatch { site, mismatch })),
            Err(Fault::Library(error)) => return Err(Box::new(Cause::Library { site, error })),
        }
        Ok(())
    }

    /// Read back and check an operation started earlier, showing it on the
    /// heartbeat meanwhile.
    fn finish(&self, op: OpKind, site: Site, finish: Finish) -> Result<(), Box<Cause>> {
        self.heartbeat.enter(site.op, site.step);
        self.heartbeat.describe(format!("read-back and check of {}", site.detail));
        self.settle(op, site, finish())
    }

    fn steps(self) -> Result<(), Box<Cause>> {
        let setup = |e| Box::new(Cause::Library { site: self.site("setup", 0, String::new()), error: e });
        let priorities = [Priority::Low, Priority::Normal, Priority::High];
        let streams: Vec<Stream<B>> = (0..self.streams)
            .map(|i| self.dev.create_stream(priorities[(self.index + i) % priorities.len()]))
            .collect::<kiln_core::Result<_>>()
            .map_err(setup)?;
        let mut rng = CaseRng::seed_from_u64(step_seed(self.seed, self.index, u64::MAX));
        let mut pinned: Vec<Pinned<B>> = (0..PINNED_PAIRS)
            .map(|_| Pinned::new(&self.dev, self.plan.pinned_len(&mut rng)))
            .collect::<kiln_core::Result<_>>()
            .map_err(setup)?;
        // Checks in flight: at most one per stream, so every stream can
        // have work queued while the host enqueues more.
        let mut pending: VecDeque<(OpKind, Site, Finish)> = VecDeque::new();
        let mut step = 0u64;
        while !self.shared.stopped()
            && self.steps.is_none_or(|n| step < n)
            && self.deadline.is_none_or(|d| Instant::now() < d)
        {
            let seed = step_seed(self.seed, self.index, step);
            let mut rng = CaseRng::seed_from_u64(seed);
            let op = OpKind::pick(&mut rng);
            self.heartbeat.enter(op.name(), step);
            let action = self.hook.as_ref().map_or(StepAction::Run, |h| h(&StepInfo { thread: self.index, step, op }));
            let mut st = Step {
                streams: &streams,
                plan: &self.plan,
                rng,
                check: Check { corrupt: action == StepAction::Corrupt, tally: self.shared.tally.clone() },
                pinned: &mut pinned,
                heartbeat: &self.heartbeat,
                detail: String::new(),
            };
            let started = ops::start(op, &mut st);
            let finish_early = st.rng.random_ratio(1, 4);
            let site = self.site(op.name(), step, std::mem::take(&mut st.detail));
            match started {
                Ok(Started::Done) => self.settle(op, site, Ok(()))?,
                Ok(Started::Pending(finish)) => pending.push_back((op, site, finish)),
                Err(fault) => self.settle(op, site, Err(fault))?,
            }
            self.shared.tally.step();
            // At most one check in flight per stream; now and then one fewer.
            let keep = if finish_early { pending.len().saturating_sub(1) } else { pending.len() };
            while pending.len() > keep.min(streams.len()) {
                let Some((op, site, finish)) = pending.pop_front() else { break };
                self.finish(op, site, finish)?;
            }
            self.heartbeat.beat();
            step += 1;
        }
        if self.shared.stopped() {
            // Another worker failed: what is in flight is dropped unchecked.
            self.heartbeat.enter("dropping buffers and streams", step);
            return Ok(());
        }
        while let Some((op, site, finish)) = pending.pop_front() {
            self.finish(op, site, finish)?;
        }
        self.heartbeat.enter("Stream::synchronize", step);
        for (i, s) in streams.iter().enumerate() {
            s.synchronize().map_err(|e| {
                let site = self.site("Stream::synchronize", step, format!("stream {i} at the end"));
                Box::new(Cause::Library { site, error: e })
            })?;
            self.heartbeat.beat();
        }
        self.heartbeat.enter("dropping buffers and streams", step);
        drop(pinned);
        drop(streams);
        Ok(())
    }
}
