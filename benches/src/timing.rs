//! Timing with device events, warm-up first, median and min of many runs;
//! and end-to-end on the host clock, for the latency case.

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
    /// Median over the timed runs, in milliseconds.
    pub median_ms: f64,
    /// Fastest timed run, in milliseconds.
    pub min_ms: f64,
    /// Number of timed runs.
    pub runs: usize,
    /// How the runs were timed.
    pub timer: Timer,
}

/// Run `op` `warmup` times untimed, then `runs` times timed, each run alone
/// between two events on `stream`. `op` gets the run's index (for rotating
/// among buffer sets). Falls back to a fenced wall clock when the device
/// cannot time events, and says so in [`Timing::timer`].
pub fn time_runs<B: Backend>(
    stream: &Stream<B>,
    warmup: usize,
    runs: usize,
    mut op: impl FnMut(usize) -> Result<()>,
) -> Result<Timing> {
    for i in 0..warmup {
        op(i)?;
    }
    stream.synchronize()?;
    let (start, stop) = (stream.device().create_event()?, stream.device().create_event()?);
    let mut times = Vec::with_capacity(runs);
    let mut timer = if B::KIND == BackendKind::Cpu { Timer::MonotonicClock } else { Timer::DeviceEvents };
    for i in 0..runs.max(1) {
        let t = match timer {
            Timer::DeviceEvents | Timer::MonotonicClock => {
                stream.record(&start)?;
                op(warmup + i)?;
                stream.record(&stop)?;
                stop.synchronize()?;
                match stop.elapsed_since(&start) {
                    Ok(d) => d.as_secs_f64() * 1e3,
                    Err(Error::Unsupported { .. }) => {
                        timer = Timer::WallClockFenced;
                        fenced(stream, &mut op, warmup + i)?
                    }
                    Err(e) => return Err(e),
                }
            }
            // (End-to-end timing is `time_end_to_end`'s, never set here.)
            Timer::WallClockFenced | Timer::EndToEnd => fenced(stream, &mut op, warmup + i)?,
        };
        times.push(t);
    }
    times.sort_by(f64::total_cmp);
    Ok(Timing { median_ms: median(&times), min_ms: times[0], runs: times.len(), timer })
}

fn fenced<B: Backend>(stream: &Stream<B>, op: &mut impl FnMut(usize) -> Result<()>, i: usize) -> Result<f64> {
    stream.synchronize()?;
    let t0 = Instant::now();
    op(i)?;
    stream.synchronize()?;
    Ok(t0.elapsed().as_secs_f64() * 1e3)
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
    Ok(Timing { median_ms: median(&times), min_ms: times[0], runs: times.len(), timer: Timer::EndToEnd })
}

/// Median of sorted values (mean of the middle two for an even count).
pub fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use super::median;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[1.0, 2.0, 9.0]), 2.0);
        assert_eq!(median(&[1.0, 2.0, 4.0, 9.0]), 3.0);
        assert!(median(&[]).is_nan());
    }
}
