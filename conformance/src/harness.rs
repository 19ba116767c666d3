//! Test support for [`conformance_tests!`](crate::conformance_tests): the
//! functions its tests call. They report by panicking, as tests do.

use kiln_core::{Backend, Device, Error};

use crate::{cases, notes, run, Options, Summary, GROUPS};

/// Run every case of `group` at every size on device 0 of backend `B`, and
/// panic with every failure (seed, index, expected, got and neighbours)
/// unless all pass. When `B` cannot run on this machine (no driver, no
/// adapter, no device) it prints why and returns.
#[track_caller]
pub fn run_group<B: Backend>(group: &str) {
    let device = match Device::<B>::open(0) {
        Ok(d) => d,
        Err(e @ (Error::BackendUnavailable { .. } | Error::DeviceNotFound { .. })) => {
            eprintln!("skipping the {group} conformance tests on {}: {e}", B::KIND);
            return;
        }
        Err(e) => panic!("opening {} device 0 for the {group} conformance tests failed: {e}", B::KIND),
    };
    let options = match Options::from_env() {
        Ok(o) => Options { pattern: Some(group.to_string()), ..o },
        Err(e) => panic!("{e}"),
    };
    let records = run(&device, &options, &mut |_| {});
    assert!(!records.is_empty(), "the conformance suite has no case in group {group:?}");
    let summary = Summary::of(&records);
    eprintln!("{group} on {}: {summary} (base seed {:#x})", device.info(), options.seed);
    if !summary.ok() {
        let failures: Vec<_> = records.iter().filter(|r| r.status.is_failure()).cloned().collect();
        panic!(
            "{} of {} {group} case runs failed on {} (base seed {:#x}; set {} to rerun with another):\n{}",
            failures.len(),
            records.len(),
            device.info(),
            options.seed,
            crate::SEED_VAR,
            notes(&failures)
        );
    }
}

/// Check that `stamped`, the groups the macro has a test for, are exactly
/// the groups the cases use.
#[track_caller]
pub fn check_groups<B: Backend>(stamped: &[&str]) {
    assert_eq!(stamped, GROUPS, "conformance_tests! must stamp one test per group of GROUPS");
    for case in cases::<B>() {
        assert!(GROUPS.contains(&case.group), "{case:?} is in group {:?}, which no test covers", case.group);
    }
}

/// Stamp the conformance suite into a backend's tests: one `#[test]` per
/// group of patterns, each opening device 0 of the backend (or printing why
/// it is absent and passing) and running every case of the group at every
/// size.
///
/// ```ignore
/// // backend-foo/tests/conformance.rs
/// kiln_conformance::conformance_tests!(kiln_foo::Foo);
/// ```
#[macro_export]
macro_rules! conformance_tests {
    ($backend:ty) => {
        #[test]
        fn conformance_fill() {
            $crate::harness::run_group::<$backend>("fill");
        }
        #[test]
        fn conformance_sequence() {
            $crate::harness::run_group::<$backend>("sequence");
        }
        #[test]
        fn conformance_map() {
            $crate::harness::run_group::<$backend>("map");
        }
        #[test]
        fn conformance_elementwise() {
            $crate::harness::run_group::<$backend>("elementwise");
        }
        #[test]
        fn conformance_memory() {
            $crate::harness::run_group::<$backend>("memory");
        }
        #[test]
        fn conformance_transpose() {
            $crate::harness::run_group::<$backend>("transpose");
        }
        #[test]
        fn conformance_matmul() {
            $crate::harness::run_group::<$backend>("matmul");
        }
        #[test]
        fn conformance_image() {
            $crate::harness::run_group::<$backend>("image");
        }
        #[test]
        fn conformance_sort() {
            $crate::harness::run_group::<$backend>("sort");
        }
        #[test]
        fn conformance_reduce() {
            $crate::harness::run_group::<$backend>("reduce");
        }
        #[test]
        fn conformance_scan() {
            $crate::harness::run_group::<$backend>("scan");
        }
        #[test]
        fn conformance_compact() {
            $crate::harness::run_group::<$backend>("compact");
        }
        #[test]
        fn conformance_histogram() {
            $crate::harness::run_group::<$backend>("histogram");
        }
        #[test]
        fn conformance_covers_every_group() {
            $crate::harness::check_groups::<$backend>(&[
                "fill",
                "sequence",
                "map",
                "elementwise",
                "memory",
                "transpose",
                "matmul",
                "image",
                "sort",
                "reduce",
                "scan",
                "compact",
                "histogram",
            ]);
        }
    };
}
