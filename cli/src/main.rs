//! `kiln`: list the devices kiln finds, check every pattern on every backend
//! against the reference (`kiln conform`), time them against the peers
//! (`kiln bench`), and stress them (`kiln stress`).
//!
//! One module per subcommand, each returning its exit code. A new
//! subcommand is a variant of [`Command`] and a module with a `run`.

mod bench;
mod conform;
mod devices;
mod fft_bench;
mod harness;
mod linalg_bench;
mod peer_script;
mod stress;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// GPU compute in Rust: CUDA, wgpu and a CPU reference behind one API.
#[derive(Debug, Parser)]
#[command(name = "kiln", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List each backend's devices, or why the backend is absent.
    Devices,
    /// Run every pattern on every available backend against the reference
    /// and print a pattern x backend matrix; exits 1 on any failure.
    Conform(conform::ConformArgs),
    /// Time every pattern on every available backend (device events, median
    /// of many runs) against the copy ceiling and the peers (CuPy, PyCUDA).
    Bench(bench::BenchArgs),
    /// Run random patterns on many threads and streams at once, with
    /// hand-offs between streams, buffers dropped in flight, allocation
    /// churn and pinned buffers reused, every result checked against the
    /// host, under a watchdog; exits 1 on any failure.
    Stress(stress::StressArgs),
}

/// Parse the arguments and run the subcommand. Exit codes: 0 success, 1 a
/// conformance or stress failure, 2 an error (bad arguments, a backend asked
/// for by name that is absent, a file that cannot be written).
fn main() -> ExitCode {
    if let Some(code) = bench::cached_load_child() {
        return code;
    }
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Devices => devices::run(),
        Command::Conform(args) => conform::run(args),
        Command::Bench(args) => bench::run_cli(args),
        Command::Stress(args) => stress::run(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("kiln: {e}");
            ExitCode::from(2)
        }
    }
}
