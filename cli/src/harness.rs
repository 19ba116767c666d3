//! `kiln bench`: every pattern on every backend found, the peers merged in.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kiln_benches::{
    attach_peers, latency_summary, peer_names, render, render_latency, render_scaling, run_peers, scaling_summary,
    utc_now, write_charts, BenchConfig, BenchVisitor, DeviceResult, Header, Peer, Report, Row,
};
use kiln_core::{BackendKind, Error, Result};

use kiln::Device;

/// Where a bench run writes, besides the terminal.
#[derive(Debug, Clone, Default)]
pub struct BenchOutput {
    /// The JSON report.
    pub json: Option<PathBuf>,
    /// A directory for one SVG chart per pattern.
    pub charts: Option<PathBuf>,
}

/// Run `config` on device 0 of every backend in `backends` (all when empty)
/// that is present, with the peers that are installed, and write the report.
/// `progress` hears the name of each case before it runs; `absent` hears each
/// backend that is not here and why.
pub fn run(
    config: &BenchConfig,
    backends: &[BackendKind],
    output: &BenchOutput,
    command: &str,
    progress: &mut dyn FnMut(&str),
    absent: &mut dyn FnMut(BackendKind, &Error),
) -> Result<Report> {
    let mut results: Vec<DeviceResult> = Vec::new();
    // Kept open for the CubeCL peer, which runs on this very wgpu device.
    let mut wgpu_device = None;
    for kind in kiln::registry::compiled() {
        if !backends.is_empty() && !backends.contains(&kind) {
            continue;
        }
        let device = match Device::open(kind, 0) {
            Ok(d) => d,
            Err(e) => {
                absent(kind, &e);
                continue;
            }
        };
        results.push(device.visit(BenchVisitor::new(config, progress))?);
        if kind == BackendKind::Wgpu {
            wgpu_device = Some(device);
        }
    }
    let mut rows: Vec<Row> = results.iter().flat_map(|r| r.rows.clone()).collect();
    let peers = peers(config, &results, &rows, wgpu_device.as_ref(), progress);
    attach_peers(&mut rows, &peers);
    let report = Report {
        header: header(config, &results, &peers, command),
        scaling: scaling_summary(&rows),
        latency: latency_summary(&rows),
        rows,
        cuda_system: None,
    };
    write(&report, output)?;
    Ok(report)
}

/// The peers for this run: CUB and cuRAND, CuPy and PyCUDA against CUDA
/// rows when a CUDA device was measured; NumPy against CPU rows when the CPU was; CubeCL
/// against wgpu rows, on the same wgpu device, when built with the `cubecl`
/// feature.
fn peers(
    config: &BenchConfig,
    results: &[DeviceResult],
    rows: &[Row],
    wgpu_device: Option<&Device>,
    progress: &mut dyn FnMut(&str),
) -> Vec<(Peer, BackendKind)> {
    let mut peers = Vec::new();
    let patterns: Vec<String> = config.selected().iter().map(|p| p.name()).collect();
    for (backend, who) in [(BackendKind::Cuda, "CUB and cuRAND, CuPy and PyCUDA"), (BackendKind::Cpu, "NumPy")] {
        if results.iter().any(|r| r.backend == backend) {
            progress(&format!("peers: {who} on the same cases"));
            let found = run_peers(backend, &patterns, &config.sizes, config.dtype.name(), &config.run_options());
            peers.extend(found.into_iter().map(|p| (p, backend)));
        } else {
            let reason = format!("no {backend} device in this run to compare with");
            peers.extend(peer_names(backend).into_iter().map(|name| (Peer::absent(name, &reason), backend)));
        }
    }
    peers.push((cubecl_peer(config, rows, wgpu_device, progress), BackendKind::Wgpu));
    peers
}

/// CubeCL on the wgpu device the wgpu rows were measured on, at the cases
/// those rows measured.
#[cfg(feature = "cubecl")]
fn cubecl_peer(config: &BenchConfig, rows: &[Row], device: Option<&Device>, progress: &mut dyn FnMut(&str)) -> Peer {
    let Some(device) = device.and_then(|d| d.typed::<kiln::Wgpu>()) else {
        return Peer::absent("cubecl", "no wgpu device in this run to compare with");
    };
    let wgpu_rows: Vec<Row> = rows.iter().filter(|r| r.backend == BackendKind::Wgpu.name()).cloned().collect();
    kiln_benches::run_cubecl_peer(device, config, &wgpu_rows, progress)
}

#[cfg(not(feature = "cubecl"))]
fn cubecl_peer(_: &BenchConfig, _: &[Row], _: Option<&Device>, _: &mut dyn FnMut(&str)) -> Peer {
    Peer::absent("cubecl", "not built into this binary (build kiln-cli with `--features cubecl`)")
}

fn header(config: &BenchConfig, results: &[DeviceResult], peers: &[(Peer, BackendKind)], command: &str) -> Header {
    let mut versions = BTreeMap::new();
    versions.insert("kiln".to_string(), env!("CARGO_PKG_VERSION").to_string());
    versions.insert("dtype".to_string(), config.dtype.to_string());
    versions.insert("runs_per_case".to_string(), config.runs.to_string());
    versions.insert("sample_ms".to_string(), config.sample_ms.to_string());
    versions.insert("warmup_ms".to_string(), config.warmup_ms.to_string());
    Header {
        kiln_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit: kiln_benches::GIT_COMMIT.to_string(),
        date: utc_now(),
        command: command.to_string(),
        devices: results.iter().map(|r| format!("{}: {}", r.backend, r.device)).collect(),
        versions,
        peers: peers
            .iter()
            .map(|(p, _)| (p.name.clone(), p.status.clone().unwrap_or_else(|reason| format!("absent: {reason}"))))
            .collect(),
        ceilings_gb_per_s: results
            .iter()
            .filter_map(|r| r.ceiling_gb_per_s.map(|c| (r.backend.to_string(), c)))
            .collect(),
    }
}

fn write(report: &Report, output: &BenchOutput) -> Result<()> {
    if let Some(path) = &output.json {
        let text = serde_json::to_string_pretty(report).map_err(|e| io("serialise", path, e))?;
        create_parent(path)?;
        std::fs::write(path, text).map_err(|e| io("write", path, e))?;
    }
    if let Some(dir) = &output.charts {
        write_charts(report, dir).map_err(|e| Error::Io {
            what: "write charts".into(),
            path: dir.display().to_string(),
            detail: e,
        })?;
    }
    Ok(())
}

fn create_parent(path: &Path) -> Result<()> {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => {
            std::fs::create_dir_all(dir).map_err(|e| io("create directory", dir, e))
        }
        _ => Ok(()),
    }
}

fn io(what: &str, path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Io { what: what.to_string(), path: path.display().to_string(), detail: e.to_string() }
}

/// The report as the terminal table.
pub fn table(report: &Report) -> String {
    render(report)
}

/// The scaling summary and the end-to-end latencies, as terminal tables
/// (empty when the run has neither).
pub fn summaries(report: &Report) -> String {
    [render_scaling(&report.scaling), render_latency(&report.latency)]
        .into_iter()
        .filter(|t| !t.is_empty())
        .map(|t| format!("\n{t}"))
        .collect()
}
