//! `kiln bench`: every pattern on every available backend, against the
//! ceiling and the peers, with the CUDA system cases when CUDA is present.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::harness::{run, summaries, table, BenchOutput};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use kiln::{BackendKind, DType};
use kiln_benches::{cuda_system, quick_sizes, sweep_sizes, BenchConfig};

/// Options of `kiln bench`.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Run on this backend only (cpu, cuda, wgpu); repeatable; by default every backend found.
    #[arg(long, value_name = "NAME")]
    backend: Vec<String>,
    /// Run only patterns whose name contains NAME ("vector_add", "map", "sgemm"); repeatable.
    #[arg(long, value_name = "NAME")]
    pattern: Vec<String>,
    /// Elements per array (1024, 64Ki, 16Mi); repeatable; by default 1Ki to 256Mi by factors of 4.
    #[arg(long, value_name = "N", value_parser = parse_size)]
    size: Vec<usize>,
    /// Three sizes (1Ki, 1Mi, 64Mi) and fewer runs: a few minutes in all.
    #[arg(long)]
    quick: bool,
    /// Timed samples per case (the median and min are over these; at least 20 for published numbers).
    #[arg(long, value_name = "N")]
    runs: Option<usize>,
    /// The least device work in one timed sample, ms: a short operation is
    /// enqueued several times between one pair of events.
    #[arg(long, value_name = "MS", default_value_t = 2.0)]
    sample_ms: f64,
    /// Untimed work before each case's samples, ms, so the clocks are up.
    #[arg(long, value_name = "MS", default_value_t = 100.0)]
    warmup_ms: f64,
    /// Element type of the 1D cases.
    #[arg(long, value_name = "DTYPE", default_value = "f32", value_parser = parse_dtype)]
    dtype: DType,
    /// Write the report as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write one SVG chart per pattern (throughput against size) into DIR.
    #[arg(long, value_name = "DIR")]
    charts: Option<PathBuf>,
    /// Leave out the CUDA system cases (launch overhead, NVRTC, pinned copies, pipeline).
    #[arg(long)]
    no_system: bool,
    /// Time the FFT cases instead (f32, batched 1-D and 2-D, complex and
    /// real), with cupy.fft, torch.fft, numpy.fft and scipy.fft beside them.
    #[arg(long)]
    fft: bool,
    /// Time the linear-algebra cases instead (solve, lu, cholesky, qr and eigh
    /// of 1024 to 8192 and of 10^4 matrices of 32, f32 and f64), with
    /// cupy.linalg, torch.linalg, numpy.linalg and scipy.linalg beside them;
    /// --pattern picks operations and --size matrix orders.
    #[arg(long, conflicts_with = "fft")]
    linalg: bool,
}

fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let (digits, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => t.split_at(i),
        None => (t, ""),
    };
    let base: usize = digits.parse().map_err(|_| format!("{text:?} is not a size (e.g. 1024, 64Ki, 16Mi)"))?;
    let scale = match unit {
        "" => 1,
        "Ki" | "K" | "k" => 1 << 10,
        "Mi" | "M" => 1 << 20,
        "Gi" | "G" => 1 << 30,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (Ki, Mi or Gi)")),
    };
    base.checked_mul(scale).ok_or_else(|| format!("{text:?} is too large"))
}

fn parse_dtype(text: &str) -> Result<DType, String> {
    DType::parse(text).ok_or_else(|| format!("{text:?} is not a dtype (f32, f64, i32, u32)"))
}

