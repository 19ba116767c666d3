//! The terminal table.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::case::size_label;
use crate::report::Report;
use crate::row::PeerCell;

fn cell(c: Option<&PeerCell>) -> String {
    match c {
        Some(PeerCell::Measured { ratio, .. }) => format!("{ratio:.2}x"),
        Some(PeerCell::Absent { .. }) => "absent".into(),
        Some(PeerCell::NoCase) | None => "-".into(),
    }
}

/// The report as a fixed-width table, one line per row; peers as ratio
/// columns (kiln's throughput over theirs). The products' rows have their
/// device's peak for their arithmetic, TFLOP/s, and their fraction of it
/// ("peak": "495 (79%)", or "unknown" where kiln does not know the device).
pub fn render(report: &Report) -> String {
    let peers: Vec<String> = report.header.peers.keys().cloned().collect();
    let mut out = String::new();
    let _ = write!(
        out,
        "{:<6} {:<26} {:<22} {:<5} {:>6} {:>10} {:>10} {:>9} {:>8} {:>6} {:>10}",
        "backend", "device", "pattern", "dtype", "size", "median ms", "min ms", "GB/s", "TFLOP/s", "%ceil", "peak"
    );
    for p in &peers {
        let _ = write!(out, " {:>9}", format!("vs {p}"));
    }
    out.push_str("  timer\n");
    for r in &report.rows {
        let device: String = r.device.chars().take(26).collect();
        let _ = write!(
            out,
            "{:<6} {:<26} {:<22} {:<5} {:>6} {:>10} {:>10} {:>9} {:>8} {:>6} {:>10}",
            r.backend,
            device,
            r.pattern,
            r.dtype,
            size_label(r.size),
            r.median_ms.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into()),
            r.min_ms.map(|v| format!("{v:.4}")).unwrap_or_else(|| "-".into()),
            r.gb_per_s.map(|v| format!("{v:.1}")).unwrap_or_else(|| "-".into()),
            r.tflop_per_s.map(|v| format!("{v:.2}")).unwrap_or_else(|| "-".into()),
            r.ceiling_fraction.map(|v| format!("{:.0}%", v * 100.0)).unwrap_or_else(|| "-".into()),
            r.peak_cell(),
        );
        for p in &peers {
            let _ = write!(out, " {:>9}", cell(r.peers.get(p)));
        }
        let timer = r.timer.map(|t| format!("{t:?}")).unwrap_or_default();
        let _ = write!(out, "  {timer}");
        if r.launches > 1 {
            let _ = write!(out, " x{}", r.launches);
        }
        if let Some(clock) = r.low_clock() {
            let _ = write!(out, "  [{clock}]");
        }
        if let Some(note) = &r.note {
            let _ = write!(out, "  ({note})");
        }
        out.push('\n');
    }
    out
}

/// What each peer called, per pattern, where it says (CUB's rows name
/// their device algorithm): one line per peer and pattern, empty when no
/// peer said.
pub fn render_peer_calls(report: &Report) -> String {
    let mut calls: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    for row in &report.rows {
        for (peer, cell) in &row.peers {
            if let PeerCell::Measured { calls: Some(c), .. } = cell {
                calls.entry((peer.as_str(), row.pattern.as_str())).or_insert(c.as_str());
            }
        }
    }
    let mut out = String::new();
    for ((peer, pattern), c) in calls {
        let _ = writeln!(out, "peer {peer} on {pattern}: {c}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::Header;
    use crate::row::Row;

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(size_label(1024), "1Ki");
        assert_eq!(size_label(1 << 26), "64Mi");
        assert_eq!(size_label(1000), "1000");
        assert_eq!(size_label(3 << 20), "3Mi");
    }

    #[test]
    fn peer_calls_are_listed_once_per_peer_and_pattern() {
        let measured = |calls: Option<&str>| PeerCell::Measured {
            median_ms: 1.0,
            min_ms: 1.0,
            gb_per_s: None,
            ratio: 1.0,
            timer: None,
            calls: calls.map(String::from),
        };
        let row = |pattern: &str, size: usize| {
            let mut r = Row { pattern: pattern.into(), size, ..Row::default() };
            r.peers.insert("cub".into(), measured(Some(&format!("cub::{pattern}"))));
            r.peers.insert("cupy".into(), measured(None));
            r
        };
        let report = Report {
            header: Header::default(),
            rows: vec![row("sort_u32", 1024), row("sort_u32", 1 << 20), row("reduce_sum", 1024)],
            scaling: Vec::new(),
            latency: Vec::new(),
            cuda_system: None,
        };
        assert_eq!(
            render_peer_calls(&report),
            "peer cub on reduce_sum: cub::reduce_sum\npeer cub on sort_u32: cub::sort_u32\n"
        );
    }
}
