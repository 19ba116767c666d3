//! What a stress run counted, how its memory compared, and how it failed.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use kiln_core::{Error, HostMemoryStats, MemoryInfo, MemoryStats};

use super::kind::OpKind;
use super::watchdog::Stall;
use crate::Mismatch;

/// The counters workers bump as they go (relaxed atomics: they are read for
/// progress and for the report, never to order anything).
#[derive(Debug, Default)]
pub(crate) struct Tally {
    runs: [AtomicU64; OpKind::ALL.len()],
    skipped: [AtomicU64; OpKind::ALL.len()],
    steps: AtomicU64,
    checks: AtomicU64,
    elements: AtomicU64,
    moved: AtomicU64,
    allocated: AtomicU64,
    live: AtomicU64,
    peak: AtomicU64,
}

impl Tally {
    pub(crate) fn ran(&self, op: OpKind) {
        self.runs[op as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn skipped(&self, op: OpKind) {
        self.skipped[op as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn step(&self) {
        self.steps.fetch_add(1, Ordering::Relaxed);
    }

    /// A comparison of `elements` values passed.
    pub(crate) fn checked(&self, elements: usize) {
        self.checks.fetch_add(1, Ordering::Relaxed);
        self.elements.fetch_add(elements as u64, Ordering::Relaxed);
    }

    /// `bytes` crossed between host and device.
    pub(crate) fn moved(&self, bytes: usize) {
        self.moved.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// `bytes` of device memory were allocated by the suite itself.
    pub(crate) fn allocated(&self, bytes: usize) {
        self.allocated.fetch_add(bytes as u64, Ordering::Relaxed);
        let live = self.live.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
        self.peak.fetch_max(live, Ordering::Relaxed);
    }

    /// `bytes` allocated earlier were dropped.
    pub(crate) fn released(&self, bytes: usize) {
        self.live.fetch_sub(bytes as u64, Ordering::Relaxed);
    }

    pub(crate) fn steps(&self) -> u64 {
        self.steps.load(Ordering::Relaxed)
    }

    pub(crate) fn checks(&self) -> u64 {
        self.checks.load(Ordering::Relaxed)
    }

    pub(crate) fn bytes_moved(&self) -> u64 {
        self.moved.load(Ordering::Relaxed)
    }

    pub(crate) fn peak_live(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    pub(crate) fn total_skipped(&self) -> u64 {
        self.skipped.iter().map(|s| s.load(Ordering::Relaxed)).sum()
    }

    /// The counters into `report`.
    pub(crate) fn fill(&self, report: &mut StressReport) {
        report.steps = self.steps();
        report.checks = self.checks();
        report.elements_checked = self.elements.load(Ordering::Relaxed);
        report.bytes_moved = self.bytes_moved();
        report.bytes_allocated = self.allocated.load(Ordering::Relaxed);
        report.peak_live_bytes = self.peak_live();
        report.ops = OpKind::ALL
            .iter()
            .map(|&op| OpCount {
                op,
                runs: self.runs[op as usize].load(Ordering::Relaxed),
                skipped: self.skipped[op as usize].load(Ordering::Relaxed),
            })
            .collect();
    }
}

/// How often one kind of operation ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpCount {
    /// The operation.
    pub op: OpKind,
    /// Steps that ran it to the end, checks passed.
    pub runs: u64,
    /// Steps the device refused (`Error::Unsupported`: a dtype it lacks).
    pub skipped: u64,
}

/// The device's free memory before the run and after everything was
/// dropped, and the verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryCheck {
    /// The run did not get as far as the comparison.
    NotRun,
    /// The device does not report free memory (`Device::memory` refused).
    NotReported {
        /// Why, as the device said.
        reason: String,
    },
    /// Both measurements, and the slack the verdict allows.
    Measured {
        /// Before the first step.
        before: MemoryInfo,
        /// After the last buffer was dropped and the device synchronized.
        after: MemoryInfo,
        /// How many fewer free bytes after than before are still a pass.
        slack: u64,
    },
}

impl MemoryCheck {
    /// Free bytes missing after the run (0 when more are free).
    ///
    /// # Examples
    /// ```
    /// use kiln_conformance::stress::MemoryCheck;
    /// use kiln_core::MemoryInfo;
    /// let m = |free| MemoryInfo { free, total: 1000, allocated: None, reserved: None };
    /// let check = MemoryCheck::Measured { before: m(900), after: m(850), slack: 40 };
    /// assert_eq!(check.lost(), 50);
    /// assert!(!check.ok());
    /// assert!(MemoryCheck::Measured { before: m(900), after: m(950), slack: 0 }.ok());
    /// assert!(MemoryCheck::NotReported { reason: "no".into() }.ok());
    /// ```
    pub fn lost(&self) -> u64 {
        match self {
            MemoryCheck::Measured { before, after, .. } => before.free.saturating_sub(after.free),
            _ => 0,
        }
    }

    /// Whether no more memory went missing than the slack allows (true when
    /// nothing was measured).
    pub fn ok(&self) -> bool {
        match self {
            MemoryCheck::Measured { slack, .. } => self.lost() <= *slack,
            _ => true,
        }
    }
}

impl fmt::Display for MemoryCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemoryCheck::NotRun => f.write_str("not compared (the run stopped early)"),
            MemoryCheck::NotReported { reason } => write!(f, "not reported ({reason})"),
            MemoryCheck::Measured { before, after, slack } => {
                let diff = after.free as i128 - before.free as i128;
                write!(
                    f,
                    "free {} before, {} after ({}{}; slack {}){}",
                    mib(before.free),
                    mib(after.free),
                    if diff < 0 { "-" } else { "+" },
                    mib(diff.unsigned_abs() as u64),
                    mib(*slack),
                    if self.ok() { "" } else { ": NOT RETURNED" }
                )
            }
        }
    }
}

/// `bytes` in MiB, with one decimal.
fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// What a stress run did.
#[derive(Debug, Clone, PartialEq)]
pub struct StressReport {
    /// The device, as `DeviceInfo` prints it.
    pub device: String,
    /// The base seed.
    pub seed: u64,
    /// Worker threads.
    pub threads: usize,
    /// Streams per worker thread.
    pub streams_per_thread: usize,
    /// The largest allocation of the churn, after capping to the device.
    pub max_alloc_bytes: u64,
    /// Elements of the largest pattern input.
    pub max_elements: usize,
    /// Wall time from the first step to the memory comparison.
    pub elapsed: Duration,
    /// Steps run (each one operation).
    pub steps: u64,
    /// Runs and skips of each operation.
    pub ops: Vec<OpCount>,
    /// Comparisons against the host that passed.
    pub checks: u64,
    /// Elements those comparisons covered.
    pub elements_checked: u64,
    /// Bytes copied between host and device.
    pub bytes_moved: u64,
    /// Bytes of device memory the suite allocated, in all.
    pub bytes_allocated: u64,
    /// The most device memory the suite held at once (its own buffers, not
    /// the kernels' scratch).
    pub peak_live_bytes: u64,
    /// Free memory before and after.
    pub memory: MemoryCheck,
    /// The device's pool after the run, before any trim: used, cached and
    /// its bound, peak (`None` when the run did not get that far).
    pub pool: Option<MemoryStats>,
    /// The device's host pool at the same time.
    pub host_pool: Option<HostMemoryStats>,
    /// Free memory before the run and after `trim_memory(0)` and
    /// `trim_host_memory(0)`, against the slack without the pools' share
    /// ([`leak_slack`](super::leak_slack)).
    pub leak: MemoryCheck,
}

impl StressReport {
    /// Steps the device refused, over every operation.
    pub fn skipped(&self) -> u64 {
        self.ops.iter().map(|o| o.skipped).sum()
    }
}

impl fmt::Display for StressReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.device)?;
        writeln!(
            f,
            "  seed {:#x}, {} threads x {} streams, allocations up to {}, patterns up to {} elements",
            self.seed,
            self.threads,
            self.streams_per_thread,
            bytes(self.max_alloc_bytes),
            self.max_elements
        )?;
        writeln!(
            f,
            "  {} steps in {:.1} s; {} checks passed ({} elements); {} moved; {} allocated, peak {}",
            self.steps,
            self.elapsed.as_secs_f64(),
            self.checks,
            self.elements_checked,
            bytes(self.bytes_moved),
            bytes(self.bytes_allocated),
            bytes(self.peak_live_bytes)
        )?;
        let ops: Vec<String> = self
            .ops
            .iter()
            .map(|o| match o.skipped {
                0 => format!("{} {}", o.op, o.runs),
                s => format!("{} {} ({s} skipped)", o.op, o.runs),
            })
            .collect();
        writeln!(f, "  ops: {}", ops.join(", "))?;
        if let Some(p) = &self.pool {
            write!(
                f,
                "  pool: used {}, cached {} (bound {}), peak {}",
                bytes(p.used),
                bytes(p.cached),
                bytes(p.cache_bound),
                bytes(p.peak)
            )?;
            match (p.reserved, super::allocator_free(p)) {
                (Some(r), Some(free)) => {
                    writeln!(f, "; the allocator reserves {} ({} beyond them)", bytes(r), bytes(free))?
                }
                _ => writeln!(f)?,
            }
        }
        if let Some(h) = &self.host_pool {
            writeln!(
                f,
                "  host pool: used {}, cached {} (bound {}), peak {}",
                bytes(h.used),
                bytes(h.cached),
                bytes(h.cache_bound),
                bytes(h.peak)
            )?;
        }
        writeln!(f, "  memory: {}", self.memory)?;
        write!(f, "  after trim_memory(0): {}", self.leak)
    }
}

