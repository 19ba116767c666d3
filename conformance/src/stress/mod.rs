//! The stress suite: the soundness of streams, events and memory under load.
//!
//! Where the conformance cases run one pattern at a time on one stream,
//! a stress run keeps many threads busy at once, each with several
//! streams of its own, and checks every result against the host:
//!
//! - **Random patterns** ([`OpKind`]): map, elementwise, axpy, a sum
//!   returned to the host, an inclusive scan, a sort of `u32` keys, fill
//!   and sequence, on random dtypes the device computes in, at
//!   log-uniform sizes. Outputs are poisoned first; floats are judged with
//!   the suite's tolerances (ulps, and the bound of a tree of partial sums
//!   for sums and scans), integers exactly.
//! - **Hand-offs**: data produced on stream A, an event recorded there,
//!   stream B waiting on it and consuming the data.
//! - **Buffers dropped in flight**: an input allocated on stream A and read
//!   on stream B, dropped as soon as that read is enqueued, after which A
//!   allocates buffers of the same size and overwrites them. If the free
//!   did not wait for B, B reads the new contents, and the check fails.
//! - **Allocation churn** from 1 byte to [`StressConfig::max_alloc_bytes`]
//!   (sizes log-uniform), first and last bytes written and read back.
//! - **Pinned buffers reused**: each thread keeps page-locked host buffers
//!   for the whole run and sends many asynchronous copies through them,
//!   overwriting the source as soon as a copy is enqueued.
//! - **Checks in flight**: a worker reads a result back only after it has
//!   started up to one more operation per stream, so its streams hold
//!   queued work while it enqueues more.
//!
//! A step the device refuses (`Error::Unsupported`, a dtype it lacks) is a
//! skip, counted in the report. Any other error, a wrong result or a
//! panic stops the run and is returned with where it happened.
//!
//! # Seeds
//! Every step draws from its own ChaCha generator, seeded from the base
//! seed, the thread and the step number, so the operations, dtypes, sizes
//! and values of a thread are the same on every run with the same seed
//! (which `kiln stress` prints). The interleaving of threads and streams is
//! not: a failure names the step's seed, its operation and sizes.
//!
//! # The watchdog
//! Every worker bumps a [`Heartbeat`] at each step. When one has not moved
//! for [`StressConfig::timeout`], the run returns [`Cause::Deadlock`],
//! naming each stuck thread, its operation and how long it has been silent,
//! instead of hanging; the stuck threads are left running, detached.
//!
//! # Memory
//! Before the first step and after every buffer, stream and pinned buffer
//! is dropped and the device synchronized, the run reads the device's free
//! memory ([`Device::memory`]). Pools and drivers keep some memory (a
//! stream-ordered pool keeps what it had at its peak; modules and stacks
//! load as kernels first run), so the run fails only when more is missing
//! than [`default_slack`] allows, or [`StressConfig::memory_slack`]. On
//! the CPU the figure is the host's available memory, which other
//! processes move too. A device that does not report its memory gets
//! "not reported" ([`MemoryCheck::NotReported`]).
//!
//! That reading is taken with the pools as the run left them, untrimmed;
//! each pool (the device's and the host pool) must then keep no more for
//! reuse than its [`CachePolicy`](kiln_core::CachePolicy) bound
//! ([`Cause::CacheOverBound`]). Then the run gives the pools' memory back
//! (`trim_memory(0)`, `trim_host_memory(0)`) and checks for leaks
//! ([`Cause::Leak`]): the pools keep nothing, kiln counts in use what it
//! counted before the run, and the free memory is back within
//! [`leak_slack`] (or [`StressConfig::memory_slack`]).
//!
//! # Examples
//! ```
//! use kiln_conformance::stress::{self, StressConfig};
//!
//! let dev = kiln_core::Device::<kiln_cpu::Cpu>::open(0).unwrap();
//! let cfg = StressConfig {
//!     threads: 2,
//!     iterations: Some(40),
//!     duration: None,
//!     max_alloc_bytes: 1 << 20,
//!     ..StressConfig::default()
//! };
//! let report = stress::run(&dev, &cfg, |_| {}).unwrap();
//! assert_eq!(report.steps, 40);
//! assert!(report.checks > 0);
//! println!("{report}");
//! ```

