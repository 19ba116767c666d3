//! kiln-benches: every pattern on every backend, against the ceiling and the peers.
//!
//! A bench run visits each device (through a [`kiln_core::DeviceVisitor`]), times every
//! selected [`Case`] with device events (warm-up first, median and min of
//! many runs, random inputs rotated among buffer sets past the size of any
//! cache), measures the ceiling (a large device-to-device copy: the faster of
//! the buffer copy and a copy kernel) on the same
//! device in the same run, and merges in the peers (CuPy, PyCUDA and PyTorch
//! scripts run on the same machine; with the `cubecl` feature, CubeCL on the
//! wgpu device). Every row carries its bytes and flops model, so GB/s, the
//! fraction of the ceiling and the ratio to each peer follow; a product's
//! row also the device's peak for its arithmetic, where kiln knows the
//! device ([`peak_tflop_per_s`]), and its fraction of it. From a run's
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
mod peaks;
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

pub use case::{
    BATCH, BATCH_SIDE, Case, MATMUL_SIDES, MatmulMode, Pattern, QUICK_MATMUL_SIDE, matmul_sizes, quick_sizes,
    size_label, square_side, sweep_sizes,
};
pub use clock::SmClock;
#[cfg(feature = "cubecl")]
pub use cubecl_peer::{CUBECL_VERSION, run_cubecl_peer};
pub use latency::{Latency, latency_runs, latency_summary, render_latency};
pub use options::RunOptions;
pub use peaks::{Arithmetic, DEVICE_PEAKS, DevicePeaks, peak_tflop_per_s};
pub use peers::{Peer, PeerRow, peer_names, run_peers};
pub use plot::write_charts;
pub use report::{Header, Report, utc_now};
pub use row::{PeerCell, Row};
pub use run::{run_case, skip_reason};
pub use scaling::{Scaling, render_scaling, scaling_summary};
pub use table::{render, render_peer_calls};
pub use timing::{
    MAX_CLOCK_WAIT_MS, MAX_LAUNCHES, Sampling, Timer, Timing, clock_is_up, sample_windows, sample_windows_warmed,
    time_end_to_end, time_runs,
};

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
    /// Whether GPU devices also run [`BenchConfig::large_cases`] (the quick
    /// sweep does, so that the largest size cannot fall behind unseen).
    pub large: bool,
}

