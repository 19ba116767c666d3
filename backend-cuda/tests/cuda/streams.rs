//! Streams, events, cross-stream order and priorities.

use std::time::Duration;

use kiln_core::{Args, Error, LaunchConfig, Priority};

use super::common::*;

/// Spins for `cycles` clock cycles, then thread 0 writes `value`.
const SLOW_WRITE: &str = r#"
extern "C" __global__ void slow_write(float* out, float value, unsigned long long cycles) {
    long long start = clock64();
    while ((unsigned long long)(clock64() - start) < cycles) { }
    if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = value;
}
"#;

/// About 60 ms at the H100's clocks (well over 20 ms at any clock it runs).
const SLOW_CYCLES: u64 = 100_000_000;

#[test]
fn events_time_real_work() {
    let Some(dev) = gpu() else { return };
    let k = kernel(&dev, "slow_write", SLOW_WRITE);
    let s = dev.stream();
    let mut out = s.alloc::<f32>(1).unwrap();
    let start = s.record_event().unwrap();
    let args = Args::new().arg(&mut out).arg(3.5f32).arg(SLOW_CYCLES / 4);
    // SAFETY: slow_write writes out[0] only, and `out` has one element.
    unsafe { s.launch(&k, LaunchConfig::new(1, 32), args) }.unwrap();
    let stop = s.record_event().unwrap();
    stop.synchronize().unwrap();
    assert!(stop.query().unwrap());
    let t = stop.elapsed_since(&start).unwrap();
    assert!(t > Duration::from_millis(2) && t < Duration::from_secs(10), "elapsed {t:?}");
    assert_eq!(out.to_vec().unwrap(), vec![3.5]);

    let never = dev.create_event().unwrap();
    assert!(never.query().unwrap(), "an unrecorded event counts as complete");
    match stop.elapsed_since(&never) {
        Err(Error::InvalidArgument { reason, .. }) => assert!(reason.contains("recorded"), "{reason}"),
        other => panic!("elapsed from an unrecorded event gave {other:?}"),
    }
}

#[test]
fn a_stream_waiting_on_an_event_sees_the_work_before_it() {
    let Some(dev) = gpu() else { return };
    let k = kernel(&dev, "slow_write", SLOW_WRITE);
    let a = dev.create_stream(Priority::Normal).unwrap();
    let b = dev.create_stream(Priority::Normal).unwrap();
    let mut x = a.alloc::<f32>(1).unwrap();
    a.fill(&mut x, POISON_F32).unwrap();
    let args = Args::new().arg(&mut x).arg(42.0f32).arg(SLOW_CYCLES);
    // SAFETY: slow_write writes x[0] only.
    unsafe { a.launch(&k, LaunchConfig::new(1, 32), args) }.unwrap();
    let done = a.record_event().unwrap();
    b.wait(&done).unwrap();
    let mut y = b.alloc::<f32>(1).unwrap();
    b.fill(&mut y, 0.0).unwrap();
    b.copy(&x, &mut y).unwrap();
    // B's copy ran after A's slow kernel: it read the value, not the poison.
    assert_eq!(y.to_vec().unwrap(), vec![42.0]);
    // The host did not wait for A: B's wait is on the device.
    assert!(done.query().unwrap());

    // Without the wait, B's copy races A's kernel and reads the poison (shown, not
    // asserted: the order of unordered streams is not guaranteed either way).
    let mut x2 = a.alloc::<f32>(1).unwrap();
    a.fill(&mut x2, POISON_F32).unwrap();
    a.synchronize().unwrap();
    let args = Args::new().arg(&mut x2).arg(42.0f32).arg(SLOW_CYCLES);
    // SAFETY: as above.
    unsafe { a.launch(&k, LaunchConfig::new(1, 32), args) }.unwrap();
    let mut y2 = b.alloc::<f32>(1).unwrap();
    b.copy(&x2, &mut y2).unwrap();
    println!("without the wait, B read {:?}", y2.to_vec().unwrap());
    a.synchronize().unwrap();
}

