//! The end-to-end latency of small work: the sum of 1 Ki f32 already on the
//! device, including reading the scalar back to the host, timed on the
//! host clock (launch, execution and read back: what a caller waits for);
//! the cost of one launch, from hundreds enqueued back to back; and the cost
//! of one kernel of a graph, from graphs of [`GRAPH_KERNELS`] replayed back to back.
//!
//! Throughput means nothing at 4 KiB, so these rows report microseconds;
//! [`latency_summary`] gathers them, with the peers' (CuPy's
//! `float(cp.sum(x))`, PyCUDA's `gpuarray.sum(x).get()`, CubeCL's reduce and
//! read back), into their own table.

use std::fmt::Write;

use kiln_core::{Backend, Error, Result, Stream};
use kiln_kernels::elementwise::{BinaryOp, binary_in_place};
use kiln_kernels::map::{MapOp, map};
use kiln_kernels::reduce::{ReduceOp, reduce};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use crate::case::{Case, Pattern};
use crate::options::RunOptions;
use crate::row::PeerCell;
use crate::row::Row;
use crate::timing::{Timer, Timing, time_end_to_end, time_runs};

/// Timed runs of the latency case, at least: a round trip is short and its
/// spread wide (scheduler wake-ups), so the median needs many.
pub(crate) const LATENCY_MIN_RUNS: usize = 200;

/// Untimed runs first, at least (kernel loads, the first allocations).
pub(crate) const LATENCY_MIN_WARMUP: usize = 10;

/// Dependent kernels in the graph of the graph case.
pub const GRAPH_KERNELS: usize = 100;

/// Whether this module runs `pattern`.
pub(crate) fn handles(pattern: Pattern) -> bool {
    pattern.is_latency()
}

/// Time the latency case on `stream`: `reduce` (which allocates its result,
/// launches and reads the scalar back, blocking) on 1 Ki random f32 in
/// [0.5, 2) uploaded beforehand. The first result is checked against the
/// host's sum.
pub(crate) fn run_case<B: Backend>(stream: &Stream<B>, case: &Case, opts: &RunOptions) -> Result<Timing> {
    match case.pattern {
        Pattern::LaunchOverhead => return launch_overhead(stream, opts),
        Pattern::GraphLaunch => return graph_launch(stream, opts),
        _ => {}
    }
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed ^ case.n as u64);
    let host: Vec<f32> = (0..case.n).map(|_| rng.random_range(0.5f32..2.0)).collect();
    let x = stream.upload(&host)?;
    stream.synchronize()?;
    let expected: f64 = host.iter().map(|&v| f64::from(v)).sum();
    let got = reduce(stream, ReduceOp::Sum, &x)?;
    if (f64::from(got) - expected).abs() > 1e-4 * expected {
        return Err(Error::invalid("bench reduce_latency", format!("sum is {got}, the host's {expected}")));
    }
    let (warmup, runs) = latency_runs(opts);
    time_end_to_end(warmup, runs, |_| reduce(stream, ReduceOp::Sum, &x).map(|_| ()))
}

/// Time back-to-back launches of `map square` over one f32 (the smallest
/// launch every backend makes), sampled as every case is, so that one
/// sample holds hundreds of launches: its time per launch is the launch's
/// cost, host and device together. The result is checked first.
fn launch_overhead<B: Backend>(stream: &Stream<B>, opts: &RunOptions) -> Result<Timing> {
    let x = stream.upload(&[3.0f32])?;
    let mut y = stream.upload(&[f32::NAN])?;
    map(stream, MapOp::Square, &x, &mut y)?;
    let got = y.to_vec()?[0];
    if got != 9.0 {
        return Err(Error::invalid("bench launch_overhead", format!("3 squared is {got}")));
    }
    time_runs(stream, &opts.sampling(), |_| map(stream, MapOp::Square, &x, &mut y))
}

