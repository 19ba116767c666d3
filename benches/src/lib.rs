//! kiln-benches: every pattern on every backend, against the ceiling and the peers.
//!
//! A bench run visits each device (through a [`kiln_core::DeviceVisitor`]), times every
//! selected [`Case`] with device events (warm-up first, median and min of
//! many runs, random inputs rotated among buffer sets past the size of any
//! cache), measures the ceiling (a large device-to-device copy: the faster of
//! the buffer copy and a copy kernel) on the same
//! device in the same run, and merges in the peers (CuPy and PyCUDA scripts
//! run on the same machine; with the `cubecl` feature, CubeCL on the wgpu
//! device). Every row carries its bytes and flops model, so GB/s, the
//! fraction of the ceiling and the ratio to each peer follow. From a run's
//! rows come the scaling of each series ([`scaling_summary`]: where fixed
//! costs stop dominating) and the end-to-end latency of small work
//! ([`latency_summary`], the `reduce_latency` case, in microseconds).
//!
//! # Examples
//! ```
//! use kiln_benches::{BenchConfig, BenchVisitor, Pattern};
//! use kiln_core::DeviceVisitor;
//! use kiln_core::Device;
//! use kiln_cpu::Cpu;
//! let config = BenchConfig { patterns: vec!["vector_add".into()], sizes: vec![1 << 12], runs: 3, ..Default::default() };
//! let result = BenchVisitor::new(&config, &mut |_| {}).visit(&Device::<Cpu>::open(0)?)?;
//! let row = &result.rows[0];
//! assert_eq!(row.pattern, "vector_add");
//! assert!(row.gb_per_s.unwrap() > 0.0);
//! # Ok::<(), kiln_core::Error>(())
//! ```
#![deny(missing_docs)]

mod array;
mod case;
mod clock;
#[cfg(feature = "cubecl")]
mod cubecl_peer;
#[cfg(feature = "cuda-system")]
pub mod cuda_system;
mod latency;
mod matrix;
mod options;
mod parallel;
mod peers;
mod plot;
mod report;
mod row;
mod run;
mod scaling;
mod table;
#[cfg(test)]
mod testing;
mod timing;

use std::collections::BTreeMap;

pub use case::{Case, Pattern, quick_sizes, size_label, square_side, sweep_sizes};
pub use clock::SmClock;
#[cfg(feature = "cubecl")]
pub use cubecl_peer::{CUBECL_VERSION, run_cubecl_peer};
pub use latency::{Latency, latency_runs, latency_summary, render_latency};
pub use options::RunOptions;
pub use peers::{Peer, PeerRow, peer_names, run_peers};
pub use plot::write_charts;
pub use report::{Header, Report, utc_now};
pub use row::{PeerCell, Row};
pub use run::{run_case, skip_reason};
pub use scaling::{Scaling, render_scaling, scaling_summary};
pub use table::{render, render_peer_calls};
pub use timing::{MAX_LAUNCHES, Sampling, Timer, Timing, sample_windows, time_end_to_end, time_runs};

use kiln_core::DeviceVisitor;

use kiln_core::{Backend, BackendKind, DType, Device, Result};

/// The commit the benches were built from (`-dirty` when the tree had changes).
pub const GIT_COMMIT: &str = env!("KILN_GIT_COMMIT");

/// What to run.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    /// Pattern names to run (substring match); empty for all.
    pub patterns: Vec<String>,
    /// Elements per array.
    pub sizes: Vec<usize>,
    /// Element type.
    pub dtype: DType,
    /// Timed samples per case (at least 20 for published numbers).
    pub runs: usize,
    /// Untimed runs first, at least.
    pub warmup: usize,
    /// Then untimed runs for this long, ms, so the device's clocks are up.
    pub warmup_ms: f64,
    /// The least device work in one timed sample, ms.
    pub sample_ms: f64,
}

impl Default for BenchConfig {
    fn default() -> Self {
        let o = RunOptions::default();
        BenchConfig {
            patterns: Vec::new(),
            sizes: sweep_sizes(),
            dtype: DType::F32,
            runs: o.runs,
            warmup: o.warmup,
            warmup_ms: o.warmup_ms,
            sample_ms: o.sample_ms,
        }
    }
}

impl BenchConfig {
    /// The run options of each case.
    pub fn run_options(&self) -> RunOptions {
        RunOptions {
            warmup: self.warmup,
            warmup_ms: self.warmup_ms,
            runs: self.runs,
            sample_ms: self.sample_ms,
            ..Default::default()
        }
    }

