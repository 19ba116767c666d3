//! The terminal table.

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
/// columns (kiln's throughput over theirs).
pub fn render(report: &Report) -> String {
    let peers: Vec<String> = report.header.peers.keys().cloned().collect();
    let mut out = String::new();
    let _ = write!(
        out,
        "{:<6} {:<26} {:<22} {:<5} {:>6} {:>10} {:>10} {:>9} {:>8} {:>6}",
        "backend", "device", "pattern", "dtype", "size", "median ms", "min ms", "GB/s", "TFLOP/s", "%ceil"
    );
    for p in &peers {
        let _ = write!(out, " {:>9}", format!("vs {p}"));
    }
    out.push_str("  timer\n");
    for r in &report.rows {
        let device: String = r.device.chars().take(26).collect();
        let _ = write!(
            out,
            "{:<6} {:<26} {:<22} {:<5} {:>6} {:>10} {:>10} {:>9} {:>8} {:>6}",
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

#[cfg(test)]
mod tests {
    use super::size_label;

    #[test]
    fn sizes_read_in_binary_units() {
        assert_eq!(size_label(1024), "1Ki");
        assert_eq!(size_label(1 << 26), "64Mi");
        assert_eq!(size_label(1000), "1000");
        assert_eq!(size_label(3 << 20), "3Mi");
    }
}