mod handoff;
mod kind;
mod memory;
mod ops;
mod patterns;
mod report;
mod step;
mod watchdog;
mod worker;

use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use kiln_core::{Backend, Device, Error, MemoryInfo, MemoryStats};

pub use kind::OpKind;
pub use report::{Cause, MemoryCheck, OpCount, Site, StressError, StressReport};
pub use watchdog::{Heartbeat, Stall, Watchdog};

use step::Plan;
use worker::{Shared, Worker};

/// The largest churn allocation when none is given: 256 MiB.
pub const DEFAULT_MAX_ALLOC: u64 = 256 << 20;

/// How long a worker may go without progress before the watchdog reports it.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a run lasts when neither a duration nor a number of iterations is given.
pub const DEFAULT_DURATION: Duration = Duration::from_secs(60);

/// Which step a [`StepHook`] is called for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepInfo {
    /// The worker thread (0-based).
    pub thread: usize,
    /// The step number (0-based, per thread).
    pub step: u64,
    /// The operation the step is about to run.
    pub op: OpKind,
}

/// What a step does after its [`StepHook`] returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StepAction {
    /// Run as usual.
    #[default]
    Run,
    /// Run, and alter one element of each result before checking it: a
    /// wrong result the check must catch.
    Corrupt,
}

/// A function each worker calls before each step. Tests use it to show
/// that the checks and the watchdog fire: return [`StepAction::Corrupt`],
/// or block.
pub type StepHook = Arc<dyn Fn(&StepInfo) -> StepAction + Send + Sync>;

/// What a stress run does, how long, with what seed.
#[derive(Clone)]
pub struct StressConfig {
    /// Worker threads.
    pub threads: usize,
    /// Streams each worker creates (priorities low, normal, high in turn).
    pub streams_per_thread: usize,
    /// Stop starting steps after this long. With `iterations` too, the run
    /// stops at whichever comes first; with neither, it lasts [`DEFAULT_DURATION`].
    pub duration: Option<Duration>,
    /// Steps in all, shared out over the threads.
    pub iterations: Option<u64>,
    /// The largest churn allocation in bytes; capped to the device's
    /// largest buffer and, where the device reports its memory, to
    /// `memory / (16 x threads)`. Pattern operands hold up to a sixteenth
    /// of it in elements (at most 2^22).
    pub max_alloc_bytes: u64,
    /// The base seed.
    pub seed: u64,
    /// The watchdog's timeout: the longest a worker may go without progress.
    pub timeout: Duration,
    /// How many fewer free bytes after the run than before still pass;
    /// `None` for [`default_slack`].
    pub memory_slack: Option<u64>,
    /// Called before every step (for tests of the suite itself).
    pub hook: Option<StepHook>,
}

impl Default for StressConfig {
    /// 4 threads of 3 streams for [`DEFAULT_DURATION`], allocations up to
    /// [`DEFAULT_MAX_ALLOC`], the suite's default seed, the default
    /// timeout and slack, no hook.
    fn default() -> Self {
        StressConfig {
            threads: 4,
            streams_per_thread: 3,
            duration: None,
            iterations: None,
            max_alloc_bytes: DEFAULT_MAX_ALLOC,
            seed: crate::DEFAULT_SEED,
            timeout: DEFAULT_TIMEOUT,
            memory_slack: None,
            hook: None,
        }
    }
}

impl fmt::Debug for StressConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StressConfig")
            .field("threads", &self.threads)
            .field("streams_per_thread", &self.streams_per_thread)
            .field("duration", &self.duration)
            .field("iterations", &self.iterations)
            .field("max_alloc_bytes", &self.max_alloc_bytes)
            .field("seed", &self.seed)
            .field("timeout", &self.timeout)
            .field("memory_slack", &self.memory_slack)
            .field("hook", &self.hook.as_ref().map(|_| "set"))
            .finish()
    }
}