/// `bytes` in the largest binary unit that keeps a number of at least 1.
pub(crate) fn bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} B") } else { format!("{v:.1} {}", UNITS[unit]) }
}

/// Where in a run a failure happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// The worker thread (0-based).
    pub thread: usize,
    /// Its step number (0-based, per thread).
    pub step: u64,
    /// The operation ("scan"), or the phase ("Stream::synchronize").
    pub op: &'static str,
    /// What it worked on: dtype, sizes, streams, values.
    pub detail: String,
    /// The seed of the step's own generator (derived from the base seed,
    /// the thread and the step).
    pub step_seed: u64,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "thread {} step {} `{}` (step seed {:#x})", self.thread, self.step, self.op, self.step_seed)?;
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// Why a stress run failed.
#[derive(Debug, Clone, PartialEq)]
pub enum Cause {
    /// The configuration or the device cannot run the suite (no thread, no
    /// bound, a stream that cannot be created).
    Setup(Error),
    /// A result differed from the host's.
    Mismatch {
        /// The step.
        site: Site,
        /// The first bad index, the values there and around it.
        mismatch: Mismatch,
    },
    /// The library returned an error.
    Library {
        /// The step.
        site: Site,
        /// The error.
        error: Error,
    },
    /// A worker panicked.
    Panic {
        /// The worker thread.
        thread: usize,
        /// The panic message.
        message: String,
    },
    /// No progress for the watchdog's timeout. The stuck threads are left
    /// running, detached.
    Deadlock {
        /// The timeout.
        timeout: Duration,
        /// Each stuck thread: its operation and how long it was silent.
        stalls: Vec<Stall>,
    },
    /// More free memory went missing than the slack allows.
    MemoryNotReturned {
        /// Free bytes missing after the run.
        lost: u64,
        /// The slack.
        slack: u64,
    },
    /// A pool kept more bytes for reuse than its policy's bound.
    CacheOverBound {
        /// Which pool: "device" or "host".
        pool: &'static str,
        /// Bytes kept.
        cached: u64,
        /// The bound.
        bound: u64,
    },
    /// The backend's allocator held more free memory (beyond the bytes in
    /// use and the pool's) than the pool's bound and the allocator's own
    /// blocks allow.
    AllocatorOverBound {
        /// Bytes reserved by the allocator and neither used nor kept by the pool.
        free: u64,
        /// The pool's bound and the allocator's blocks
        /// ([`ALLOCATOR_BLOCKS`](super::ALLOCATOR_BLOCKS)).
        bound: u64,
    },
    /// After `trim_memory(0)` and `trim_host_memory(0)`, memory was still
    /// missing past the slack without the pools' share, or a pool still
    /// kept or counted bytes.
    Leak {
        /// What was left.
        detail: String,
    },
}

