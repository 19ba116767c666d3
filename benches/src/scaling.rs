//! Where fixed costs stop dominating: for each series (a backend, or a peer
//! beside it) and pattern of a sweep, Hockney's n_1/2 (the smallest measured
//! size whose throughput reaches half the series' best), the fixed cost
//! (the median time at the smallest size, the floor below which time stops
//! shrinking) and the best throughput with its size.
//!
//! Computed from a run's rows alone; rows that were skipped or failed have
//! no time and take no part; the latency case (one fixed size) is left out.

use std::collections::HashMap;
use std::fmt::Write;

use serde::Serialize;

use crate::case::{Pattern, size_label};
use crate::row::PeerCell;
use crate::row::Row;

/// The scaling of one series and pattern.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Scaling {
    /// The backend ("cuda").
    pub backend: String,
    /// The peer, when the series is a peer's ("cupy").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peer: Option<String>,
    /// The pattern ("vector_add").
    pub pattern: String,
    /// Its element type.
    pub dtype: String,
    /// Sizes measured.
    pub sizes: usize,
    /// The smallest measured size whose throughput reaches half the best
    /// (Hockney's n_1/2); none when no size has a throughput.
    pub n_half: Option<usize>,
    /// Whether `n_half` is the smallest size measured, so the true n_1/2
    /// lies at or below it: fixed costs never dominate in the sweep.
    pub n_half_at_smallest: bool,
    /// The smallest size measured.
    pub smallest_size: usize,
    /// The median time at the smallest size, microseconds.
    pub fixed_cost_us: f64,
    /// The best throughput, GB/s (memory-bound patterns).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_gb_per_s: Option<f64>,
    /// The best arithmetic rate, TFLOP/s (compute-bound patterns).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_tflop_per_s: Option<f64>,
    /// The size of the best throughput.
    pub best_size: Option<usize>,
}

/// A series' name: the backend ("cuda"), or the peer on it ("cupy on cuda").
pub(crate) fn series(backend: &str, peer: Option<&str>) -> String {
    match peer {
        Some(p) => format!("{p} on {backend}"),
        None => backend.to_string(),
    }
}

impl Scaling {
    /// Who measured it: "cuda", or "cupy on cuda".
    pub fn series(&self) -> String {
        series(&self.backend, self.peer.as_deref())
    }
}

/// One measured size of a series: its median time and throughput (GB/s,
/// or TFLOP/s for compute-bound patterns).
#[derive(Debug, Clone, Copy)]
struct Point {
    size: usize,
    median_ms: f64,
    rate: Option<f64>,
}

type Key = (String, Option<String>, String, String);

/// The scaling of every series and pattern in `rows`, in the rows' order.
///
/// # Examples
/// ```
/// use kiln_benches::{scaling_summary, BenchConfig, BenchVisitor};
/// use kiln_core::{Device, DeviceVisitor};
/// let config = BenchConfig { patterns: vec!["vector_add".into()], sizes: vec![1 << 10, 1 << 16], runs: 3, ..Default::default() };
/// let result = BenchVisitor::new(&config, &mut |_| {}).visit(&Device::<kiln_cpu::Cpu>::open(0)?)?;
/// let s = &scaling_summary(&result.rows)[0];
/// assert_eq!((s.pattern.as_str(), s.sizes, s.smallest_size), ("vector_add", 2, 1 << 10));
/// assert!(s.n_half.is_some() && s.best_gb_per_s.unwrap() > 0.0 && s.fixed_cost_us > 0.0);
/// # Ok::<(), kiln_core::Error>(())
/// ```
pub fn scaling_summary(rows: &[Row]) -> Vec<Scaling> {
    let mut order: Vec<Key> = Vec::new();
    let mut series: HashMap<Key, Vec<Point>> = HashMap::new();
    let mut push = |key: Key, point: Point| {
        if !series.contains_key(&key) {
            order.push(key.clone());
        }
        series.entry(key).or_default().push(point);
    };
    for r in rows {
        let Some(pattern) = Pattern::from_name(&r.pattern) else { continue };
        if pattern.fixed_size().is_some() {
            continue;
        }
        let compute = pattern.compute_bound();
        let key = |peer: Option<&String>| (r.backend.clone(), peer.cloned(), r.pattern.clone(), r.dtype.clone());
        if let Some(median_ms) = r.median_ms {
            let rate = if compute { r.tflop_per_s } else { r.gb_per_s };
            push(key(None), Point { size: r.size, median_ms, rate });
        }
        for (peer, cell) in &r.peers {
            if let PeerCell::Measured { median_ms, gb_per_s, .. } = cell {
                let rate = if compute { tflops(r.flops, *median_ms) } else { *gb_per_s };
                push(key(Some(peer)), Point { size: r.size, median_ms: *median_ms, rate });
            }
        }
    }
    order
        .into_iter()
        .map(|key| {
            let points = series.remove(&key).unwrap_or_default();
            let compute = Pattern::from_name(&key.2).is_some_and(Pattern::compute_bound);
            summarize(key, points, compute)
        })
        .collect()
}