/// Where a run stands, passed to the progress callback about 20 times a second.
#[derive(Debug, Clone, PartialEq)]
pub struct StressProgress {
    /// Since the first step.
    pub elapsed: Duration,
    /// The run's duration bound, if any.
    pub duration: Option<Duration>,
    /// Steps started so far.
    pub steps: u64,
    /// The run's iteration bound, if any.
    pub iterations: Option<u64>,
    /// Comparisons passed so far.
    pub checks: u64,
    /// Bytes copied between host and device so far.
    pub bytes_moved: u64,
    /// Steps the device refused so far.
    pub skipped: u64,
}

impl StressProgress {
    /// How far the run is, from 0 to 1, by whichever bound is nearer.
    ///
    /// # Examples
    /// ```
    /// use std::time::Duration;
    /// use kiln_conformance::stress::StressProgress;
    /// let p = StressProgress {
    ///     elapsed: Duration::from_secs(3),
    ///     duration: Some(Duration::from_secs(10)),
    ///     steps: 50,
    ///     iterations: Some(100),
    ///     checks: 0,
    ///     bytes_moved: 0,
    ///     skipped: 0,
    /// };
    /// assert_eq!(p.fraction(), 0.5);
    /// ```
    pub fn fraction(&self) -> f64 {
        let by_time = self.duration.map(|d| self.elapsed.as_secs_f64() / d.as_secs_f64().max(1e-9));
        let by_steps = self.iterations.map(|n| self.steps as f64 / n.max(1) as f64);
        by_time.into_iter().chain(by_steps).fold(0.0f64, f64::max).min(1.0)
    }
}

/// How many fewer free bytes after a run than before still pass, when the
/// configuration does not say: twice the most the suite held at once (a
/// stream-ordered pool may keep its peak, and kernels' scratch comes on
/// top), plus a sixteenth of the device's memory and at least 256 MiB
/// (modules, stacks and driver caches loaded during the run).
///
/// # Examples
/// ```
/// use kiln_conformance::stress::default_slack;
/// assert_eq!(default_slack(1 << 20, 1 << 30), (2 << 20) + (256 << 20));
/// assert_eq!(default_slack(0, 80 << 30), 5 << 30);
/// ```
pub fn default_slack(peak_live_bytes: u64, total_bytes: u64) -> u64 {
    2 * peak_live_bytes + (total_bytes / 16).max(256 << 20)
}

/// How many fewer free bytes after `trim_memory(0)` than before the run
/// still pass the leak check: [`default_slack`] without the pools' share,
/// a sixteenth of the device's memory and at least 256 MiB (modules,
/// stacks and driver caches loaded during the run).
///
/// # Examples
/// ```
/// use kiln_conformance::stress::{default_slack, leak_slack};
/// assert_eq!(leak_slack(1 << 30), 256 << 20);
/// assert_eq!(leak_slack(80 << 30), default_slack(0, 80 << 30));
/// ```
pub fn leak_slack(total_bytes: u64) -> u64 {
    (total_bytes / 16).max(256 << 20)
}

/// How often the calling thread looks at the workers.
const TICK: Duration = Duration::from_millis(50);

