//! A kernel that writes out of bounds: `DeviceFault` naming it, then `DeviceLost`.

use kiln_core::{Args, Device, Error, LaunchConfig, Priority};
use kiln_cuda::Cuda;

use super::common::*;

const CHILD_VAR: &str = "KILN_TEST_FAULT_CHILD";

/// Writes 1 TiB past the end of its buffer.
const OOB: &str = r#"
extern "C" __global__ void oob_writer(float* x) {
    x[(1ull << 38) + threadIdx.x] = 1.0f;
}
"#;

#[test]
fn an_out_of_bounds_kernel_faults_and_the_device_is_then_lost() {
    let Some(dev) = gpu() else { return };
    drop(dev);
    // The fault ends the process's context on this device, so it runs in a process of its own.
    let (ok, out) = run_child("cuda::fault::child_faults", CHILD_VAR, "1");
    assert!(ok, "child process failed:\n{out}");
    for marker in ["FAULT NAMED", "LOST AFTER", "REOPEN LOST"] {
        assert!(out.contains(marker), "missing {marker:?} in:\n{out}");
    }
    println!("{}", out.lines().filter(|l| l.contains("FAULT") || l.contains("LOST")).collect::<Vec<_>>().join("\n"));
}

/// Runs only as the child of the test above.
#[test]
fn child_faults() {
    if is_child(CHILD_VAR).is_none() {
        return;
    }
    let dev = Device::<Cuda>::open(0).unwrap();
    let bystander = dev.create_stream(Priority::Normal).unwrap();
    let mut kept = bystander.upload(&[1.0f32, 2.0]).unwrap();
    let k = kernel(&dev, "oob_writer", OOB);
    let s = dev.create_stream(Priority::High).unwrap();
    let mut x = s.alloc::<f32>(32).unwrap();
    // SAFETY: deliberately not: the kernel writes far outside `x`. That is the test.
    unsafe { s.launch(&k, LaunchConfig::new(1, 32), Args::new().arg(&mut x)) }.unwrap();
    match s.synchronize() {
        Err(Error::DeviceFault { device, kernel, detail }) => {
            assert_eq!(device, dev.name());
            assert_eq!(kernel.as_deref(), Some("oob_writer"), "{detail}");
            assert!(detail.contains("ILLEGAL_ADDRESS"), "{detail}");
            println!("FAULT NAMED: {}", s.synchronize().unwrap_err());
        }
        other => panic!("an out-of-bounds write gave {other:?}"),
    }
    // Every later call says the device is lost, with the fault as the cause.
    let lost = |what: &str, r: kiln_core::Result<()>| match r {
        Err(Error::DeviceLost { cause, .. }) => assert!(cause.contains("oob_writer"), "{what}: {cause}"),
        other => panic!("{what} after the fault gave {other:?}"),
    };
    lost("alloc", dev.alloc::<f32>(4).map(drop));
    lost("device synchronize", dev.synchronize());
    lost("bystander synchronize", bystander.synchronize());
    lost("read back", kept.to_vec().map(drop));
    lost("fill", kept.fill(0.0));
    lost("create_stream", dev.create_stream(Priority::Low).map(drop));
    lost("compile", dev.kernel(&kiln_core::Program::new("saxpy").cuda(SAXPY)).map(drop));
    // The raw level says so too, not only the typed layer.
    assert!(dev.raw().is_lost());
    lost("raw synchronize", kiln_core::RawDevice::synchronize(dev.raw()));
    println!("LOST AFTER: {}", dev.synchronize().unwrap_err());
    // Opening the device again in this process reports the same loss.
    match Device::<Cuda>::open(0) {
        Err(Error::DeviceLost { cause, .. }) => println!("REOPEN LOST: {cause}"),
        other => panic!("reopening after the fault gave {other:?}"),
    }
    // Dropping everything after a fault neither panics nor hangs.
    drop((x, kept, k, s, bystander, dev));
}