impl fmt::Display for Cause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Cause::Setup(e) => write!(f, "cannot start: {e}"),
            Cause::Mismatch { site, mismatch } => write!(f, "wrong result at {site}\n{mismatch}"),
            Cause::Library { site, error } => write!(f, "error at {site}: {error}"),
            Cause::Panic { thread, message } => write!(f, "thread {thread} panicked: {message}"),
            Cause::Deadlock { timeout, stalls } => {
                write!(f, "no progress for {:.0} s (watchdog):", timeout.as_secs_f64())?;
                for s in stalls {
                    write!(f, "\n  {s}")?;
                }
                Ok(())
            }
            Cause::MemoryNotReturned { lost, slack } => write!(
                f,
                "{} of free device memory missing after everything was dropped (more than the slack of {})",
                bytes(*lost),
                bytes(*slack)
            ),
            Cause::CacheOverBound { pool, cached, bound } => write!(
                f,
                "the {pool} pool keeps {} for reuse after the run, more than its policy's bound of {}",
                bytes(*cached),
                bytes(*bound)
            ),
            Cause::AllocatorOverBound { free, bound } => write!(
                f,
                "the device's allocator holds {} that neither buffers nor the pool use after the run, \
                 more than the pool's bound and the allocator's last blocks, {}",
                bytes(*free),
                bytes(*bound)
            ),
            Cause::Leak { detail } => write!(f, "leak after trim_memory(0): {detail}"),
        }
    }
}

/// A failed stress run: why, and what it had done by then.
#[derive(Debug, Clone, PartialEq)]
pub struct StressError {
    /// Why it failed.
    pub cause: Cause,
    /// The counters up to the failure.
    pub report: StressReport,
}

impl fmt::Display for StressError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "stress run (seed {:#x}) failed: {}", self.report.seed, self.cause)
    }
}

impl std::error::Error for StressError {}
