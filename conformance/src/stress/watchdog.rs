//! The watchdog: heartbeats that workers bump once per step, and the check
//! that turns a heartbeat which stopped moving into a report instead of a
//! hang.

use std::fmt;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// What one worker is doing, bumped once per step.
///
/// A worker calls [`enter`](Self::enter) when it starts an operation and
/// [`beat`](Self::beat) whenever it makes progress; [`finish`](Self::finish)
/// when it is done, after which the watchdog leaves it alone.
///
/// # Examples
/// ```
/// use kiln_conformance::stress::Heartbeat;
/// let hb = Heartbeat::new("thread 0");
/// hb.enter("scan", 7);
/// hb.describe("scan f32, n = 1000, stream 1".to_string());
/// hb.beat();
/// assert_eq!(hb.beats(), 2); // entering an operation counts as progress too
/// assert_eq!(hb.activity(), ("scan", 7, "scan f32, n = 1000, stream 1".to_string()));
/// ```
#[derive(Debug)]
pub struct Heartbeat {
    name: String,
    beats: AtomicU64,
    finished: AtomicBool,
    activity: Mutex<Activity>,
}

#[derive(Debug, Clone, Default)]
struct Activity {
    op: &'static str,
    step: u64,
    detail: String,
}

impl Heartbeat {
    /// A heartbeat named `name` ("thread 2"), at zero beats, doing nothing yet.
    pub fn new(name: impl Into<String>) -> Self {
        Heartbeat {
            name: name.into(),
            beats: AtomicU64::new(0),
            finished: AtomicBool::new(false),
            activity: Mutex::new(Activity { op: "starting", ..Activity::default() }),
        }
    }

    /// The name reports use.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Note that the worker starts `op` (its step number `step`) and beat.
    pub fn enter(&self, op: &'static str, step: u64) {
        *self.lock() = Activity { op, step, detail: String::new() };
        self.beat();
    }

    /// Say what the current operation works on (dtype, sizes, streams); a
    /// stall report shows it.
    pub fn describe(&self, detail: String) {
        self.lock().detail = detail;
    }

    /// Record progress.
    pub fn beat(&self) {
        self.beats.fetch_add(1, Ordering::Release);
    }

    /// The worker is done; it can no longer stall.
    pub fn finish(&self) {
        self.finished.store(true, Ordering::Release);
    }

    /// Progress so far.
    pub fn beats(&self) -> u64 {
        self.beats.load(Ordering::Acquire)
    }

    /// Whether [`finish`](Self::finish) was called.
    pub fn is_finished(&self) -> bool {
        self.finished.load(Ordering::Acquire)
    }

    /// The current operation, its step number and its description.
    pub fn activity(&self) -> (&'static str, u64, String) {
        let a = self.lock();
        (a.op, a.step, a.detail.clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Activity> {
        self.activity.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A worker whose heartbeat has not moved for the watchdog's timeout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stall {
    /// The heartbeat's name ("thread 2").
    pub name: String,
    /// The operation it was in.
    pub op: &'static str,
    /// That operation's step number.
    pub step: u64,
    /// What the operation worked on, if it said.
    pub detail: String,
    /// How long since its heartbeat last moved.
    pub silent_for: Duration,
}

impl fmt::Display for Stall {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} stuck in `{}` (step {}) for {:.1} s",
            self.name,
            self.op,
            self.step,
            self.silent_for.as_secs_f64()
        )?;
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

/// Watches heartbeats and names those that stopped moving.
///
/// Time is passed in, so the check itself never sleeps and can be tested
/// with made-up instants.
///
/// # Examples
/// ```
/// use std::time::{Duration, Instant};
/// use kiln_conformance::stress::{Heartbeat, Watchdog};
///
/// let (a, b) = (Heartbeat::new("thread 0"), Heartbeat::new("thread 1"));
/// let mut dog = Watchdog::new(Duration::from_secs(60));
/// let t0 = Instant::now();
/// assert!(dog.check(&[&a, &b], t0).is_empty());
/// a.beat();                                     // thread 0 moves on, thread 1 does not
/// let stalls = dog.check(&[&a, &b], t0 + Duration::from_secs(61));
/// assert_eq!(stalls.len(), 1);
/// assert_eq!(stalls[0].name, "thread 1");
/// ```
#[derive(Debug)]
pub struct Watchdog {
    timeout: Duration,
    /// Per heartbeat: the beat count last seen and when it was first seen.
    seen: Vec<(u64, Instant)>,
}

impl Watchdog {
    /// A watchdog that reports a heartbeat silent for `timeout`.
    pub fn new(timeout: Duration) -> Self {
        Watchdog { timeout, seen: Vec::new() }
    }

    /// The timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The heartbeats among `beats` (always passed in the same order) that
    /// are not finished and have not moved for the timeout, as of `now`.
    /// A heartbeat's silence is counted from the first check that saw its
    /// current count.
    pub fn check(&mut self, beats: &[&Heartbeat], now: Instant) -> Vec<Stall> {
        self.seen.resize(beats.len(), (u64::MAX, now));
        let mut stalls = Vec::new();
        for (hb, seen) in beats.iter().zip(&mut self.seen) {
            let count = hb.beats();
            if count != seen.0 {
                *seen = (count, now);
                continue;
            }
            let silent_for = now.saturating_duration_since(seen.1);
            if !hb.is_finished() && silent_for >= self.timeout {
                let (op, step, detail) = hb.activity();
                stalls.push(Stall { name: hb.name().to_string(), op, step, detail, silent_for });
            }
        }
        stalls
    }
}
