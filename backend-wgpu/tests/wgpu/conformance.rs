//! The conformance suite: every pattern x dtype x size against the CPU
//! reference; and again, for the kernels that take another path there, on
//! the adapter with its subgroups hidden.

use kiln_conformance::harness::test_sizes;
use kiln_conformance::{run, Options, Summary};
use kiln_core::Error;
use kiln_wgpu::{Optional, Wgpu};

kiln_conformance::conformance_tests!(kiln_wgpu::Wgpu);

/// On adapters without subgroup operations (WebGPU's baseline) the
/// one-pass scans and compaction walk back with the whole workgroup
/// instead of one subgroup, and the sort runs three kernels a pass instead
/// of onesweep: those paths, on this adapter with its subgroups hidden.
#[test]
fn scans_compaction_and_sort_pass_without_subgroups() {
    let device = match Wgpu::open_without(0, &[Optional::Subgroups]) {
        Ok(d) => d,
        Err(e @ (Error::BackendUnavailable { .. } | Error::DeviceNotFound { .. })) => {
            eprintln!("skipping: {e}");
            return;
        }
        Err(e) => panic!("opening wgpu device 0 without subgroups failed: {e}"),
    };
    assert!(!device.info().features.subgroups, "subgroups were hidden, yet {}", device.info());
    for group in ["scan", "compact", "sort"] {
        // On lavapipe at most 100003 elements: the three-phase sort's tiles
        // of 256 keys make 391 of them (the million-key size would add
        // minutes on two cores).
        let sizes = test_sizes(device.info().kind);
        let options = Options { pattern: Some(group.to_string()), sizes, ..Options::default() };
        let records = run(&device, &options, &mut |_| {});
        let summary = Summary::of(&records);
        assert!(!records.is_empty() && summary.ok(), "{group} without subgroups: {summary}\n{records:#?}");
        eprintln!("{group} without subgroups on {}: {summary}", device.info());
    }
}

/// From 1 Mi elements on, unsegmented scans and compactions are carried (a
/// totals pass, a scan of the totals, the tile pass) where shorter ones
/// look back; the suite's sizes on a software adapter stop short of that,
/// so those paths run here at 1 Mi + 1, with subgroups and without.
#[test]
fn long_scans_and_compactions_pass_carried() {
    let Some(devices) = crate::common::with_and_without(Optional::Subgroups) else { return };
    for device in &devices {
        for pattern in ["scan/inclusive", "scan/exclusive", "copy_if/greaterthan", "copy_if/nonzero"] {
            let options =
                Options { pattern: Some(pattern.to_string()), sizes: vec![(1 << 20) + 1], ..Options::default() };
            let records = run(device, &options, &mut |_| {});
            let summary = Summary::of(&records);
            assert!(!records.is_empty() && summary.ok(), "{pattern} at 1 Mi + 1: {summary}\n{records:#?}");
            eprintln!("{pattern} at 1 Mi + 1 on {}: {summary}", device.info());
        }
    }
}
