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
/// every case of the group at every size; and `covers_every_group`, which
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
