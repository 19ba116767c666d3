//! Test support for [`conformance_tests!`](crate::conformance_tests): the
//! functions its tests call. They report by panicking, as tests do.

use kiln_core::{Backend, Device, DeviceKind, Error};

use crate::{GROUPS, Options, SIZES, Summary, cases, notes, run};

/// Run every case of `group` at every size of [`test_sizes`] on device 0 of backend `B`, and
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
        Ok(o) => Options { pattern: Some(group.to_string()), sizes: test_sizes(device.info().kind), ..o },
        Err(e) => panic!("{e}"),
    };
    let records = run(&device, &options, &mut |_| {});
    assert!(!records.is_empty(), "the conformance suite has no case in group {group:?}");
    let summary = Summary::of(&records);
    let largest = options.sizes.iter().max().copied().unwrap_or(0);
    eprintln!("{group} on {}: {summary} (sizes up to {largest}, base seed {:#x})", device.info(), options.seed);
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

/// Set to run the conformance tests at every size on a GPU emulated on the
/// CPU too (see [`test_sizes`]).
pub const FULL_SIZES_VAR: &str = "KILN_CONFORMANCE_FULL";

/// The largest size the conformance tests run on a GPU emulated on the CPU.
pub const SOFTWARE_MAX_SIZE: usize = 100_003;

/// The sizes [`run_group`] runs: every one of [`SIZES`], but
/// on a GPU emulated on the CPU (lavapipe) none past [`SOFTWARE_MAX_SIZE`]
/// unless [`FULL_SIZES_VAR`] is set. There the million-element size adds
/// minutes on two cores and runs nothing the smaller sizes do not: 100 003
/// elements already span hundreds of workgroups and dozens of the largest
/// tiles. The CPU backend and real GPUs (`kiln conform`) run it.
///
/// ```
/// use kiln_conformance::harness::{test_sizes, SOFTWARE_MAX_SIZE};
/// use kiln_core::DeviceKind;
/// assert_eq!(test_sizes(DeviceKind::DiscreteGpu), kiln_conformance::SIZES);
/// if std::env::var_os(kiln_conformance::harness::FULL_SIZES_VAR).is_none() {
///     assert_eq!(test_sizes(DeviceKind::Software).iter().max(), Some(&SOFTWARE_MAX_SIZE));
/// }
/// ```
pub fn test_sizes(kind: DeviceKind) -> Vec<usize> {
    let capped = kind.is_software() && std::env::var_os(FULL_SIZES_VAR).is_none();
    SIZES.iter().copied().filter(|&n| !capped || n <= SOFTWARE_MAX_SIZE).collect()
}

/// Check that the groups are distinct, that every group has a case on
/// backend `B`, and that every case is in one of the groups, so each case
/// runs in exactly one test of [`conformance_tests!`](crate::conformance_tests).
#[track_caller]
pub fn check_groups<B: Backend>() {
    for (i, group) in GROUPS.iter().enumerate() {
        assert!(!GROUPS[..i].contains(group), "group {group:?} is listed twice in for_each_group!");
    }
    let cases = cases::<B>();
    for group in GROUPS {
        assert!(cases.iter().any(|c| c.group == *group), "group {group:?} has no case");
    }
    for case in &cases {
        assert!(GROUPS.contains(&case.group), "{case:?} is in group {:?}, which no test covers", case.group);
    }
}

/// Stamp the conformance suite into a backend's tests: one `#[test]` per
/// group of patterns, named after the group (`fill`, `reduce`, ...; the
/// list is [`for_each_group!`](crate::for_each_group)), each opening device
/// 0 of the backend (or printing why it is absent and passing) and running
/// every case of the group at every size of [`test_sizes`]; and `covers_every_group`, which
/// runs [`check_groups`]. Invoke it in a module of its own.
///
/// ```ignore
/// // backend-foo/tests/conformance.rs
/// kiln_conformance::conformance_tests!(kiln_foo::Foo);
/// ```
#[macro_export]
macro_rules! conformance_tests {
    ($backend:ty) => {
        $crate::for_each_group!($crate::__conformance_tests![$backend]);

        #[test]
        fn covers_every_group() {
            $crate::harness::check_groups::<$backend>();
        }
    };
}

/// The tests of [`conformance_tests!`](crate::conformance_tests), one per
/// group of the list.
#[doc(hidden)]
#[macro_export]
macro_rules! __conformance_tests {
    ([$backend:ty] $($group:ident => $add:ident,)*) => {
        $(
            #[test]
            fn $group() {
                $crate::harness::run_group::<$backend>(stringify!($group));
            }
        )*
    };
}