fn tflops(flops: u64, ms: f64) -> Option<f64> {
    (flops > 0 && ms > 0.0).then(|| flops as f64 / ms / 1e9)
}

fn summarize((backend, peer, pattern, dtype): Key, mut points: Vec<Point>, compute: bool) -> Scaling {
    points.sort_by_key(|p| p.size);
    let smallest = points[0];
    let rated = || points.iter().filter_map(|p| p.rate.filter(|r| r.is_finite() && *r > 0.0).map(|r| (p.size, r)));
    let best = rated().fold(None, |b: Option<(usize, f64)>, (s, r)| match b {
        Some((_, br)) if br >= r => b,
        _ => Some((s, r)),
    });
    let n_half = best.and_then(|(_, b)| rated().find(|&(_, r)| r >= b / 2.0).map(|(s, _)| s));
    Scaling {
        backend,
        peer,
        pattern,
        dtype,
        sizes: points.len(),
        n_half,
        n_half_at_smallest: n_half == Some(smallest.size),
        smallest_size: smallest.size,
        fixed_cost_us: smallest.median_ms * 1e3,
        best_gb_per_s: best.filter(|_| !compute).map(|b| b.1),
        best_tflop_per_s: best.filter(|_| compute).map(|b| b.1),
        best_size: best.map(|b| b.0),
    }
}