/// Time back-to-back replays of a graph of [`GRAPH_KERNELS`] dependent
/// kernels (`x += 1` on one f32), sampled as every case is; the times are
/// per kernel. The result of one replay is checked first.
fn graph_launch<B: Backend>(stream: &Stream<B>, opts: &RunOptions) -> Result<Timing> {
    let mut x = stream.upload(&[0.0f32])?;
    let one = stream.upload(&[1.0f32])?;
    stream.begin_capture()?;
    let captured = (0..GRAPH_KERNELS).try_for_each(|_| binary_in_place(stream, BinaryOp::Add, &mut x, &one));
    let graph = stream.end_capture();
    captured?;
    let graph = graph?;
    graph.launch(stream)?;
    let got = x.to_vec()?[0];
    if got != GRAPH_KERNELS as f32 || graph.kernels() != GRAPH_KERNELS {
        return Err(Error::invalid(
            "bench graph_launch",
            format!("a replay of {} kernels gave {got}, not {GRAPH_KERNELS}", graph.kernels()),
        ));
    }
    let mut t = time_runs(stream, &opts.sampling(), |_| graph.launch(stream))?;
    t.median_ms /= GRAPH_KERNELS as f64;
    t.min_ms /= GRAPH_KERNELS as f64;
    Ok(t)
}

/// The warm-up and timed runs of a latency case under `opts`.
pub fn latency_runs(opts: &RunOptions) -> (usize, usize) {
    (opts.warmup.max(LATENCY_MIN_WARMUP), opts.runs.max(LATENCY_MIN_RUNS))
}

/// One end-to-end latency: a backend's, or a peer's on that backend's device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Latency {
    /// The backend ("cuda").
    pub backend: String,
    /// The peer, when it is a peer's ("cupy").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    /// The pattern ("reduce_latency").
    pub pattern: String,
    /// Elements summed.
    pub size: usize,
    /// Median over the runs, microseconds.
    pub median_us: f64,
    /// Fastest run, microseconds.
    pub min_us: f64,
    /// How it was timed.
    pub timer: Option<Timer>,
}

impl Latency {
    /// Who measured it: "cuda", or "cupy on cuda".
    pub fn series(&self) -> String {
        crate::scaling::series(&self.backend, self.peer.as_deref())
    }
}

/// The latency rows of a run (and each peer's measurement of them), in
/// microseconds.
///
/// # Examples
/// Not run as a doc test (the 200 timed round trips take a minute in a
/// debug build); the module's tests check the summary.
/// ```no_run
/// use kiln_benches::{latency_summary, BenchConfig, BenchVisitor};
/// use kiln_core::{Device, DeviceVisitor};
/// let config = BenchConfig { patterns: vec!["reduce_latency".into()], sizes: vec![1024], runs: 100, ..Default::default() };
/// let result = BenchVisitor::new(&config, &mut |_| {}).visit(&Device::<kiln_cpu::Cpu>::open(0)?)?;
/// let summary = latency_summary(&result.rows);
/// assert_eq!((summary.len(), summary[0].size), (1, 1024));
/// assert!(summary[0].median_us > 0.0 && summary[0].min_us <= summary[0].median_us);
/// # Ok::<(), kiln_core::Error>(())
/// ```
pub fn latency_summary(rows: &[Row]) -> Vec<Latency> {
    let mut out = Vec::new();
    for r in rows.iter().filter(|r| Pattern::from_name(&r.pattern).is_some_and(Pattern::is_latency)) {
        let (Some(median), Some(min)) = (r.median_ms, r.min_ms) else { continue };
        let record = |peer: Option<&String>, median_ms: f64, min_ms: f64, timer| Latency {
            backend: r.backend.clone(),
            peer: peer.cloned(),
            pattern: r.pattern.clone(),
            size: r.size,
            median_us: median_ms * 1e3,
            min_us: min_ms * 1e3,
            timer,
        };
        out.push(record(None, median, min, r.timer));
        for (peer, cell) in &r.peers {
            if let PeerCell::Measured { median_ms, min_ms, timer, .. } = cell {
                out.push(record(Some(peer), *median_ms, *min_ms, *timer));
            }
        }
    }
    out
}