    /// The selected patterns.
    pub fn selected(&self) -> Vec<Pattern> {
        Pattern::ALL
            .into_iter()
            .filter(|p| self.patterns.is_empty() || self.patterns.iter().any(|f| p.name().contains(f.as_str())))
            .collect()
    }

    /// The selected cases, small sizes first; a pattern of fixed size (the
    /// latency case) comes once, after the sweep.
    pub fn cases(&self) -> Vec<Case> {
        let mut sizes = self.sizes.clone();
        sizes.sort_unstable();
        sizes.dedup();
        let selected = self.selected();
        let case = |pattern: Pattern, n| Case { pattern, dtype: pattern.fixed_dtype().unwrap_or(self.dtype), n };
        let swept = sizes
            .iter()
            .flat_map(|&n| selected.iter().filter(|p| p.fixed_size().is_none()).map(move |&pattern| case(pattern, n)));
        let fixed = selected.iter().filter_map(|&p| p.fixed_size().map(|n| case(p, n)));
        swept.chain(fixed).collect()
    }
}

/// Everything measured on one device.
#[derive(Debug, Clone)]
pub struct DeviceResult {
    /// The backend.
    pub backend: BackendKind,
    /// Device name and driver, for the header.
    pub device: String,
    /// The device-to-device copy rate measured first (the faster of the
    /// buffer copy and a copy kernel), GB/s.
    pub ceiling_gb_per_s: Option<f64>,
    /// One row per case.
    pub rows: Vec<Row>,
}

/// Runs a [`BenchConfig`] on whatever device it visits.
pub struct BenchVisitor<'a> {
    config: &'a BenchConfig,
    progress: &'a mut dyn FnMut(&str),
}

impl<'a> BenchVisitor<'a> {
    /// A visitor that reports each case's name to `progress` before running it.
    pub fn new(config: &'a BenchConfig, progress: &'a mut dyn FnMut(&str)) -> Self {
        BenchVisitor { config, progress }
    }
}

/// The elements of the ceiling copy: 64 Mi f32 (256 MiB, five times the
/// H100's L2), or the largest array the device binds.
fn ceiling_elements(limit_bytes: u64) -> usize {
    ((1u64 << 26).min(limit_bytes / 4)) as usize
}

/// The device-to-device copy rate of `n` 4-byte elements, GB/s: the faster
/// of the backend's buffer copy and a copy kernel (`map abs` on u32, the
/// identity), since some drivers run their buffer copies well below what
/// their compute kernels reach (NVIDIA's Vulkan driver: 833 against 2375
/// GB/s on the H100).
fn ceiling<B: Backend>(stream: &kiln_core::Stream<B>, n: usize, opts: &RunOptions) -> Option<f64> {
    [
        Case { pattern: Pattern::CopyD2d, dtype: DType::F32, n },
        Case { pattern: Pattern::Map(kiln_kernels::map::MapOp::Abs), dtype: DType::U32, n },
    ]
    .iter()
    .filter_map(|case| {
        let t = run_case(stream, case, opts).ok()?;
        Row::gbps(case.pattern.bytes(n, case.dtype), t.median_ms)
    })
    .reduce(f64::max)
}

impl DeviceVisitor for BenchVisitor<'_> {
    type Output = Result<DeviceResult>;

    fn visit<B: Backend>(self, device: &Device<B>) -> Result<DeviceResult> {
        let stream = device.create_stream(kiln_core::Priority::Normal)?;
        let info = device.info();
        let opts = self.config.run_options();
        let limit = info.limits.max_binding_bytes.min(info.limits.max_buffer_bytes);
        (self.progress)(&format!("{}: ceiling (device-to-device copy)", B::KIND));
        let ceiling = ceiling(&stream, ceiling_elements(limit), &opts);
        let mut rows = Vec::new();
        for case in self.config.cases() {
            (self.progress)(&format!("{} {} {}", B::KIND, case.pattern.name(), size_label(case.n)));
            rows.push(measure(&stream, &case, &opts, ceiling));
        }
        Ok(DeviceResult {
            backend: B::KIND,
            device: format!("{} ({})", info.name, info.driver),
            ceiling_gb_per_s: ceiling,
            rows,
        })
    }
}

