//! `kiln devices`: what each backend finds on this machine.

use std::process::ExitCode;

pub use kiln::registry::absent_reason;
use kiln::DeviceInfo;

/// Print each backend's devices with their kind, limits and features, or the
/// reason it is absent ("no CUDA driver", "no Vulkan adapter"). A GPU
/// emulated in software (lavapipe) is marked, with a note that
/// `Device::best()` passes over it. Last, the device `Device::best()` takes
/// and what it passed over on the way, with the reasons
/// (`Device::best_with_report`).
pub fn run() -> kiln::Result<ExitCode> {
    for (kind, found) in kiln::probe() {
        match found {
            Ok(devices) if devices.is_empty() => {
                println!("{:<5} absent: the backend runs but finds no device", kind.name())
            }
            Ok(devices) => {
                for d in devices {
                    println!("{}", describe(&d));
                }
            }
            Err(e) => println!("{:<5} absent: {}", kind.name(), absent_reason(&e)),
        }
    }
    match kiln::registry::best_with_report() {
        Ok((device, report)) => {
            println!("\nDevice::best() takes {}", device.info());
            for skipped in &report.passed_over {
                println!("    passed over {skipped}");
            }
        }
        Err(e) => println!("\nDevice::best() finds no device: {e}"),
    }
    Ok(ExitCode::SUCCESS)
}

fn describe(d: &DeviceInfo) -> String {
    let f = &d.features;
    let features: Vec<&str> = [
        (f.f64, "f64"),
        (f.f16, "f16"),
        (f.subgroups, "subgroups"),
        (f.float_atomics, "float-atomics"),
        (f.int64, "int64"),
        (f.wide_multiply, "wide-multiply"),
        (f.timestamps, "timestamps"),
        (f.matrix_units.half, "matrix-units-f16"),
        (f.matrix_units.tf32, "matrix-units-tf32"),
        (f.matrix_units.f64, "matrix-units-f64"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    let l = &d.limits;
    let mut text = format!(
        "{d}\n    limits: {} threads/block, warp {}, {} KiB shared, largest buffer {} MiB; features: {}",
        l.max_threads_per_block,
        if l.min_warp_size == l.warp_size {
            l.warp_size.to_string()
        } else {
            format!("{}-{}", l.min_warp_size, l.warp_size)
        },
        l.max_shared_mem_per_block >> 10,
        l.max_buffer_bytes >> 20,
        if features.is_empty() { "none".to_string() } else { features.join(" ") }
    );
    if d.kind.is_software() {
        text += &format!(
            "\n    software: runs on the CPU, slower than the cpu backend; Device::best() skips it \
             (KILN_BACKEND={} or Device::open(BackendKind::{:?}, {}) still opens it)",
            d.backend, d.backend, d.ordinal
        );
    }
    text
}