/// The latencies as terminal tables, one per pattern.
pub fn render_latency(latencies: &[Latency]) -> String {
    let mut out = String::new();
    let mut patterns: Vec<&str> = Vec::new();
    for l in latencies {
        if !patterns.contains(&l.pattern.as_str()) {
            patterns.push(&l.pattern);
        }
    }
    for (k, pattern) in patterns.iter().enumerate() {
        let rows: Vec<&Latency> = latencies.iter().filter(|l| l.pattern == *pattern).collect();
        let size = crate::case::size_label(rows[0].size);
        if k > 0 {
            out.push('\n');
        }
        let _ = match *pattern {
            "launch_overhead" => {
                writeln!(out, "launch overhead: map of {size} f32, launched back to back, time per launch")
            }
            "graph_launch" => writeln!(
                out,
                "graph replay: {GRAPH_KERNELS} dependent kernels over {size} f32 as one graph, replayed back to back, \
                 time per kernel"
            ),
            _ => writeln!(out, "end-to-end latency: sum of {size} f32 on the device, read back included (host clock)"),
        };
        let _ = writeln!(out, "{:<20} {:>11} {:>11}  timer", "series", "median us", "min us");
        for l in rows {
            let timer = l.timer.map(|t| format!("{t:?}")).unwrap_or_default();
            let _ = writeln!(out, "{:<20} {:>11.1} {:>11.1}  {timer}", l.series(), l.median_us, l.min_us);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use kiln_core::{DType, Device};
    use kiln_cpu::Cpu;

    use super::*;
    use crate::case::LATENCY_ELEMENTS;

    #[test]
    fn the_case_runs_on_the_cpu_with_many_runs() {
        let dev = Device::<Cpu>::open(0).unwrap();
        let case = Case { pattern: Pattern::ReduceLatency, dtype: DType::F32, n: LATENCY_ELEMENTS };
        let t = run_case(&dev.stream(), &case, &RunOptions { warmup: 1, runs: 3, ..Default::default() }).unwrap();
        assert_eq!((t.runs, t.timer), (LATENCY_MIN_RUNS, Timer::EndToEnd));
        assert!(t.min_ms > 0.0 && t.min_ms <= t.median_ms);
    }

    #[test]
    fn peers_and_skipped_rows_in_the_summary() {
        let mut row = Row {
            backend: "cuda".into(),
            device: "d".into(),
            pattern: "reduce_latency".into(),
            dtype: "f32".into(),
            size: 1024,
            bytes: 4096,
            flops: 1024,
            median_ms: Some(0.012),
            min_ms: Some(0.010),
            runs: 200,
            launches: 1,
            sm_clock_mhz: None,
            max_sm_clock_mhz: None,
            timer: Some(Timer::EndToEnd),
            gb_per_s: None,
            tflop_per_s: None,
            ceiling_fraction: None,
            arithmetic: None,
            peak_tflop_per_s: None,
            peak_fraction: None,
            peers: Default::default(),
            note: None,
        };
        row.peers.insert(
            "cupy".into(),
            PeerCell::Measured {
                median_ms: 0.02,
                min_ms: 0.015,
                gb_per_s: None,
                ratio: 0.02 / 0.012,
                timer: Some(Timer::EndToEnd),
                calls: None,
            },
        );
        row.peers.insert("pycuda".into(), PeerCell::Absent { reason: "not installed".into() });
        let skipped = Row { backend: "wgpu".into(), median_ms: None, min_ms: None, ..row.clone() };
        let other = Row { pattern: "reduce_sum".into(), ..row.clone() };
        let s = latency_summary(&[row, skipped, other]);
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!(s[0].series(), "cuda");
        assert!((s[0].median_us - 12.0).abs() < 1e-9 && (s[0].min_us - 10.0).abs() < 1e-9);
        assert_eq!(s[1].series(), "cupy on cuda");
        assert!((s[1].median_us - 20.0).abs() < 1e-9 && (s[1].min_us - 15.0).abs() < 1e-9);
        let table = render_latency(&s);
        assert!(table.lines().any(|l| l.starts_with("cupy on cuda") && l.contains("20.0")), "{table}");
    }
}
