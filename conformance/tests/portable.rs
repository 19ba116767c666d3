//! The kernels that take another path on adapters without subgroup
//! operations (WebGPU's baseline: the one-pass scans and compaction walk
//! back with the whole workgroup instead of one subgroup; the sort runs
//! three kernels a pass instead of onesweep), run on wgpu with
//! the adapter's subgroups hidden, when the machine has a Vulkan adapter
//! (lavapipe in CI). The only test of its binary: it sets the variable
//! before any device opens.

use kiln_conformance::harness::test_sizes;
use kiln_conformance::{run, Options, Summary};
use kiln_core::{Device, Error};
use kiln_wgpu::{Wgpu, HIDE_ENV};

#[test]
fn scans_compaction_and_sort_pass_without_subgroups() {
    std::env::set_var(HIDE_ENV, "subgroups");
    let device = match Device::<Wgpu>::open(0) {
        Ok(d) => d,
        Err(e @ (Error::BackendUnavailable { .. } | Error::DeviceNotFound { .. })) => {
            eprintln!("skipping: {e}");
            return;
        }
        Err(e) => panic!("opening wgpu device 0 failed: {e}"),
    };
    assert!(!device.info().features.subgroups, "{HIDE_ENV}=subgroups left them on: {}", device.info());
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