/// Run the benches, print the table, write what was asked for.
pub fn run_cli(args: &BenchArgs) -> kiln::Result<ExitCode> {
    let backends: Vec<BackendKind> = args.backend.iter().map(|b| b.parse()).collect::<kiln::Result<_>>()?;
    if args.fft {
        let runs = args.runs.unwrap_or(if args.quick { 10 } else { 20 });
        return crate::fft_bench::run(&backends, runs, args.sample_ms, args.warmup_ms, args.json.as_ref());
    }
    if args.linalg {
        let runs = args.runs.unwrap_or(if args.quick { 5 } else { 10 });
        let json = args.json.as_ref();
        let (ops, sizes) = (&args.pattern, &args.size);
        return crate::linalg_bench::run(&backends, ops, sizes, runs, args.sample_ms, args.warmup_ms, json);
    }
    let mut config = BenchConfig { patterns: args.pattern.clone(), dtype: args.dtype, ..Default::default() };
    config.sizes = match (&args.size[..], args.quick) {
        ([], true) => quick_sizes(),
        ([], false) => sweep_sizes(),
        (sizes, _) => sizes.to_vec(),
    };
    config.runs = args.runs.unwrap_or(if args.quick { 20 } else { 30 });
    // The quick sweep also runs copy, map and reduce at 256 Mi on GPUs.
    config.large = args.quick && args.size.is_empty();
    config.sample_ms = args.sample_ms;
    config.warmup_ms = args.warmup_ms;
    let cases = (config.cases().len() + config.large_cases().len()) as u64;
    // The CubeCL peer, when built in, reports each case it runs on wgpu.
    let wants_wgpu = backends.is_empty() || backends.contains(&BackendKind::Wgpu);
    let peer_cases = if cfg!(feature = "cubecl") && wants_wgpu { cases + 1 } else { 0 };
    let bar = ProgressBar::new(cases * backend_count(&backends) as u64 + peer_cases + 1);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let command = std::env::args().collect::<Vec<_>>().join(" ");
    let mut absent_notes = Vec::new();
    let output = BenchOutput { json: args.json.clone(), charts: args.charts.clone() };
    let report = run(
        &config,
        &backends,
        &output,
        &command,
        &mut |msg| {
            bar.set_message(msg.to_string());
            bar.inc(1);
        },
        &mut |kind, e| absent_notes.push(format!("{kind}: absent ({e})")),
    );
    bar.finish_and_clear();
    let mut report = report?;
    print!("{}", table(&report));
    let summaries = summaries(&report);
    if !summaries.is_empty() {
        println!("{summaries}");
    }
    for note in &absent_notes {
        println!("{note}");
    }
    let ceilings: Vec<String> =
        report.header.ceilings_gb_per_s.iter().map(|(b, c)| format!("{b} {c:.0} GB/s")).collect();
    println!("ceilings (device-to-device copy, same run): {}", ceilings.join(", "));
    for (peer, status) in &report.header.peers {
        println!("peer {peer}: {status}");
    }
    print!("{}", kiln_benches::render_peer_calls(&report));
    let wants_cuda = backends.is_empty() || backends.contains(&BackendKind::Cuda);
    let cuda_here = report.rows.iter().any(|r| r.backend == "cuda");
    if wants_cuda && cuda_here && !args.no_system {
        let system = cuda_system::run(&command)?;
        print!("\n{}", cuda_system::table(&system));
        report.cuda_system = serde_json::to_value(&system).ok();
        if let Some(path) = &args.json {
            let text = serde_json::to_string_pretty(&report)
                .map_err(|e| kiln::Error::invalid("writing the bench report", e.to_string()))?;
            std::fs::write(path, text).map_err(|e| kiln::Error::Io {
                what: "write".into(),
                path: path.display().to_string(),
                detail: e.to_string(),
            })?;
        }
    }
    if let Some(path) = &args.json {
        println!("report written to {}", path.display());
    }
    if let Some(dir) = &args.charts {
        println!("charts written to {}", dir.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn backend_count(backends: &[BackendKind]) -> usize {
    if backends.is_empty() {
        kiln::registry::compiled().len()
    } else {
        backends.len()
    }
}

/// Handle the child process the CUDA system bench starts to time a cached
/// kernel load in a fresh process; `None` when this is not that child.
pub fn cached_load_child() -> Option<ExitCode> {
    let args: Vec<String> = std::env::args().collect();
    let i = args.iter().position(|a| a == "--cached-load-child")?;
    let (Some(dir), Some(nonce)) = (args.get(i + 1), args.get(i + 2)) else {
        eprintln!("--cached-load-child needs a directory and a nonce");
        return Some(ExitCode::FAILURE);
    };
    Some(match cuda_system::cached_load_child(std::path::Path::new(dir), nonce) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{e}");
            ExitCode::FAILURE
        }
    })
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_take_binary_units() {
        assert_eq!(parse_size("1024"), Ok(1024));
        assert_eq!(parse_size("64Ki"), Ok(64 << 10));
        assert_eq!(parse_size("16Mi"), Ok(16 << 20));
        assert!(parse_size("3Xi").is_err());
        assert!(parse_size("lots").is_err());
    }
}