/// The scaling summary as a terminal table.
pub fn render_scaling(scaling: &[Scaling]) -> String {
    let mut out = String::new();
    if scaling.is_empty() {
        return out;
    }
    out.push_str(
        "scaling: n_1/2 = smallest size reaching half the series' best throughput (<= when the smallest \
         size already does); fixed cost = median time at the smallest size\n",
    );
    let _ = writeln!(
        out,
        "{:<20} {:<22} {:<5} {:>6} {:>7} {:>14} {:>7} {:>16} {:>6}",
        "series", "pattern", "dtype", "sizes", "n_1/2", "fixed cost us", "at", "best", "at"
    );
    for s in scaling {
        let n_half = match s.n_half {
            Some(n) if s.n_half_at_smallest => format!("<={}", size_label(n)),
            Some(n) => size_label(n),
            None => "-".into(),
        };
        let best = match (s.best_gb_per_s, s.best_tflop_per_s) {
            (Some(g), _) => format!("{g:.1} GB/s"),
            (_, Some(t)) => format!("{t:.3} TFLOP/s"),
            _ => "-".into(),
        };
        let _ = writeln!(
            out,
            "{:<20} {:<22} {:<5} {:>6} {:>7} {:>14.1} {:>7} {:>16} {:>6}",
            s.series(),
            s.pattern,
            s.dtype,
            s.sizes,
            n_half,
            s.fixed_cost_us,
            size_label(s.smallest_size),
            best,
            s.best_size.map(size_label).unwrap_or_else(|| "-".into()),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::timing::Timer;

    /// A vector_add row: 12 bytes per element, `ms` for the run.
    fn row(backend: &str, pattern: &str, size: usize, ms: Option<f64>) -> Row {
        let bytes = 12 * size as u64;
        Row {
            backend: backend.into(),
            device: "d".into(),
            pattern: pattern.into(),
            dtype: "f32".into(),
            size,
            bytes,
            flops: size as u64,
            median_ms: ms,
            min_ms: ms,
            runs: 20,
            launches: 1,
            sm_clock_mhz: None,
            max_sm_clock_mhz: None,
            timer: Some(Timer::DeviceEvents),
            gb_per_s: ms.and_then(|ms| Row::gbps(bytes, ms)),
            tflop_per_s: None,
            ceiling_fraction: None,
            arithmetic: None,
            peak_tflop_per_s: None,
            peak_fraction: None,
            peers: BTreeMap::new(),
            note: ms.is_none().then(|| "skipped".into()),
        }
    }

    #[test]
    fn n_half_is_the_first_size_at_half_the_best() {
        // A fixed 10 us launch plus 1 ns per element: 1.1, 3.5, 10.4 and 11.9 GB/s.
        let sizes = [1 << 10, 1 << 12, 1 << 16, 1 << 20];
        let rows: Vec<Row> =
            sizes.iter().map(|&n| row("cuda", "vector_add", n, Some(0.010 + n as f64 * 1e-6))).collect();
        let s = scaling_summary(&rows);
        assert_eq!(s.len(), 1);
        let s = &s[0];
        assert_eq!((s.series(), s.sizes), ("cuda".to_string(), 4));
        assert_eq!(s.n_half, Some(1 << 16), "{s:?}");
        assert!(!s.n_half_at_smallest);
        assert_eq!(s.best_size, Some(1 << 20));
        let best = 12.0 * (1 << 20) as f64 / (0.010 + (1 << 20) as f64 * 1e-6) / 1e6;
        assert!((s.best_gb_per_s.unwrap() - best).abs() < 1e-9);
        assert!((s.fixed_cost_us - (10.0 + 1.024)).abs() < 1e-9, "{}", s.fixed_cost_us);
        assert_eq!(s.best_tflop_per_s, None);
    }

    #[test]
    fn a_single_size_series_is_its_own_n_half() {
        let s = &scaling_summary(&[row("wgpu", "axpy", 1 << 20, Some(1.0))])[0];
        assert_eq!((s.n_half, s.n_half_at_smallest, s.best_size), (Some(1 << 20), true, Some(1 << 20)));
        assert!((s.fixed_cost_us - 1000.0).abs() < 1e-9);
    }

    #[test]
    fn skipped_rows_take_no_part() {
        let rows = [
            row("cpu", "vector_add", 1 << 10, None),
            row("cpu", "vector_add", 1 << 12, Some(0.002)),
            row("cpu", "vector_add", 1 << 14, None),
            row("cpu", "map_abs", 1 << 10, None),
        ];
        let s = scaling_summary(&rows);
        assert_eq!(s.len(), 1, "a series with no time has no record: {s:?}");
        assert_eq!((s[0].sizes, s[0].smallest_size, s[0].n_half), (1, 1 << 12, Some(1 << 12)));
    }

    #[test]
    fn no_size_reaches_half_without_a_throughput() {
        let mut rows =
            vec![row("cuda", "vector_add", 1 << 10, Some(0.01)), row("cuda", "vector_add", 1 << 12, Some(0.01))];
        for r in &mut rows {
            r.gb_per_s = None;
        }
        let s = &scaling_summary(&rows)[0];
        assert_eq!((s.n_half, s.best_size, s.best_gb_per_s), (None, None, None));
        assert!(!s.n_half_at_smallest);
        assert!((s.fixed_cost_us - 10.0).abs() < 1e-9);
        assert!(render_scaling(std::slice::from_ref(s)).lines().nth(2).unwrap().contains(" - "));
    }

    #[test]
    fn peers_form_their_own_series_and_latency_rows_none() {
        let mut small = row("cuda", "sgemm", 1 << 10, Some(0.01));
        let mut large = row("cuda", "sgemm", 1 << 20, Some(1.0));
        for r in [&mut small, &mut large] {
            r.flops = 2 * (r.size as f64).sqrt().powi(3) as u64;
            r.tflop_per_s = tflops(r.flops, r.median_ms.unwrap());
            let theirs = r.median_ms.unwrap() * 2.0;
            let cell = PeerCell::Measured {
                median_ms: theirs,
                min_ms: theirs,
                gb_per_s: None,
                ratio: 2.0,
                timer: None,
                calls: None,
            };
            r.peers.insert("cupy".into(), cell);
            r.peers.insert("pycuda".into(), PeerCell::Absent { reason: "not installed".into() });
        }
        let latency = Row { gb_per_s: None, ..row("cuda", "reduce_latency", 1024, Some(0.02)) };
        let s = scaling_summary(&[small, large, latency]);
        let names: Vec<String> = s.iter().map(Scaling::series).collect();
        assert_eq!(names, ["cuda", "cupy on cuda"]);
        assert_eq!(s[1].best_size, Some(1 << 20));
        assert!((s[0].best_tflop_per_s.unwrap() / s[1].best_tflop_per_s.unwrap() - 2.0).abs() < 1e-9);
        assert_eq!(s[0].best_gb_per_s, None);
        let table = render_scaling(&s);
        assert!(table.contains("TFLOP/s") && table.lines().any(|l| l.starts_with("cupy on cuda")), "{table}");
    }
}
