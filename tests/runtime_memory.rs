//! kiln's memory count on every device that opens here (the CPU always,
//! lavapipe or a GPU where present): bytes in use and the peak follow
//! allocations and drops, a limit refuses what would pass it with an error
//! that names the request, the bytes in use and the limit, and a limit
//! below what is in use or a bad fraction is refused and changes nothing.

use kiln::{Device, Error, MemoryLimit};

/// Device 0 of every backend compiled in that opens here, with a guard that
/// keeps this file's tests (which count a device's bytes exactly) one at a time.
fn devices() -> (std::sync::MutexGuard<'static, ()>, Vec<Device>) {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let guard = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    (guard, kiln::registry::compiled().into_iter().filter_map(|kind| Device::open(kind, 0).ok()).collect())
}

#[test]
fn used_and_peak_follow_buffers() {
    let (_one, devices) = devices();
    for dev in devices {
        let on = dev.to_string();
        dev.synchronize().unwrap();
        dev.reset_peak_memory();
        let base = dev.memory_stats().unwrap();
        assert_eq!(base.peak, base.used, "{on}: the peak starts over");
        let a = dev.alloc::<f32>(1 << 20).unwrap();
        let b = dev.alloc::<u8>(12345).unwrap();
        let held = dev.memory_stats().unwrap();
        assert_eq!(held.used, base.used + 4 * (1 << 20) + 12345, "{on}: {held:?}");
        assert_eq!(held.peak, held.used, "{on}");
        if let Some(r) = held.reserved {
            assert!(r >= 4 << 20, "{on}: the allocator holds at least the buffer: {held:?}");
        }
        drop(a);
        let after = dev.memory_stats().unwrap();
        assert_eq!(after.used, base.used + 12345, "{on}: {after:?}");
        assert_eq!(after.peak, held.peak, "{on}: the peak stays");
        drop(b);
        assert_eq!(dev.memory_stats().unwrap().used, base.used, "{on}");
        dev.trim_memory(0).unwrap();
    }
}

#[test]
fn a_limit_refuses_what_would_pass_it() {
    let (_one, devices) = devices();
    for dev in devices {
        let on = dev.to_string();
        let used = dev.memory_stats().unwrap().used;
        let limit = used + 100_000;
        dev.set_memory_limit(Some(MemoryLimit::Bytes(limit))).unwrap();
        assert_eq!(dev.memory_stats().unwrap().limit, Some(limit), "{on}");
        let kept = dev.alloc::<u8>(60_000).unwrap();
        match dev.alloc::<f32>(20_000) {
            Err(Error::OutOfMemory { requested, counts, what, .. }) => {
                assert_eq!(
                    (requested, counts.used, counts.limit),
                    (80_000, Some(used + 60_000), Some(limit)),
                    "{on}: {what}"
                );
                assert!(what.contains("limit"), "{on}: {what}");
            }
            other => panic!("{on}: expected OutOfMemory past the limit, got {:?}", other.map(|b| b.len())),
        }
        assert_eq!(dev.memory_stats().unwrap().used, used + 60_000, "{on}: a refused request counts nothing");
        let fits = dev.alloc::<u8>(40_000).unwrap();
        // Below what is in use: refused, the limit stays.
        match dev.set_memory_limit(Some(MemoryLimit::Bytes(used))) {
            Err(Error::InvalidArgument { reason, .. }) => assert!(reason.contains("below"), "{on}: {reason}"),
            other => panic!("{on}: expected InvalidArgument, got {other:?}"),
        }
        assert_eq!(dev.memory_stats().unwrap().limit, Some(limit), "{on}");
        for bad in [0.0, -0.5, 1.5, f64::NAN] {
            assert!(
                matches!(dev.set_memory_limit(Some(MemoryLimit::Fraction(bad))), Err(Error::InvalidArgument { .. })),
                "{on}: fraction {bad}"
            );
        }
        drop((kept, fits));
        dev.set_memory_limit(None).unwrap();
        assert_eq!(dev.memory_stats().unwrap().limit, None, "{on}");
        let total = dev.info().memory_bytes;
        if total > 0 {
            dev.set_memory_limit(Some(MemoryLimit::Fraction(0.5))).unwrap();
            assert_eq!(dev.memory_stats().unwrap().limit, Some(total / 2), "{on}");
            dev.set_memory_limit(None).unwrap();
        }
    }
}
