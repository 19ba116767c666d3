//! Timing with device events: a fixed busy time of warm-up first, then
//! samples of at least a couple of milliseconds of work each (short
//! operations enqueued several times between one pair of events), median
//! and min of many, with the SM clock read during each; and end-to-end on
//! the host clock, for the latency case.

use std::time::Instant;

use kiln_core::{Backend, BackendKind, Error, Result, Stream};

/// How a row was timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Timer {
    /// Device events around the work (CUDA events, wgpu timestamp queries).
    DeviceEvents,
    /// The host's monotonic clock around eagerly executed work (the CPU backend).
    MonotonicClock,
    /// The host's clock between two full synchronizations, where the device
    /// has no timestamps: includes submission and wait latency.
    WallClockFenced,
    /// The host's monotonic clock around the launch and the blocking read
    /// back of its result: what a caller waits for, end to end.
    EndToEnd,
}

/// The result of timing one case.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Median over the timed samples of the time per operation, in milliseconds.
    pub median_ms: f64,
    /// Fastest sample's time per operation, in milliseconds.
    pub min_ms: f64,
    /// Number of timed samples.
    pub runs: usize,
    /// Operations enqueued back to back inside each timed sample (one pair
    /// of events around them all), so that a sample covers at least
    /// [`Sampling::sample_ms`] of work.
    pub launches: usize,
    /// How the samples were timed.
    pub timer: Timer,
    /// The device's SM clock while the samples ran (median of one reading
    /// per sample), MHz, where the device reports it (NVML).
    pub sm_clock_mhz: Option<u32>,
    /// The device's highest SM clock, MHz, where it reports it.
    pub max_sm_clock_mhz: Option<u32>,
}

impl Timing {
    /// The timing of per-operation times `sorted` (ascending, at least one),
    /// `launches` operations per sample, taken with `timer`; no clock.
    pub fn from_sorted(sorted: &[f64], launches: usize, timer: Timer) -> Timing {
        Timing {
            median_ms: median(sorted),
            min_ms: sorted[0],
            runs: sorted.len(),
            launches,
            timer,
            sm_clock_mhz: None,
            max_sm_clock_mhz: None,
        }
    }
}

/// How a case is sampled.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampling {
    /// Untimed operations first, at least (kernel builds, first allocations).
    pub warmup: usize,
    /// Then the device is kept busy for this long, untimed, so that its
    /// clocks are up before the first sample, ms.
    pub warmup_ms: f64,
    /// Timed samples (the median and min are taken over these).
    pub runs: usize,
    /// The least work one sample covers, ms: short operations are
    /// enqueued several times between one pair of events.
    pub sample_ms: f64,
}

/// The most operations one sample enqueues.
pub const MAX_LAUNCHES: usize = 1000;

/// How many operations of `ms` each cover `sample_ms`.
fn launches_for(ms: f64, sample_ms: f64) -> usize {
    if ms > 0.0 && ms.is_finite() { ((sample_ms / ms).ceil() as usize).clamp(1, MAX_LAUNCHES) } else { MAX_LAUNCHES }
}

/// The method every timed case follows, whatever times it.
///
/// `window(first, launches, timed)` enqueues operations `first ..
/// first + launches` between one pair of timers and returns the time of
/// the whole window in ms (`timed` is false while warming up). First
/// [`Sampling::warmup`] single operations; then one more gives the count
/// of operations that covers [`Sampling::sample_ms`]; then windows of that
/// many keep the device busy for [`Sampling::warmup_ms`] (the count
/// refined from each); then [`Sampling::runs`] timed windows. Returns the
/// time per operation of each timed window, sorted, and the count.
///
/// # Examples
/// ```
/// use kiln_benches::{sample_windows, Sampling};
/// let s = Sampling { warmup: 1, warmup_ms: 0.0, runs: 5, sample_ms: 2.0 };
/// // Operations of 0.1 ms each: 20 per window.
/// let (times, launches) = sample_windows::<()>(&s, |_, k, _| Ok(k as f64 * 0.1)).unwrap();
/// assert_eq!((times.len(), launches), (5, 20));
/// assert!(times.iter().all(|t| (t - 0.1).abs() < 1e-12));
/// ```
pub fn sample_windows<E>(
    s: &Sampling,
    window: impl FnMut(usize, usize, bool) -> std::result::Result<f64, E>,
) -> std::result::Result<(Vec<f64>, usize), E> {
    sample_windows_warmed(s, || true, window)
}

