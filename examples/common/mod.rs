//! What every seed program shares: the device from `--backend`, the length
//! argument of the kernel ABI, checking results against the host, exit codes.

#![allow(dead_code)] // each example uses a different part

use std::fmt::Debug;
use std::process::ExitCode;

use kiln::DeviceVisitor;

/// What a seed program found: `Ok` with a line saying what it computed, or
/// `Err` with the first element that differs from the host's computation.
pub type Checked = Result<String, String>;

/// Open the device named by `--backend NAME` (cpu, cuda, wgpu), or else
/// [`kiln::Device::best`], run `program` there and turn the outcome into an
/// exit code: 0 when the results match the host's, 1 when they do not,
/// 2 on an error (a bad argument, an absent backend, a failed launch).
/// For programs on the run-time tier.
pub fn run(name: &str, program: impl FnOnce(&kiln::Device) -> kiln::Result<Checked>) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let device = match backend_arg(&args) {
        Ok(Some(name)) => kiln::Device::by_name(&name),
        Ok(None) => kiln::Device::best(),
        Err(e) => Err(e),
    };
    let device = match device {
        Ok(d) => d,
        Err(e) => {
            eprintln!("{name}: {e}");
            return ExitCode::from(2);
        }
    };
    println!("{name} on {}", device.info());
    match program(&device) {
        Ok(Ok(summary)) => {
            println!("{summary}\nok: matches the host computation");
            ExitCode::SUCCESS
        }
        Ok(Err(mismatch)) => {
            eprintln!("{name}: MISMATCH: {mismatch}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::from(2)
        }
    }
}

/// [`run`] for programs written generically on the typed tier: the visitor
/// runs with the device's concrete backend type.
pub fn main<V: DeviceVisitor<Output = kiln::Result<Checked>>>(name: &str, program: V) -> ExitCode {
    run(name, |device| device.visit(program))
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

/// `Err` naming the first index where `got` and `want` disagree under `same`.
pub fn check<T: Copy + Debug>(what: &str, got: &[T], want: &[T], same: impl Fn(T, T) -> bool) -> Result<(), String> {
    if got.len() != want.len() {
        return Err(format!("{what}: {} elements, expected {}", got.len(), want.len()));
    }
    match got.iter().zip(want).position(|(&g, &w)| !same(g, w)) {
        None => Ok(()),
        Some(i) => Err(format!("{what}[{i}] = {:?}, expected {:?}", got[i], want[i])),
    }
}

/// Whether two floats agree to a few ulps (NaN matches NaN).
pub fn close_f32(got: f32, want: f32) -> bool {
    (got.is_nan() && want.is_nan()) || got == want || (got - want).abs() <= 4.0 * f32::EPSILON * want.abs()
}

/// Run `program` on device 0 of every backend that opens here, for the
/// examples' tests: the CPU always, the GPU backends where they exist.
pub fn on_every_device(program: impl Fn(&kiln::Device) -> kiln::Result<Checked>) {
    for entry in kiln::registry::entries() {
        let Ok(device) = kiln::Device::open(entry.kind, 0) else {
            eprintln!("skipping {}: not available here", entry.kind);
            continue;
        };
        match program(&device) {
            Ok(Ok(summary)) => eprintln!("{}: {summary}", entry.kind),
            other => panic!("on {}: {other:?}", device.info()),
        }
    }
}

/// [`on_every_device`] for a program on the typed tier.
pub fn on_every_backend<V: DeviceVisitor<Output = kiln::Result<Checked>> + Clone>(program: V) {
    on_every_device(|device| device.visit(program.clone()))
}
