//! Buffers kept for reuse: a dropped buffer's memory, handed to a new one
//! on another stream, is written only after the work recorded before the
//! drop has read it.

use kiln_core::Priority;

use crate::common::{bytes, device, rng};

#[test]
fn a_reused_buffer_is_written_after_earlier_work_reads_it() {
    let Some(dev) = device() else { return };
    let mut r = rng(41);
    let (s1, s2) = (dev.stream(), dev.create_stream(Priority::Normal).unwrap());
    for n in [4usize, 1000, 1 << 20] {
        let first = bytes(&mut r, n);
        let second = bytes(&mut r, n);
        let a = s1.upload(&first).unwrap();
        let mut b = s1.alloc::<u8>(n).unwrap();
        b.copy_from(&a).unwrap(); // recorded on s1, not yet run
        drop(a);
        // Same size: `a`'s memory, written on another stream.
        let c = s2.upload(&second).unwrap();
        assert_eq!(b.to_vec().unwrap(), first, "the copy read the old contents ({n} bytes)");
        assert_eq!(c.to_vec().unwrap(), second, "the new owner's contents ({n} bytes)");
    }
}

#[test]
fn trim_lets_kept_buffers_go_and_allocation_goes_on() {
    let Some(dev) = device() else { return };
    let s = dev.stream();
    for _ in 0..3 {
        drop(s.alloc::<f32>(1 << 18).unwrap());
    }
    dev.trim_memory(0).unwrap();
    let x = s.upload(&[1.0f32, 2.0, 3.0]).unwrap();
    assert_eq!(x.to_vec().unwrap(), [1.0, 2.0, 3.0]);
}

#[test]
fn a_buffer_of_another_size_in_its_class_is_reused() {
    let Some(dev) = device() else { return };
    dev.trim_memory(0).unwrap();
    // 41 MiB and 47 MiB share the class of 48 MiB (32 MiB + 2 x 8 MiB).
    drop(dev.alloc::<u8>(41 << 20).unwrap());
    dev.synchronize().unwrap();
    let kept = dev.memory().unwrap().allocated.unwrap();
    let b = dev.alloc::<u8>(47 << 20).unwrap();
    let reused = dev.memory().unwrap().allocated.unwrap();
    assert!(reused <= kept, "the kept buffer serves 47 MiB: {kept} then {reused} bytes allocated");
    assert_eq!(b.len(), 47 << 20);
    drop(b);
    dev.trim_memory(0).unwrap();
}

#[test]
fn kept_buffers_stay_within_the_peak_in_use_and_the_budget() {
    let Some(dev) = device() else { return };
    dev.synchronize().unwrap();
    dev.trim_memory(0).unwrap();
    dev.synchronize().unwrap();
    let base = dev.memory().unwrap().allocated.unwrap();
    // One buffer at a time, each larger: keeping them all would hold
    // 4 + 8 + 16 + 32 MiB; the most in use at once is 32 MiB.
    for mib in [4usize, 8, 16, 32] {
        drop(dev.alloc::<u8>(mib << 20).unwrap());
        let s = dev.memory_stats().unwrap();
        assert_eq!(s.cache_bound, (mib << 20) as u64, "the peak in use since the trim");
        assert!(s.cached <= s.cache_bound, "{s:?}");
    }
    dev.synchronize().unwrap();
    let held = dev.memory().unwrap().allocated.unwrap();
    assert!(held <= base + (32 << 20) + (1 << 20), "at most the 32 MiB buffer kept: {base} then {held} bytes");
    dev.set_cache_policy(kiln_core::CachePolicy::budget(16 << 20)).unwrap();
    assert_eq!(dev.memory_stats().unwrap().cached, 0, "32 MiB pass a budget of 16");
    dev.set_cache_policy(kiln_core::CachePolicy::default()).unwrap();
    dev.trim_memory(0).unwrap();
    let s = dev.memory_stats().unwrap();
    assert_eq!((s.cached, s.cache_bound), (0, 0));
}

#[test]
fn the_allocator_gives_back_blocks_that_a_few_buffers_pin() {
    let Some(dev) = device() else { return };
    let s = dev.stream();
    // 96 buffers of 1 MiB; every 32nd lives on, the rest go, and the pool
    // lets go of what it kept. The three survivors pin at most three of
    // the allocator's small blocks (a block of wgpu's default sizes, 128
    // MiB, would hold all 96 and stay with 125 MiB of it free).
    let buffers: Vec<_> = (0..96).map(|_| s.alloc::<u8>(1 << 20)).collect::<Result<_, _>>().unwrap();
    let survivors: Vec<_> = buffers.into_iter().step_by(32).collect();
    dev.trim_memory(0).unwrap();
    dev.synchronize().unwrap();
    let m = dev.memory().unwrap();
    let (Some(allocated), Some(reserved)) = (m.allocated, m.reserved) else {
        panic!("wgpu's Vulkan allocator reports: {m:?}")
    };
    let free = reserved - allocated;
    assert!(free <= 80 << 20, "{} MiB reserved beyond the live buffers: {m:?}", free >> 20);
    assert_eq!(survivors.len(), 3);
}