/// The most busy time a warm-up spends waiting for [`sample_windows_warmed`]'s
/// `warm` to hold, ms, after [`Sampling::warmup_ms`].
pub const MAX_CLOCK_WAIT_MS: f64 = 3000.0;

/// [`sample_windows`], with the warm-up kept going after
/// [`Sampling::warmup_ms`] until `warm()` holds (the device's clock is up,
/// say), for at most [`MAX_CLOCK_WAIT_MS`] more.
///
/// A GPU left idle while the host prepares a large case (an upload of a
/// GiB, say) lowers its clocks, and a fixed warm-up may end before the
/// clock governor has raised them again: the H200's Vulkan driver ran the
/// 256 Mi copy at 345 MHz for the whole of a 100 ms warm-up and its samples.
///
/// # Examples
/// ```
/// use kiln_benches::{sample_windows_warmed, Sampling};
/// let s = Sampling { warmup: 0, warmup_ms: 0.0, runs: 3, sample_ms: 1.0 };
/// let mut checks = 0;
/// // Warm only from the third check on: the warm-up runs windows until then.
/// let (times, _) = sample_windows_warmed::<()>(&s, || { checks += 1; checks >= 3 }, |_, k, _| Ok(k as f64)).unwrap();
/// assert_eq!((times.len(), checks), (3, 3));
/// ```
pub fn sample_windows_warmed<E>(
    s: &Sampling,
    mut warm: impl FnMut() -> bool,
    mut window: impl FnMut(usize, usize, bool) -> std::result::Result<f64, E>,
) -> std::result::Result<(Vec<f64>, usize), E> {
    let mut next = 0;
    let mut run = |launches: usize, timed: bool, next: &mut usize| {
        let ms = window(*next, launches, timed)?;
        *next += launches;
        Ok(ms / launches as f64)
    };
    for _ in 0..s.warmup {
        run(1, false, &mut next)?;
    }
    let mut launches = launches_for(run(1, false, &mut next)?, s.sample_ms);
    let busy = Instant::now();
    while busy.elapsed().as_secs_f64() * 1e3 < s.warmup_ms {
        launches = launches_for(run(launches, false, &mut next)?, s.sample_ms);
    }
    let waiting = Instant::now();
    while !warm() && waiting.elapsed().as_secs_f64() * 1e3 < MAX_CLOCK_WAIT_MS {
        launches = launches_for(run(launches, false, &mut next)?, s.sample_ms);
    }
    let mut times = Vec::with_capacity(s.runs.max(1));
    for _ in 0..s.runs.max(1) {
        times.push(run(launches, true, &mut next)?);
    }
    times.sort_by(f64::total_cmp);
    Ok((times, launches))
}

/// Whether `clock`'s SM clock is up, checked once per call: at 90% of its
/// highest or more, or, once a second has passed since the first check, at
/// 75% (a power limit may hold it there under load). Always true where NVML
/// reads no clock. A clock that merely stops rising is not enough: NVIDIA's
/// Vulkan driver held an H200 at 1005 MHz of 1980 for seconds of copies
/// before raising it again.
///
/// # Examples
/// ```
/// let mut up = kiln_benches::clock_is_up(None);
/// assert!(up(), "no clock to read: nothing to wait for");
/// ```
pub fn clock_is_up(clock: Option<&crate::clock::SmClock>) -> impl FnMut() -> bool + '_ {
    let max = clock.and_then(|c| c.max_sm_mhz()).map(u64::from);
    let mut first: Option<Instant> = None;
    move || {
        let (Some(c), Some(max)) = (clock, max) else { return true };
        let Some(now) = c.sm_mhz().map(u64::from) else { return true };
        let waited = first.get_or_insert_with(Instant::now).elapsed().as_secs_f64() >= 1.0;
        clock_ready(now, max, waited)
    }
}

/// [`clock_is_up`]'s rule: an SM clock of `now` MHz of `max` is up at 90%
/// or more, or at 75% once a second of waiting has passed (`waited`).
fn clock_ready(now: u64, max: u64, waited: bool) -> bool {
    now * 10 >= max * 9 || (waited && now * 4 >= max * 3)
}