/// Run the stress suite on `dev` as `cfg` says; `progress` is called on the
/// calling thread about 20 times a second and once at the end.
///
/// Returns the report, or the first failure (a wrong result, a library
/// error, a panic, a stall seen by the watchdog, memory not returned)
/// with the report up to it.
pub fn run<B: Backend>(
    dev: &Device<B>,
    cfg: &StressConfig,
    mut progress: impl FnMut(&StressProgress),
) -> Result<StressReport, Box<StressError>> {
    let plan = Arc::new(Plan::new(dev.info(), cfg.max_alloc_bytes, cfg.threads));
    let mut report = StressReport {
        device: dev.info().to_string(),
        seed: cfg.seed,
        threads: cfg.threads,
        streams_per_thread: cfg.streams_per_thread,
        max_alloc_bytes: plan.max_alloc,
        max_elements: plan.max_elements,
        elapsed: Duration::ZERO,
        steps: 0,
        ops: Vec::new(),
        checks: 0,
        elements_checked: 0,
        bytes_moved: 0,
        bytes_allocated: 0,
        peak_live_bytes: 0,
        memory: MemoryCheck::NotRun,
        pool: None,
        host_pool: None,
        leak: MemoryCheck::NotRun,
    };
    let shared = Arc::new(Shared::default());
    let failed = |cause: Cause, report: &mut StressReport| {
        shared.tally.fill(report);
        Box::new(StressError { cause, report: report.clone() })
    };
    if let Err(e) = validate(cfg) {
        return Err(failed(Cause::Setup(e), &mut report));
    }
    let (duration, iterations) = match (cfg.duration, cfg.iterations) {
        (None, None) => (Some(DEFAULT_DURATION), None),
        bounds => bounds,
    };

    // The device idle, its memory as it is before the first step.
    let before = match memory_now(dev, cfg.timeout) {
        Ok(m) => m,
        Err(cause) => return Err(failed(*cause, &mut report)),
    };
    let (counted_before, host_before) = match dev.memory_stats() {
        Ok(s) => (s, dev.host_memory_stats()),
        Err(error) => return Err(failed(Cause::Library { site: site("Device::memory_stats"), error }, &mut report)),
    };

    let started = Instant::now();
    let deadline = duration.map(|d| started + d);
    let mut handles = Vec::with_capacity(cfg.threads);
    let mut beats = Vec::with_capacity(cfg.threads);
    for index in 0..cfg.threads {
        let heartbeat = Arc::new(Heartbeat::new(format!("thread {index}")));
        let worker = Worker {
            index,
            dev: dev.clone(),
            plan: plan.clone(),
            seed: cfg.seed,
            streams: cfg.streams_per_thread,
            steps: iterations.map(|n| share(n, cfg.threads, index)),
            deadline,
            shared: shared.clone(),
            heartbeat: heartbeat.clone(),
            hook: cfg.hook.clone(),
        };
        match thread::Builder::new().name(format!("kiln-stress-{index}")).spawn(move || worker.run()) {
            Ok(h) => handles.push(h),
            Err(e) => {
                shared.stop.store(true, Ordering::Release);
                let e = Error::invalid("starting a stress worker thread", e.to_string());
                return Err(failed(Cause::Setup(e), &mut report));
            }
        }
        beats.push(heartbeat);
    }

    let snapshot = |elapsed| StressProgress {
        elapsed,
        duration,
        steps: shared.tally.steps(),
        iterations,
        checks: shared.tally.checks(),
        bytes_moved: shared.tally.bytes_moved(),
        skipped: shared.tally.total_skipped(),
    };
    let mut dog = Watchdog::new(cfg.timeout);
    let tick = TICK.min(cfg.timeout / 4);
    while !handles.iter().all(|h| h.is_finished()) {
        progress(&snapshot(started.elapsed()));
        let beats: Vec<&Heartbeat> = beats.iter().map(|b| &**b).collect();
        let stalls = dog.check(&beats, Instant::now());
        if !stalls.is_empty() {
            shared.stop.store(true, Ordering::Release);
            report.elapsed = started.elapsed();
            // A failure that came first explains the rest, which may be stuck behind it.
            let cause = shared.take_failure().unwrap_or(Cause::Deadlock { timeout: cfg.timeout, stalls });
            return Err(failed(cause, &mut report));
        }
        thread::sleep(tick);
    }
    for h in handles {
        // Finished: the join does not block, and the worker caught its own panics.
        let _ = h.join();
    }
    report.elapsed = started.elapsed();
    progress(&snapshot(report.elapsed));
    if let Some(cause) = shared.take_failure() {
        return Err(failed(cause, &mut report));
    }

    // Every worker dropped its buffers, pinned buffers and streams.
    let after = match memory_now(dev, cfg.timeout) {
        Ok(m) => m,
        Err(cause) => return Err(failed(*cause, &mut report)),
    };
    shared.tally.fill(&mut report);
    report.memory = match (before.clone(), after) {
        (Ok(before), Ok(after)) => MemoryCheck::Measured {
            before,
            after,
            slack: cfg.memory_slack.unwrap_or_else(|| default_slack(report.peak_live_bytes, before.total)),
        },
        (Err(reason), _) | (_, Err(reason)) => MemoryCheck::NotReported { reason },
    };
    report.elapsed = started.elapsed();
    // The pools as the run left them, untrimmed.
    match dev.memory_stats() {
        Ok(s) => report.pool = Some(s),
        Err(error) => return Err(failed(Cause::Library { site: site("Device::memory_stats"), error }, &mut report)),
    }
    report.host_pool = Some(dev.host_memory_stats());
    if let MemoryCheck::Measured { slack, .. } = report.memory
        && !report.memory.ok()
    {
        let lost = report.memory.lost();
        return Err(failed(Cause::MemoryNotReturned { lost, slack }, &mut report));
    }
    if let Some(cause) = over_bound(report.pool.as_ref(), report.host_pool.as_ref()) {
        return Err(failed(cause, &mut report));
    }
    if let Err(cause) = leak_check(dev, cfg, before, counted_before, host_before, &mut report) {
        return Err(failed(*cause, &mut report));
    }
    Ok(report)
}