#[test]
fn priorities_are_clamped_into_the_device_range() {
    let Some(dev) = gpu() else { return };
    let (least, greatest) = dev.raw().stream_priority_range();
    println!("stream priority range: least {least}, greatest {greatest}");
    assert!(least >= greatest, "lower numbers are higher priorities");
    let mut seen = Vec::new();
    for p in [Priority::Low, Priority::Normal, Priority::High] {
        let s = dev.create_stream(p).unwrap();
        let n = s.raw().cuda_priority();
        assert!((greatest..=least).contains(&n), "{p:?} -> {n}");
        assert_eq!((s.priority(), n), kiln_cuda::clamp_priority(p, (least, greatest)));
        if least - greatest >= 2 {
            assert_eq!(s.priority(), p, "a range of {} levels holds all three", least - greatest + 1);
        }
        // The stream works.
        let mut buf = s.alloc::<u32>(3).unwrap();
        s.fill(&mut buf, 9).unwrap();
        assert_eq!(buf.to_vec().unwrap(), vec![9, 9, 9]);
        seen.push(n);
    }
    assert_eq!(seen[0], least);
    assert_eq!(seen[2], greatest);
    assert!(seen[0] >= seen[1] && seen[1] >= seen[2]);
}

#[test]
fn device_synchronize_waits_for_every_stream() {
    let Some(dev) = gpu() else { return };
    let k = kernel(&dev, "slow_write", SLOW_WRITE);
    let streams: Vec<_> = (0..3).map(|_| dev.create_stream(Priority::Normal).unwrap()).collect();
    let mut outs: Vec<_> = streams.iter().map(|s| s.alloc::<f32>(1).unwrap()).collect();
    for (i, (s, o)) in streams.iter().zip(outs.iter_mut()).enumerate() {
        let args = Args::new().arg(o).arg(i as f32 + 1.0).arg(SLOW_CYCLES / 10);
        // SAFETY: writes o[0] only.
        unsafe { s.launch(&k, LaunchConfig::new(1, 32), args) }.unwrap();
    }
    let marks: Vec<_> = streams.iter().map(|s| s.record_event().unwrap()).collect();
    dev.synchronize().unwrap();
    assert!(marks.iter().all(|e| e.query().unwrap()));
    for (i, o) in outs.iter().enumerate() {
        assert_eq!(o.to_vec().unwrap(), vec![i as f32 + 1.0]);
    }
}

/// Copies from another device and waits on its events: a second opened
/// handle of device 0 is another device to kiln, and the copy goes through
/// cuMemcpyPeerAsync; the source is dropped before the copy is known done.
#[test]
fn copies_between_devices_through_the_driver() {
    let Some(a) = gpu() else { return };
    let Some(b) = gpu() else { return };
    let (sa, sb) = (a.create_stream(kiln_core::Priority::Normal).unwrap(), b.stream());
    for (i, n) in [1usize, 4099, 1 << 22].into_iter().enumerate() {
        let data = random_f32(400 + i as u64, n);
        let mut x = sa.alloc::<f32>(n + 2).unwrap();
        sa.fill(&mut x, POISON_F32).unwrap();
        sa.copy_to_device(&data, &mut x.slice_mut(2..).unwrap()).unwrap();
        let written = sa.record_event().unwrap();
        sb.wait(&written).unwrap();
        let mut y = sb.upload(&vec![-1.0f32; n + 1]).unwrap();
        sb.copy_from_peer(&x.slice(2..).unwrap(), &mut y.slice_mut(1..).unwrap()).unwrap();
        drop(x);
        let got = y.to_vec().unwrap();
        assert_eq!(got[0], -1.0, "n={n}: written before its range");
        assert_eq!(&got[1..], &data[..], "n={n}");
    }
    let mut on_a = a.upload(&[0u32; 4]).unwrap();
    let x = a.upload(&[1u32; 4]).unwrap();
    assert!(matches!(sb.copy_from_peer(&x, &mut on_a), Err(kiln_core::Error::DeviceMismatch { .. })));
    sb.synchronize().unwrap();
    sa.synchronize().unwrap();
}
