//! The kernels that take another path on adapters without subgroup
//! operations (WebGPU's baseline: the one-pass scans and compaction walk
//! back with the whole workgroup instead of one subgroup), run on wgpu with
//! the adapter's subgroups hidden, when the machine has a Vulkan adapter
//! (lavapipe in CI). The only test of its binary: it sets the variable
//! before any device opens.

use kiln_conformance::{run, Options, Summary};
use kiln_core::{Device, Error};
use kiln_wgpu::{Wgpu, HIDE_ENV};

#[test]
fn scans_and_compaction_pass_without_subgroups() {
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
    for group in ["scan", "compact"] {
        let options = Options { pattern: Some(group.to_string()), ..Options::default() };
        let records = run(&device, &options, &mut |_| {});
        let summary = Summary::of(&records);
        assert!(!records.is_empty() && summary.ok(), "{group} without subgroups: {summary}\n{records:#?}");
        eprintln!("{group} without subgroups on {}: {summary}", device.info());
    }
}