/// Free memory a backend's allocator may hold past the pool's bound: the
/// blocks it keeps even when nothing is carved from them, or that a few
/// buffers pin. kiln-wgpu's gpu-allocator keeps the last block of each
/// memory type, of at most 16 MiB (8 MiB in host memory).
pub const ALLOCATOR_BLOCKS: u64 = 32 << 20;

/// Bytes the backend's allocator reserves beyond those in use and those the
/// pool keeps, where it says what it reserves.
pub(crate) fn allocator_free(p: &MemoryStats) -> Option<u64> {
    p.reserved.map(|r| r.saturating_sub(p.used.saturating_add(p.cached)))
}

/// A pool keeping more for reuse than its policy's bound, if one does; or
/// the backend's allocator holding more free memory, beyond the bytes in
/// use and the pool's, than that same bound and [`ALLOCATOR_BLOCKS`]
/// (blocks that nothing uses, or that a few kept buffers pin).
fn over_bound(pool: Option<&MemoryStats>, host: Option<&kiln_core::HostMemoryStats>) -> Option<Cause> {
    if let Some(p) = pool.filter(|p| p.cached > p.cache_bound) {
        return Some(Cause::CacheOverBound { pool: "device", cached: p.cached, bound: p.cache_bound });
    }
    if let Some(p) = pool {
        let bound = p.cache_bound.saturating_add(ALLOCATOR_BLOCKS);
        if let Some(free) = allocator_free(p).filter(|&f| f > bound) {
            return Some(Cause::AllocatorOverBound { free, bound });
        }
    }
    let h = host.filter(|h| h.cached > h.cache_bound)?;
    Some(Cause::CacheOverBound { pool: "host", cached: h.cached, bound: h.cache_bound })
}

/// Give every pool's memory back (`trim_memory(0)`, `trim_host_memory(0)`)
/// and check that nothing stays: the pools keep nothing, kiln counts what
/// it counted before the run, and the free memory is back within
/// [`leak_slack`]. Fills `report.leak`.
fn leak_check<B: Backend>(
    dev: &Device<B>,
    cfg: &StressConfig,
    before: Result<MemoryInfo, String>,
    counted_before: MemoryStats,
    host_before: kiln_core::HostMemoryStats,
    report: &mut StressReport,
) -> Result<(), Box<Cause>> {
    if let Err(error) = dev.trim_memory(0) {
        return Err(Box::new(Cause::Library { site: site("Device::trim_memory"), error }));
    }
    dev.trim_host_memory(0);
    let after = memory_now(dev, cfg.timeout)?;
    let counted = dev.memory_stats().map_err(|error| Cause::Library { site: site("Device::memory_stats"), error })?;
    let host = dev.host_memory_stats();
    report.leak = match (before, after) {
        (Ok(before), Ok(after)) => {
            MemoryCheck::Measured { before, after, slack: cfg.memory_slack.unwrap_or_else(|| leak_slack(before.total)) }
        }
        (Err(reason), _) | (_, Err(reason)) => MemoryCheck::NotReported { reason },
    };
    let mut left = Vec::new();
    if counted.cached != 0 || host.cached != 0 {
        left.push(format!("the pools still keep {} (device) and {} (host) bytes", counted.cached, host.cached));
    }
    if counted.used != counted_before.used || host.used != host_before.used {
        left.push(format!(
            "kiln counts {} device and {} host bytes in use, {} and {} before the run",
            counted.used, host.used, counted_before.used, host_before.used
        ));
    }
    if let MemoryCheck::Measured { slack, .. } = report.leak
        && !report.leak.ok()
    {
        left.push(format!(
            "{} of free memory missing (slack {})",
            report::bytes(report.leak.lost()),
            report::bytes(slack)
        ));
    }
    if left.is_empty() { Ok(()) } else { Err(Box::new(Cause::Leak { detail: left.join("; ") })) }
}