fn measure<B: Backend>(stream: &kiln_core::Stream<B>, case: &Case, opts: &RunOptions, ceiling: Option<f64>) -> Row {
    let info = stream.device().info();
    let bytes = case.pattern.bytes(case.n, case.dtype);
    let mut row = Row {
        backend: B::KIND.to_string(),
        device: info.name.clone(),
        pattern: case.pattern.name(),
        dtype: case.dtype.to_string(),
        size: case.n,
        bytes,
        flops: case.pattern.flops(case.n),
        median_ms: None,
        min_ms: None,
        runs: 0,
        launches: 0,
        timer: None,
        sm_clock_mhz: None,
        max_sm_clock_mhz: None,
        gb_per_s: None,
        tflop_per_s: None,
        ceiling_fraction: None,
        peers: BTreeMap::new(),
        note: skip_reason(stream, case),
    };
    if row.note.is_some() {
        return row;
    }
    match run_case(stream, case, opts) {
        Ok(t) => {
            row.median_ms = Some(t.median_ms);
            row.min_ms = Some(t.min_ms);
            row.runs = t.runs;
            row.launches = t.launches;
            row.timer = Some(t.timer);
            row.sm_clock_mhz = t.sm_clock_mhz;
            row.max_sm_clock_mhz = t.max_sm_clock_mhz;
            if case.pattern.is_latency() {
                // A round trip of 4 KiB: its time is the result, throughput means nothing.
                row.note = Some(match case.pattern {
                    Pattern::LaunchOverhead => format!("per launch, {} back to back between events", t.launches),
                    Pattern::GraphLaunch => format!(
                        "per kernel, graphs of {} kernels, {} replays back to back between events",
                        crate::latency::GRAPH_KERNELS,
                        t.launches
                    ),
                    _ => "end to end: launch and read back of the scalar, host clock".into(),
                });
                return row;
            }
            row.gb_per_s = Row::gbps(bytes, t.median_ms);
            if case.pattern.compute_bound() && t.median_ms > 0.0 {
                row.tflop_per_s = Some(row.flops as f64 / t.median_ms / 1e9);
            }
            row.ceiling_fraction = row.gb_per_s.zip(ceiling).map(|(g, c)| g / c);
        }
        Err(e) => row.note = Some(format!("failed: {e}")),
    }
    row
}