/// Time `op` on `stream` by [`sample_windows`]: each window between two
/// events, the device's SM clock read while each timed window runs. `op`
/// gets the operation's index (for rotating among buffer sets). Falls back
/// to a fenced wall clock when the device cannot time events, and says so
/// in [`Timing::timer`].
pub fn time_runs<B: Backend>(
    stream: &Stream<B>,
    sampling: &Sampling,
    mut op: impl FnMut(usize) -> Result<()>,
) -> Result<Timing> {
    stream.synchronize()?;
    let (start, stop) = (stream.device().create_event()?, stream.device().create_event()?);
    let mut timer = if B::KIND == BackendKind::Cpu { Timer::MonotonicClock } else { Timer::DeviceEvents };
    let clock =
        (B::KIND != BackendKind::Cpu).then(|| crate::clock::SmClock::find(&stream.device().info().name)).flatten();
    let mut clocks = Vec::new();
    let (times, launches) = sample_windows_warmed(sampling, clock_is_up(clock.as_ref()), |first, launches, timed| {
        let ops = |op: &mut dyn FnMut(usize) -> Result<()>| (first..first + launches).try_for_each(op);
        // The window on the host clock between two full synchronizations.
        let fenced = |op: &mut dyn FnMut(usize) -> Result<()>| -> Result<f64> {
            stream.synchronize()?;
            let t0 = Instant::now();
            ops(op)?;
            stream.synchronize()?;
            Ok(t0.elapsed().as_secs_f64() * 1e3)
        };
        if timer == Timer::WallClockFenced {
            return fenced(&mut op);
        }
        stream.record(&start)?;
        ops(&mut op)?;
        stream.record(&stop)?;
        if let (true, Some(c)) = (timed, &clock) {
            clocks.extend(c.sm_mhz());
        }
        stop.synchronize()?;
        match stop.elapsed_since(&start) {
            Ok(d) => Ok(d.as_secs_f64() * 1e3),
            Err(Error::Unsupported { .. }) => {
                timer = Timer::WallClockFenced;
                fenced(&mut op)
            }
            Err(e) => Err(e),
        }
    })?;
    clocks.sort_unstable();
    Ok(Timing {
        sm_clock_mhz: clocks.get(clocks.len() / 2).copied(),
        max_sm_clock_mhz: clock.and_then(|c| c.max_sm_mhz()),
        ..Timing::from_sorted(&times, launches, timer)
    })
}

/// Run `op` `warmup` times untimed, then `runs` times (at least once), each
/// between two reads of the host's monotonic clock. `op` gets the run's
/// index and must return only once its result is on the host, so each time
/// is the whole round trip: launch, execution, read back.
///
/// # Examples
/// ```
/// use kiln_benches::{time_end_to_end, Timer};
/// let t = time_end_to_end(2, 5, |_| Ok::<_, ()>(std::thread::sleep(std::time::Duration::from_micros(50)))).unwrap();
/// assert_eq!((t.runs, t.timer), (5, Timer::EndToEnd));
/// assert!(t.min_ms >= 0.05 && t.median_ms >= t.min_ms);
/// ```
pub fn time_end_to_end<E>(
    warmup: usize,
    runs: usize,
    mut op: impl FnMut(usize) -> std::result::Result<(), E>,
) -> std::result::Result<Timing, E> {
    for i in 0..warmup {
        op(i)?;
    }
    let mut times = Vec::with_capacity(runs.max(1));
    for i in 0..runs.max(1) {
        let t0 = Instant::now();
        op(warmup + i)?;
        times.push(t0.elapsed().as_secs_f64() * 1e3);
    }
    times.sort_by(f64::total_cmp);
    Ok(Timing::from_sorted(&times, 1, Timer::EndToEnd))
}

/// Median of sorted values (mean of the middle two for an even count).
pub fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 }
}

#[cfg(test)]
mod tests {
    use super::clock_ready;

    #[test]
    fn a_clock_is_up_at_90_percent_or_at_75_after_waiting() {
        // The H200's Vulkan rows: idle at 345 MHz, held at 1005, of 1980.
        assert!(!clock_ready(345, 1980, false) && !clock_ready(345, 1980, true));
        assert!(!clock_ready(1005, 1980, false) && !clock_ready(1005, 1980, true));
        assert!(!clock_ready(1485, 1980, false) && clock_ready(1485, 1980, true));
        assert!(!clock_ready(1781, 1980, false) && clock_ready(1782, 1980, false));
        assert!(clock_ready(1980, 1980, false));
    }

    use super::median;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[1.0, 2.0, 9.0]), 2.0);
        assert_eq!(median(&[1.0, 2.0, 4.0, 9.0]), 3.0);
        assert!(median(&[]).is_nan());
    }
}