/// Where a reading before or after the run is made.
fn site(op: &'static str) -> Site {
    Site { thread: 0, step: 0, op, detail: "before or after the run".into(), step_seed: 0 }
}

/// `Err` for a configuration that cannot run.
fn validate(cfg: &StressConfig) -> kiln_core::Result<()> {
    let what = "StressConfig";
    if cfg.threads == 0 || cfg.streams_per_thread == 0 {
        return Err(Error::invalid(what, "threads and streams_per_thread must be at least 1"));
    }
    if cfg.timeout.is_zero() {
        return Err(Error::invalid(what, "the watchdog's timeout must be longer than zero"));
    }
    if cfg.max_alloc_bytes == 0 {
        return Err(Error::invalid(what, "max_alloc_bytes must be at least 1"));
    }
    Ok(())
}

/// Thread `index`'s share of `n` steps over `threads`.
fn share(n: u64, threads: usize, index: usize) -> u64 {
    let t = threads as u64;
    n / t + u64::from((index as u64) < n % t)
}

/// Synchronize `dev` and read its memory, on a thread of its own so that a
/// device that never finishes is reported after `timeout` rather than
/// hanging. `Ok(Err(reason))` when the device does not report its memory.
fn memory_now<B: Backend>(dev: &Device<B>, timeout: Duration) -> Result<Result<MemoryInfo, String>, Box<Cause>> {
    let (tx, rx) = mpsc::channel();
    let d = dev.clone();
    let spawned = thread::Builder::new().name("kiln-stress-memory".into()).spawn(move || {
        let _ = tx.send(d.synchronize().map(|()| d.memory()));
    });
    if let Err(e) = spawned {
        return Err(Box::new(Cause::Setup(Error::invalid("starting the stress run's memory thread", e.to_string()))));
    }
    match rx.recv_timeout(timeout) {
        Ok(Ok(Ok(m))) => Ok(Ok(m)),
        Ok(Ok(Err(e @ Error::Unsupported { .. }))) => Ok(Err(e.to_string())),
        Ok(Ok(Err(e))) => Err(Box::new(Cause::Library { site: site("Device::memory"), error: e })),
        Ok(Err(e)) => Err(Box::new(Cause::Library { site: site("Device::synchronize"), error: e })),
        Err(_) => Err(Box::new(Cause::Deadlock {
            timeout,
            stalls: vec![Stall {
                name: "the run's own thread".into(),
                op: "Device::synchronize",
                step: 0,
                detail: "before or after the run".into(),
                silent_for: timeout,
            }],
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(used: u64, cached: u64, cache_bound: u64, reserved: Option<u64>) -> MemoryStats {
        MemoryStats { used, peak: used, cached, cache_bound, reserved, limit: None, free: None, total: 0 }
    }

    #[test]
    fn pools_and_allocators_past_the_policy_fail_the_run() {
        // Within: the allocator holds 60 plus its blocks beyond 10 in use and 50 kept, bound 60.
        let most = 120 + ALLOCATOR_BLOCKS;
        assert!(over_bound(Some(&stats(10, 50, 60, Some(most))), None).is_none());
        assert!(over_bound(Some(&stats(10, 50, 60, None)), None).is_none());
        let pool = over_bound(Some(&stats(0, 61, 60, Some(61))), None);
        assert!(matches!(pool, Some(Cause::CacheOverBound { cached: 61, bound: 60, .. })), "{pool:?}");
        let allocator = over_bound(Some(&stats(10, 50, 60, Some(most + 1))), None);
        let (free, bound) = (61 + ALLOCATOR_BLOCKS, 60 + ALLOCATOR_BLOCKS);
        assert!(
            matches!(allocator, Some(Cause::AllocatorOverBound { free: f, bound: b }) if (f, b) == (free, bound)),
            "{allocator:?}"
        );
        assert!(allocator.is_some_and(|c| c.to_string().contains("allocator")));
    }
}
