//! `kiln stress`: the stress suite on each backend asked for (or found), one
//! after the other, with a progress bar each and a summary.

use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use kiln::{Backend, BackendKind, DeviceVisitor, Error};
use kiln_conformance::stress::{self, StressConfig, StressError, StressProgress, StressReport};

use super::devices::absent_reason;

/// Options of `kiln stress`.
#[derive(Debug, Args)]
pub struct StressArgs {
    /// Run on this backend (cpu, cuda, wgpu); repeatable; by default every backend found.
    #[arg(long, value_name = "NAME")]
    backend: Vec<String>,
    /// How long to run on each backend (90s, 5m, 1h); with --iterations too,
    /// whichever comes first; with neither, 1m.
    #[arg(long, value_name = "TIME", value_parser = parse_duration)]
    duration: Option<Duration>,
    /// Steps to run on each backend, shared out over the threads.
    #[arg(long, value_name = "N")]
    iterations: Option<u64>,
    /// Worker threads.
    #[arg(long, value_name = "N", default_value_t = 4)]
    threads: usize,
    /// Streams per worker thread.
    #[arg(long, value_name = "N", default_value_t = 3)]
    streams: usize,
    /// The largest allocation of the churn (4096, 64KiB, 256MiB, 1GiB);
    /// capped to a share of the device's memory.
    #[arg(long, value_name = "SIZE", default_value = "256MiB", value_parser = parse_bytes)]
    max_alloc: u64,
    /// The base seed (decimal or 0x hex); by default a new one, printed.
    #[arg(long, value_name = "SEED", value_parser = seed)]
    seed: Option<u64>,
    /// Report a deadlock when a worker makes no progress for this long.
    #[arg(long, value_name = "TIME", default_value = "60s", value_parser = parse_duration)]
    timeout: Duration,
}

fn seed(text: &str) -> Result<u64, String> {
    kiln_conformance::parse_seed(text).ok_or_else(|| format!("{text:?} is not a decimal or 0x-prefixed hex u64"))
}

/// A duration written as a number and a unit: `500ms`, `20s`, `5m`, `1h`
/// (a bare number is seconds).
fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: f64 = number.parse().map_err(|_| format!("{text:?} is not a duration (e.g. 90s, 5m, 1h)"))?;
    let seconds = match unit.trim() {
        "ms" => value / 1000.0,
        "" | "s" => value,
        "m" | "min" => value * 60.0,
        "h" => value * 3600.0,
        u => return Err(format!("{text:?}: unknown unit {u:?} (ms, s, m or h)")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("{text:?}: {e}"))
}

/// A size in bytes: `4096`, `64KiB`, `256MiB`, `1GiB` (`K`, `Ki`, `KB` alike: powers of 1024).
fn parse_bytes(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let value: u64 = number.parse().map_err(|_| format!("{text:?} is not a size (e.g. 4096, 64KiB, 256MiB)"))?;
    let shift = match unit.trim().trim_end_matches('B').trim_end_matches('i') {
        "" => 0,
        "K" | "k" => 10,
        "M" => 20,
        "G" => 30,
        _ => return Err(format!("{text:?}: unknown unit {unit:?} (B, KiB, MiB or GiB)")),
    };
    value.checked_mul(1 << shift).filter(|&b| b > 0).ok_or_else(|| format!("{text:?} is not a size from 1 byte up"))
}

/// A seed nobody chose: the clock, mixed.
fn fresh_seed() -> u64 {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    (nanos ^ u64::from(std::process::id())).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Run the suite on each backend; exit 1 on any failure.
pub fn run(args: &StressArgs) -> kiln::Result<ExitCode> {
    let named: Vec<BackendKind> = args.backend.iter().map(|b| b.parse()).collect::<kiln::Result<_>>()?;
    let wanted = if named.is_empty() { BackendKind::ALL.to_vec() } else { named.clone() };
    let cfg = StressConfig {
        threads: args.threads,
        streams_per_thread: args.streams,
        duration: args.duration,
        iterations: args.iterations,
        max_alloc_bytes: args.max_alloc,
        seed: args.seed.unwrap_or_else(fresh_seed),
        timeout: args.timeout,
        ..StressConfig::default()
    };
    let bound = match (cfg.duration, cfg.iterations) {
        (Some(d), Some(n)) => format!("{} or {n} steps, whichever comes first", seconds(d)),
        (Some(d), None) => seconds(d),
        (None, Some(n)) => format!("{n} steps"),
        (None, None) => seconds(stress::DEFAULT_DURATION),
    };
    println!(
        "kiln stress: seed {:#x} (--seed to repeat), {} threads x {} streams, {bound} per backend, watchdog {}",
        cfg.seed,
        cfg.threads,
        cfg.streams_per_thread,
        seconds(cfg.timeout)
    );
    let mut ok = true;
    let mut ran = 0;
    for kind in wanted {
        let device = match kiln::Device::open(kind, 0) {
            Ok(d) => d,
            Err(e @ (Error::BackendUnavailable { .. } | Error::DeviceNotFound { .. })) => {
                if named.contains(&kind) {
                    // Asked for by name: its absence is an error, not a note.
                    return Err(Error::BackendUnavailable { backend: kind, reason: absent_reason(&e) });
                }
                println!("\n{kind}: absent ({})", absent_reason(&e));
                continue;
            }
            Err(e) => return Err(e),
        };
        let bar = ProgressBar::new(1000).with_prefix(kind.name());
        if let Ok(style) = ProgressStyle::with_template("{prefix:>5} [{bar:30}] {elapsed_precise} {msg}") {
            bar.set_style(style.progress_chars("=> "));
        }
        let outcome = device.visit(Stress { cfg: &cfg, bar: &bar });
        bar.finish_and_clear();
        ran += 1;
        println!();
        match outcome {
            Ok(report) => print_report(kind, &report, None),
            Err(e) => {
                ok = false;
                print_report(kind, &e.report, Some(&e));
            }
        }
    }
    if ran == 0 {
        println!("\nno backend ran");
    }
    Ok(if ok { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn seconds(d: Duration) -> String {
    format!("{} s", d.as_secs_f64())
}

/// The run, with the concrete backend type.
struct Stress<'a> {
    cfg: &'a StressConfig,
    bar: &'a ProgressBar,
}

impl DeviceVisitor for Stress<'_> {
    type Output = Result<StressReport, Box<StressError>>;

    fn visit<B: Backend>(self, device: &kiln::typed::Device<B>) -> Self::Output {
        let bar = self.bar;
        stress::run(device, self.cfg, |p: &StressProgress| {
            bar.set_position((p.fraction() * 1000.0) as u64);
            bar.set_message(format!(
                "{} steps, {} checks passed, {} moved{}",
                p.steps,
                p.checks,
                gib(p.bytes_moved),
                if p.skipped > 0 { format!(", {} skipped", p.skipped) } else { String::new() }
            ));
        })
    }
}

fn gib(bytes: u64) -> String {
    format!("{:.2} GiB", bytes as f64 / (1u64 << 30) as f64)
}

fn print_report(kind: BackendKind, report: &StressReport, failure: Option<&StressError>) {
    println!("{report}");
    match failure {
        None => println!("{kind}: PASS"),
        Some(e) => println!(
            "{kind}: FAIL: {}\n  (seed {:#x}; --seed {:#x} repeats the operations)",
            e.cause, e.report.seed, e.report.seed
        ),
    }
}
