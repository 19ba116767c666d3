//! Adapter choice: Vulkan only, never GL, and the name filter.

use kiln_core::{BackendKind, Device, Error};
use kiln_wgpu::{Wgpu, ADAPTER_ENV};

use crate::common::{child, device};

/// Set in the child process of `a_filter_matching_nothing_is_unavailable`.
const CHILD: &str = "KILN_WGPU_TEST_FILTER_CHILD";

/// Set in the child process of `without_a_vulkan_driver_the_backend_is_unavailable`.
const NO_DRIVER_CHILD: &str = "KILN_WGPU_TEST_NO_DRIVER_CHILD";

/// With the Vulkan loader pointed at no driver, the backend is unavailable
/// and says why: wgpu's GL fall-back (which would find llvmpipe through
/// EGL) is never taken.
#[test]
fn without_a_vulkan_driver_the_backend_is_unavailable() {
    if std::env::var_os(NO_DRIVER_CHILD).is_some() {
        match Device::<Wgpu>::open(0) {
            Err(Error::BackendUnavailable { backend: BackendKind::Wgpu, reason }) => {
                assert!(reason.contains("no Vulkan adapter found"), "{reason}");
                assert!(reason.contains("mesa-vulkan-drivers"), "{reason}");
            }
            other => panic!("expected BackendUnavailable, got {:?}", other.map(|d| d.info().clone())),
        }
        return;
    }
    if !cfg!(target_os = "linux") {
        return;
    }
    let (passed, log) = child(&["adapter::without_a_vulkan_driver_the_backend_is_unavailable"], |c| {
        c.env(NO_DRIVER_CHILD, "1")
            // Both the current and the older name of the loader's driver list.
            .env("VK_DRIVER_FILES", "/nonexistent/kiln_icd.json")
            .env("VK_ICD_FILENAMES", "/nonexistent/kiln_icd.json")
            .env_remove(ADAPTER_ENV);
    });
    assert!(passed && log.contains("1 passed"), "child failed:\n{log}");
}

#[test]
fn the_device_is_vulkan_and_reports_its_limits() {
    let Some(dev) = device() else { return };
    let info = dev.info();
    eprintln!("{info}");
    assert_eq!(info.backend, BackendKind::Wgpu);
    if cfg!(target_os = "linux") {
        assert!(info.driver.starts_with("Vulkan"), "not a Vulkan adapter: {}", info.driver);
    }
    let l = &info.limits;
    // Raised to the adapter's own limits, never below WebGPU's defaults.
    assert!(l.max_threads_per_block >= 256, "{l:?}");
    assert!(l.max_grid.iter().all(|&g| g >= 65535), "{l:?}");
    assert!(l.max_binding_bytes >= 128 << 20, "{l:?}");
    assert!(l.max_buffer_bytes >= l.max_binding_bytes, "{l:?}");
    let listed = Device::<Wgpu>::list().unwrap();
    assert_eq!(listed[0].name, info.name);
    assert_eq!(listed[0].features, info.features);
}

#[test]
fn a_filter_matching_nothing_is_unavailable() {
    if std::env::var_os(CHILD).is_some() {
        // In the child: the filter below is set.
        match Device::<Wgpu>::open(0) {
            Err(Error::BackendUnavailable { reason, .. }) => {
                assert!(reason.contains("no-such-adapter") || reason.contains("no Vulkan adapter found"), "{reason}")
            }
            other => panic!("expected BackendUnavailable, got {:?}", other.map(|d| d.info().clone())),
        }
        assert!(Device::<Wgpu>::list().is_err());
        return;
    }
    let (passed, log) = child(&["adapter::a_filter_matching_nothing_is_unavailable"], |c| {
        c.env(CHILD, "1").env(ADAPTER_ENV, "no-such-adapter");
    });
    assert!(passed, "child failed:\n{log}");
    assert!(log.contains("1 passed"), "the child ran no test:\n{log}");
}

#[test]
fn a_filter_matching_the_adapter_keeps_it() {
    let Some(dev) = device() else { return };
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    // The first word of the adapter's name, in another case.
    let word = dev.name().split_whitespace().next().unwrap().to_uppercase();
    let (passed, log) = child(&["adapter::the_device_is_vulkan_and_reports_its_limits"], |c| {
        c.env(ADAPTER_ENV, &word);
    });
    assert!(passed && log.contains("1 passed"), "{ADAPTER_ENV}={word} lost the adapter:\n{log}");
    assert!(log.contains(dev.name()), "{log}");
}

#[test]
fn device_ordinals_past_the_list_are_not_found() {
    let Some(_dev) = device() else { return };
    let n = Device::<Wgpu>::list().unwrap().len();
    match Device::<Wgpu>::open(n) {
        Err(Error::DeviceNotFound { backend: BackendKind::Wgpu, ordinal, count }) => {
            assert_eq!((ordinal, count), (n, n))
        }
        other => panic!("expected DeviceNotFound, got {:?}", other.map(|d| d.info().clone())),
    }
}

#[test]
fn memory_counts_what_kiln_holds() {
    let Some(dev) = device() else { return };
    dev.synchronize().unwrap();
    let before = dev.memory().unwrap();
    assert!(before.free <= before.total && before.total > 0, "{before:?}");
    if dev.info().memory_bytes > 0 {
        assert_eq!(before.total, dev.info().memory_bytes, "the largest device-local heap");
    }
    let (Some(a0), Some(r0)) = (before.allocated, before.reserved) else {
        panic!("wgpu's Vulkan allocator reports: {before:?}")
    };
    assert!(r0 >= a0, "{before:?}");
    const BYTES: usize = 64 << 20;
    let buffer = dev.alloc::<u8>(BYTES).unwrap();
    let held = dev.memory().unwrap();
    let (a1, r1) = (held.allocated.unwrap(), held.reserved.unwrap());
    assert!(a1 >= a0 + BYTES as u64, "64 MiB more allocated: {before:?} then {held:?}");
    assert!(r1 >= a1, "{held:?}");
    // Dropped, the buffer is kept for the next allocation of its size.
    drop(buffer);
    dev.synchronize().unwrap();
    let kept = dev.memory().unwrap();
    let again = dev.alloc::<u8>(BYTES).unwrap();
    let reused = dev.memory().unwrap();
    assert!(reused.allocated.unwrap() <= kept.allocated.unwrap(), "the kept buffer reused: {kept:?} then {reused:?}");
    drop(again);
    dev.trim_memory(0).unwrap();
    dev.synchronize().unwrap();
    let after = dev.memory().unwrap();
    assert!(after.allocated.unwrap() + BYTES as u64 <= a1, "given back once trimmed: {held:?} then {after:?}");
}
