//! SVG charts: throughput against size, one chart per pattern, one line per
//! backend and peer.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::prelude::*;

use crate::report::Report;
use crate::row::PeerCell;

type Series = BTreeMap<String, Vec<(f64, f64)>>;

/// Write one SVG per pattern into `dir`; returns the files written.
pub fn write_charts(report: &Report, dir: &Path) -> Result<Vec<std::path::PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let mut by_pattern: BTreeMap<String, Series> = BTreeMap::new();
    for r in &report.rows {
        let Some(gbps) = r.gb_per_s else { continue };
        let series = by_pattern.entry(format!("{}_{}", r.pattern, r.dtype)).or_default();
        series.entry(format!("kiln {}", r.backend)).or_default().push((r.size as f64, gbps));
        for (peer, c) in &r.peers {
            if let PeerCell::Measured { gb_per_s: Some(g), .. } = c {
                series.entry(format!("{peer} ({})", r.backend)).or_default().push((r.size as f64, *g));
            }
        }
    }
    let mut files = Vec::new();
    for (pattern, series) in by_pattern {
        let path = dir.join(format!("{pattern}.svg"));
        draw(&path, &pattern, &series).map_err(|e| format!("cannot draw {}: {e}", path.display()))?;
        files.push(path);
    }
    Ok(files)
}

fn draw(path: &Path, title: &str, series: &Series) -> Result<(), Box<dyn std::error::Error>> {
    let points = series.values().flatten();
    let (xmin, xmax) = points.clone().fold((f64::MAX, 1.0f64), |(lo, hi), (x, _)| (lo.min(*x), hi.max(*x)));
    let ymax = points.fold(1.0f64, |m, (_, y)| m.max(*y)) * 1.1;
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(format!("{title}: throughput vs size"), ("sans-serif", 22))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((xmin.max(1.0)..xmax * 1.2).log_scale(), 0.0..ymax)?;
    chart
        .configure_mesh()
        .x_desc("elements")
        .y_desc("GB/s")
        .x_label_formatter(&|x| crate::case::size_label(*x as usize))
        .draw()?;
    for (i, (name, pts)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let mut pts = pts.clone();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        chart
            .draw_series(LineSeries::new(pts.clone(), color.stroke_width(2)))?
            .label(name.clone())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(2)));
        chart.draw_series(pts.into_iter().map(|p| Circle::new(p, 3, color.filled())))?;
    }
    chart.configure_series_labels().background_style(WHITE.mix(0.85)).border_style(BLACK).draw()?;
    root.present()?;
    Ok(())
}