/// The size of [`BenchConfig::large_cases`]: 256 Mi elements.
pub const LARGE_SIZE: usize = 1 << 28;

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
            large: false,
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

    /// Where [`BenchConfig::large`] asks for them and the sweep lacks that
    /// size: copy, map and reduce at [`LARGE_SIZE`], those of them the
    /// pattern filter selects. GPU devices run them after the other cases;
    /// on wgpu such sizes once ran at half the rate with no row to show it
    /// (the SM clock had not risen again after the setup).
    ///
    /// # Examples
    /// ```
    /// use kiln_benches::{quick_sizes, BenchConfig, LARGE_SIZE};
    /// let quick = BenchConfig { sizes: quick_sizes(), large: true, ..Default::default() };
    /// let names: Vec<String> = quick.large_cases().iter().map(|c| c.pattern.name()).collect();
    /// assert_eq!(names, ["copy_d2d", "map_square", "reduce_sum"]);
    /// assert!(quick.large_cases().iter().all(|c| c.n == LARGE_SIZE));
    /// let reduce = BenchConfig { patterns: vec!["reduce_sum".into()], ..quick };
    /// assert_eq!(reduce.large_cases().len(), 1);
    /// assert!(BenchConfig { sizes: quick_sizes(), ..Default::default() }.large_cases().is_empty());
    /// ```
    pub fn large_cases(&self) -> Vec<Case> {
        if !self.large || self.sizes.contains(&LARGE_SIZE) {
            return Vec::new();
        }
        let wanted = [Pattern::CopyD2d, Pattern::Map(kiln_kernels::map::MapOp::Square), Pattern::ReduceSum];
        let selected = self.selected();
        wanted
            .into_iter()
            .filter(|p| selected.contains(p))
            .map(|pattern| Case { pattern, dtype: self.dtype, n: LARGE_SIZE })
            .collect()
    }

    /// The selected cases, small sizes first, each pattern at its sizes of
    /// the sweep ([`Pattern::sizes_in`]: the square `matmul_*` rows at
    /// their own sizes); a pattern of fixed size (the latency case, the
    /// batched products) comes once, after the sweep.
    pub fn cases(&self) -> Vec<Case> {
        let selected = self.selected();
        let case = |pattern: Pattern, n| Case { pattern, dtype: pattern.fixed_dtype().unwrap_or(self.dtype), n };
        let mut swept: Vec<(usize, usize, Pattern)> = selected
            .iter()
            .enumerate()
            .filter(|(_, p)| p.fixed_size().is_none())
            .flat_map(|(i, &p)| p.sizes_in(&self.sizes).into_iter().map(move |n| (n, i, p)))
            .collect();
        swept.sort_by_key(|&(n, i, _)| (n, i));
        let fixed = selected.iter().filter_map(|&p| p.fixed_size().map(|n| case(p, n)));
        swept.into_iter().map(|(n, _, p)| case(p, n)).chain(fixed).collect()
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
        let mut cases = self.config.cases();
        if info.kind.is_gpu() {
            cases.extend(self.config.large_cases());
        }
        for case in cases {
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
        arithmetic: crate::matrix::arithmetic(stream, case),
        peak_tflop_per_s: None,
        peak_fraction: None,
        peers: BTreeMap::new(),
        note: skip_reason(stream, case),
    };
    row.peak_tflop_per_s = row.arithmetic.and_then(|a| peak_tflop_per_s(&info.name, a));
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
            row.peak_fraction = row.tflop_per_s.zip(row.peak_tflop_per_s).map(|(t, p)| t / p);
            // What a product row ran: its shape and mode, and the strategy (auto's choice).
            row.note = crate::matrix::remark(stream, case);
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
            arithmetic: None,
            peak_tflop_per_s: None,
            peak_fraction: None,
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

    /// The square products run at their own sizes (1024^3, 4096^3 and
    /// 8192^3 in the full sweep, 4096^3 in the quick one, the sizes asked
    /// for otherwise), the batches once at 256 x 512^3 after the sweep;
    /// the other GEMM rows keep the sweep's sizes.
    #[test]
    fn products_run_at_their_own_sizes() {
        let sizes_of = |c: &[Case], name: &str| -> Vec<usize> {
            c.iter().filter(|c| c.pattern.name() == name).map(|c| c.n).collect()
        };
        let quick =
            BenchConfig { patterns: vec!["gemm".into(), "matmul".into()], sizes: quick_sizes(), ..Default::default() };
        let cases = quick.cases();
        assert_eq!(sizes_of(&cases, "sgemm"), quick_sizes());
        assert_eq!(sizes_of(&cases, "matmul_f32_tf32"), [1 << 24]);
        assert_eq!(sizes_of(&cases, "matmul_batch_f16"), [1 << 26]);
        let names: Vec<String> = cases.iter().map(|c| format!("{} {}", c.pattern.name(), size_label(c.n))).collect();
        assert_eq!(
            names,
            [
                "sgemm 1Ki",
                "sgemm_cublas 1Ki",
                "dgemm 1Ki",
                "sgemm 1Mi",
                "sgemm_cublas 1Mi",
                "dgemm 1Mi",
                "matmul_f32 16Mi",
                "matmul_f32_tf32 16Mi",
                "matmul_f32_bf16 16Mi",
                "matmul_f64 16Mi",
                "matmul_f16 16Mi",
                "matmul_bf16 16Mi",
                "matmul_f16_f16 16Mi",
                "matmul_f8e4m3 16Mi",
                "matmul_f32_tf32_own 16Mi",
                "matmul_f16_own 16Mi",
                "matmul_bf16_own 16Mi",
                "sgemm 64Mi",
                "sgemm_cublas 64Mi",
                "dgemm 64Mi",
                "matmul_batch_f32 64Mi",
                "matmul_batch_f32_tf32 64Mi",
                "matmul_batch_f16 64Mi",
                "matmul_batch_f16_f16 64Mi",
                "matmul_batch_f16_own 64Mi",
            ]
        );
        let dtypes: Vec<DType> = cases.iter().filter(|c| c.n == 1 << 24).map(|c| c.dtype).collect();
        assert_eq!(
            dtypes,
            [
                DType::F32,
                DType::F32,
                DType::F32,
                DType::F64,
                DType::F16,
                DType::BF16,
                DType::F16,
                DType::F8E4M3,
                DType::F32,
                DType::F16,
                DType::BF16
            ]
        );
        let full = BenchConfig { patterns: vec!["matmul_f16".into()], ..Default::default() };
        assert_eq!(sizes_of(&full.cases(), "matmul_f16"), [1 << 20, 1 << 24, 1 << 26]);
        let asked = BenchConfig { patterns: vec!["matmul_f16".into()], sizes: vec![1 << 22], ..Default::default() };
        assert_eq!(sizes_of(&asked.cases(), "matmul_f16"), [1 << 22]);
    }

    #[test]
    fn every_pattern_has_its_own_name() {
        let names: std::collections::HashSet<String> = Pattern::ALL.iter().map(|p| p.name()).collect();
        assert_eq!(names.len(), Pattern::ALL.len());
        for p in Pattern::ALL {
            assert_eq!(Pattern::from_name(&p.name()), Some(p));
            // The table's pattern column is 22 wide.
            assert!(p.name().len() <= 22, "{}", p.name());
        }
    }

    /// The product rows of a run on the CPU: each has its arithmetic and
    /// an unknown peak (kiln knows no CPU's); the modes the CPU has no
    /// faster path for are skipped with the reason; a known device's rows
    /// carry its peak and their fraction of it.
    #[test]
    fn product_rows_carry_their_peak() {
        let config =
            BenchConfig { patterns: vec!["matmul".into()], sizes: vec![1 << 12], runs: 2, ..Default::default() };
        let dev = Device::<kiln_cpu::Cpu>::open(0).unwrap();
        let result = BenchVisitor::new(&config, &mut |_| {}).visit(&dev).unwrap();
        let row = |name: &str| result.rows.iter().find(|r| r.pattern == name).unwrap().clone();
        let f32_row = row("matmul_f32");
        assert!(f32_row.tflop_per_s.unwrap() > 0.0, "{f32_row:?}");
        assert_eq!((f32_row.arithmetic, f32_row.peak_tflop_per_s), (Some(Arithmetic::Fp32), None));
        assert_eq!(f32_row.peak_cell(), "unknown");
        assert_eq!(f32_row.note.as_deref(), Some("(64 x 64) . (64 x 64): auto chose tiled"));
        assert_eq!(row("matmul_f64").arithmetic, Some(Arithmetic::Fp64));
        let tf32 = row("matmul_f32_tf32");
        assert_eq!((tf32.median_ms, tf32.arithmetic), (None, Some(Arithmetic::Fp32)));
        assert!(tf32.note.unwrap().contains("offers no vendor GEMM of f32"));
        // The batch runs at its fixed size, past the CPU's limit.
        let batch = row("matmul_batch_f32");
        assert_eq!(batch.size, 1 << 26);
        assert!(batch.note.unwrap().contains("too slow"));

        let mut on_h200 = Row { device: "NVIDIA H200".into(), tflop_per_s: Some(396.0), ..f32_row };
        on_h200.arithmetic = Some(Arithmetic::Tf32);
        on_h200.peak_tflop_per_s = peak_tflop_per_s(&on_h200.device, Arithmetic::Tf32);
        on_h200.peak_fraction = on_h200.tflop_per_s.zip(on_h200.peak_tflop_per_s).map(|(t, p)| t / p);
        assert_eq!(on_h200.peak_cell(), "495 (80%)");
        let report = Report {
            header: Header::default(),
            rows: vec![on_h200, row("matmul_f32")],
            scaling: Vec::new(),
            latency: Vec::new(),
            cuda_system: None,
        };
        let table = render(&report);
        let lines: Vec<&str> = table.lines().collect();
        assert!(lines[0].contains("%ceil       peak"), "{table}");
        assert!(lines[1].contains("   396.00") && lines[1].contains("  495 (80%)  "), "{table}");
        assert!(lines[2].contains("    unknown  "), "{table}");
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