/// Fill each row's peer columns. Each peer is compared with the rows of the
/// backend it ran beside: the Python peers with CUDA rows (they ran on this
/// machine's CUDA device), CubeCL with wgpu rows. An absent peer is marked
/// absent on every row, so its column says so; a case the peer refused (a
/// wrong result) is marked absent with its reason.
pub fn attach_peers(rows: &mut [Row], peers: &[(Peer, BackendKind)]) {
    for row in rows.iter_mut() {
        for (peer, backend) in peers {
            let cell = match &peer.status {
                Err(reason) => PeerCell::Absent { reason: reason.clone() },
                Ok(_) if row.backend != backend.name() => PeerCell::NoCase,
                Ok(_) => match (peer.get(&row.pattern, &row.dtype, row.size), row.median_ms) {
                    (Some(p), Some(ours_ms)) => PeerCell::Measured {
                        median_ms: p.median_ms,
                        min_ms: p.min_ms,
                        // Under the same bytes model, kiln's throughput over
                        // theirs is their time over kiln's.
                        gb_per_s: row.gb_per_s.and_then(|_| Row::gbps(row.bytes, p.median_ms)),
                        ratio: p.median_ms / ours_ms,
                        timer: p.timer,
                        calls: p.calls.clone(),
                    },
                    _ => match peer.refusal(&row.pattern, &row.dtype, row.size) {
                        Some(reason) => PeerCell::Absent { reason: reason.to_string() },
                        None => PeerCell::NoCase,
                    },
                },
            };
            row.peers.insert(peer.name.clone(), cell);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(backend: &str, ms: f64) -> Row {
        Row {
            backend: backend.into(),
            device: "d".into(),
            pattern: "axpy".into(),
            dtype: "f32".into(),
            size: 1000,
            bytes: 12_000,
            flops: 2000,
            median_ms: Some(ms),
            min_ms: Some(ms),
            runs: 20,
            launches: 1,
            timer: Some(Timer::DeviceEvents),
            sm_clock_mhz: None,
            max_sm_clock_mhz: None,
            gb_per_s: Row::gbps(12_000, ms),
            tflop_per_s: None,
            ceiling_fraction: None,
            peers: BTreeMap::new(),
            note: None,
        }
    }

    #[test]
    fn ratios_compare_like_with_like() {
        let peer = Peer::measured(
            "cupy",
            "14",
            vec![
                PeerRow {
                    pattern: "axpy".into(),
                    dtype: "f32".into(),
                    size: 1000,
                    median_ms: 0.002,
                    min_ms: 0.002,
                    timer: None,
                    calls: None,
                },
                PeerRow {
                    pattern: "reduce_latency".into(),
                    dtype: "f32".into(),
                    size: 1000,
                    median_ms: 0.03,
                    min_ms: 0.02,
                    timer: Some(Timer::EndToEnd),
                    calls: None,
                },
            ],
        );
        let latency = Row { pattern: "reduce_latency".into(), gb_per_s: None, ..row("cuda", 0.01) };
        let mut rows = vec![row("cuda", 0.001), row("wgpu", 0.001), latency];
        attach_peers(
            &mut rows,
            &[(peer, BackendKind::Cuda), (Peer::absent("pycuda", "not installed"), BackendKind::Cuda)],
        );
        match &rows[0].peers["cupy"] {
            PeerCell::Measured { ratio, gb_per_s, .. } => {
                assert!((ratio - 2.0).abs() < 1e-9, "{ratio}");
                assert!((gb_per_s.unwrap() - 6.0).abs() < 1e-9, "{gb_per_s:?}");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(rows[1].peers["cupy"], PeerCell::NoCase);
        assert!(matches!(rows[0].peers["pycuda"], PeerCell::Absent { .. }));
        match &rows[2].peers["cupy"] {
            PeerCell::Measured { ratio, gb_per_s: None, min_ms, timer: Some(Timer::EndToEnd), .. } => {
                assert!((ratio - 3.0).abs() < 1e-9 && (min_ms - 0.02).abs() < 1e-12, "{ratio} {min_ms}");
            }
            other => panic!("a latency cell has a time and no throughput: {other:?}"),
        }
    }

    #[test]
    fn a_refused_case_is_absent_with_its_reason() {
        let mut peer = Peer::measured("cubecl", "0.11.3", Vec::new());
        peer.refuse("axpy", "f32", 1000, "wrong at element 3");
        let mut rows = vec![row("wgpu", 0.001)];
        attach_peers(&mut rows, &[(peer, BackendKind::Wgpu)]);
        assert_eq!(rows[0].peers["cubecl"], PeerCell::Absent { reason: "wrong at element 3".into() });
    }

    #[test]
    fn selection_filters_by_name() {
        let c = BenchConfig { patterns: vec!["map".into()], sizes: vec![8, 4], ..Default::default() };
        let cases = c.cases();
        assert!(cases.iter().all(|c| c.pattern.name().starts_with("map_")));
        assert_eq!(cases[0].n, 4);
    }

    #[test]
    fn the_latency_case_comes_once_at_its_own_size() {
        let c = BenchConfig { patterns: vec!["reduce".into()], sizes: vec![1 << 20, 1 << 26], ..Default::default() };
        let cases = c.cases();
        let latency: Vec<_> = cases.iter().filter(|c| c.pattern == Pattern::ReduceLatency).collect();
        assert_eq!(latency.len(), 1);
        assert_eq!((latency[0].n, latency[0].dtype), (1024, DType::F32));
        assert_eq!(cases.last().unwrap().pattern, Pattern::ReduceLatency, "after the sweep");
        assert_eq!(cases.iter().filter(|c| c.pattern == Pattern::ReduceSum).count(), 2);
        let all = BenchConfig { sizes: quick_sizes(), ..Default::default() }.cases();
        assert_eq!(
            all.iter().filter(|c| c.pattern.is_latency()).count(),
            3,
            "reduce_latency, launch_overhead, graph_launch"
        );
    }

    #[test]
    fn a_latency_row_has_a_time_and_no_throughput() {
        let dev = Device::<kiln_cpu::Cpu>::open(0).unwrap();
        let case = Case { pattern: Pattern::ReduceLatency, dtype: DType::F32, n: 1024 };
        let opts = RunOptions { warmup: 1, runs: 2, ..Default::default() };
        let row = measure(&dev.stream(), &case, &opts, Some(100.0));
        assert!(row.median_ms.unwrap() > 0.0 && row.runs >= 100, "{row:?}");
        assert_eq!((row.gb_per_s, row.ceiling_fraction, row.timer), (None, None, Some(Timer::EndToEnd)));
    }
}
