//! What every seed program shares: the device from `--backend`, checking
//! results against the host, and exit codes.
//!
//! A program is a function of a [`kiln::Device`] (whichever backend was
//! found) returning [`Checked`]: `Ok` with a summary of what it computed, or
//! a [`Failure`]. Both a kiln error and a [`Mismatch`] with the host's
//! computation turn into a `Failure` with `?`:
//!
//! ```ignore
//! fn run(dev: &kiln::Device) -> common::Checked {
//!     let got = dev.upload(&[1u32, 2])?.to_vec()?; // a kiln::Error
//!     common::check("x", &got, &[1, 2], |g, w| g == w)?; // a Mismatch
//!     Ok(format!("x = {got:?}"))
//! }
//! ```

#![allow(dead_code)] // each example uses a different part

use std::fmt::{self, Debug, Display};
use std::process::ExitCode;

/// What a program found: a line saying what it computed, when every result
/// matched the host's computation, or why not.
pub type Checked = Result<String, Failure>;

/// A device result that differs from the host's computation: what differs, and how.
#[derive(Debug)]
pub struct Mismatch(pub String);

/// Why a program did not finish with results matching the host's.
#[derive(Debug)]
pub enum Failure {
    /// The program ran, and a result differs from the host's (exit code 1).
    Mismatch(Mismatch),
    /// The program could not run: a bad argument, an absent backend, a
    /// failed launch (exit code 2).
    Error(kiln::Error),
}

impl From<Mismatch> for Failure {
    fn from(m: Mismatch) -> Self {
        Failure::Mismatch(m)
    }
}

impl From<kiln::Error> for Failure {
    fn from(e: kiln::Error) -> Self {
        Failure::Error(e)
    }
}

impl Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::Mismatch(Mismatch(m)) => write!(f, "MISMATCH: {m}"),
            Failure::Error(e) => Display::fmt(e, f),
        }
    }
}

/// Open the device named by `--backend NAME` (cpu, cuda, wgpu), or else
/// [`kiln::Device::best`], run `program` there and turn the outcome into an
/// exit code: 0 when the results match the host's, 1 when they do not,
/// 2 on an error (a bad argument, an absent backend, a failed launch).
pub fn run(name: &str, program: impl FnOnce(&kiln::Device) -> Checked) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    run_with_args(name, &args, program)
}

/// [`run`] with the arguments given, for a program that has taken its own
/// out of the command line first.
pub fn run_with_args(name: &str, args: &[String], program: impl FnOnce(&kiln::Device) -> Checked) -> ExitCode {
    let outcome = open_device(args).map_err(Failure::from).and_then(|device| {
        println!("{name} on {}", device.info());
        program(&device)
    });
    match outcome {
        Ok(summary) => {
            println!("{summary}\nok: matches the host computation");
            ExitCode::SUCCESS
        }
        Err(failure) => {
            eprintln!("{name}: {failure}");
            ExitCode::from(match failure {
                Failure::Mismatch(_) => 1,
                Failure::Error(_) => 2,
            })
        }
    }
}

/// The device named by `--backend NAME` in `args`, or else the best one found.
pub fn open_device(args: &[String]) -> kiln::Result<kiln::Device> {
    match backend_arg(args)? {
        Some(name) => kiln::Device::by_name(&name),
        None => kiln::Device::best(),
    }
}

/// The value of `--backend NAME` or `--backend=NAME`, if given.
pub fn backend_arg(args: &[String]) -> kiln::Result<Option<String>> {
    let usage =
        |reason: String| kiln::Error::invalid("arguments", format!("{reason}; usage: [--backend cpu|cuda|wgpu]"));
    let mut it = args.iter();
    let mut found = None;
    while let Some(a) = it.next() {
        if a == "--backend" {
            found = Some(it.next().ok_or_else(|| usage("--backend needs a name".into()))?.clone());
        } else if let Some(v) = a.strip_prefix("--backend=") {
            found = Some(v.to_string());
        } else {
            return Err(usage(format!("unknown argument {a:?}")));
        }
    }
    Ok(found)
}

/// A [`Mismatch`] naming the first index where `got` and `want` disagree under `same`.
pub fn check<T: Copy + Debug>(what: &str, got: &[T], want: &[T], same: impl Fn(T, T) -> bool) -> Result<(), Mismatch> {
    if got.len() != want.len() {
        return Err(Mismatch(format!("{what}: {} elements, expected {}", got.len(), want.len())));
    }
    match got.iter().zip(want).position(|(&g, &w)| !same(g, w)) {
        None => Ok(()),
        Some(i) => Err(Mismatch(format!("{what}[{i}] = {:?}, expected {:?}", got[i], want[i]))),
    }
}

/// A [`Mismatch`] saying `why` unless `holds`.
pub fn ensure(holds: bool, why: impl FnOnce() -> String) -> Result<(), Mismatch> {
    if holds { Ok(()) } else { Err(Mismatch(why())) }
}

/// Whether two floats agree to a few ulps (NaN matches NaN).
pub fn close_f32(got: f32, want: f32) -> bool {
    (got.is_nan() && want.is_nan()) || got == want || (got - want).abs() <= 4.0 * f32::EPSILON * want.abs()
}

/// Run `program` on device 0 of every backend that opens here, for the
/// examples' tests: the CPU always, the GPU backends where they exist.
/// Panics, naming the device, unless every run matched the host.
pub fn on_every_device(program: impl Fn(&kiln::Device) -> Checked) {
    for kind in kiln::registry::compiled() {
        let Ok(device) = kiln::Device::open(kind, 0) else {
            eprintln!("skipping {kind}: not available here");
            continue;
        };
        match program(&device) {
            Ok(summary) => eprintln!("{kind}: {summary}"),
            Err(failure) => panic!("on {}: {failure}", device.info()),
        }
    }
}
