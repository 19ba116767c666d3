//! Events: submission markers across streams, and device time.

use std::time::Instant;

use kiln_core::{BackendKind, Error, Priority};

use crate::common::device;

#[test]
fn an_event_orders_work_across_streams() {
    let Some(dev) = device() else { return };
    let (s1, s2) = (dev.create_stream(Priority::High).unwrap(), dev.create_stream(Priority::Low).unwrap());
    assert_eq!((s1.priority(), s2.priority()), (Priority::High, Priority::Low));
    let mut a = s1.alloc::<f32>(1 << 16).unwrap();
    s1.fill(&mut a, 3.5).unwrap();
    let done = s1.record_event().unwrap();
    s2.wait(&done).unwrap();
    let mut b = s2.alloc::<f32>(1 << 16).unwrap();
    s2.fill(&mut b, -1.0).unwrap();
    s2.copy(&a, &mut b).unwrap();
    assert!(b.to_vec().unwrap().iter().all(|&x| x == 3.5));
    done.synchronize().unwrap();
    assert!(done.query().unwrap());
}

#[test]
fn an_unrecorded_event_is_complete_and_has_no_time() {
    let Some(dev) = device() else { return };
    let e = dev.create_event().unwrap();
    assert!(e.query().unwrap());
    e.synchronize().unwrap();
    let f = dev.stream().record_event().unwrap();
    f.synchronize().unwrap();
    match f.elapsed_since(&e) {
        Err(Error::InvalidArgument { reason, .. }) => assert!(reason.contains("never recorded"), "{reason}"),
        Err(Error::Unsupported { backend: BackendKind::Wgpu, .. }) => assert!(!dev.info().features.timestamps),
        other => panic!("expected an error, got {other:?}"),
    }
}

/// Elapsed device time around a copy of 64 MiB is positive and no longer
/// than the host's wall time around the same work; without timestamps the
/// answer is `Unsupported`, never a number.
#[test]
fn elapsed_time_is_measured_on_the_device() {
    let Some(dev) = device() else { return };
    let s = dev.stream();
    let src = s.alloc_zeroed::<u32>(16 << 20).unwrap();
    let mut dst = s.alloc::<u32>(16 << 20).unwrap();
    s.synchronize().unwrap();
    let host = Instant::now();
    let start = s.record_event().unwrap();
    for _ in 0..4 {
        s.copy(&src, &mut dst).unwrap();
    }
    let stop = s.record_event().unwrap();
    stop.synchronize().unwrap();
    let wall = host.elapsed();
    assert!(start.query().unwrap() && stop.query().unwrap());
    match stop.elapsed_since(&start) {
        Ok(t) => {
            assert!(dev.info().features.timestamps);
            eprintln!("device {t:?}, host {wall:?}");
            assert!(t.as_nanos() > 0, "4 copies of 64 MiB took no device time");
            assert!(t <= wall, "device time {t:?} exceeds the host's wall time {wall:?}");
            // The other way round is an error, not a negative duration.
            assert!(start.elapsed_since(&stop).is_err());
        }
        Err(Error::Unsupported { backend: BackendKind::Wgpu, reason, .. }) => {
            assert!(!dev.info().features.timestamps, "{reason}");
            assert!(reason.contains("TIMESTAMP_QUERY"), "{reason}");
        }
        Err(e) => panic!("elapsed_since failed: {e}"),
    }
}

#[test]
fn query_turns_true_without_a_blocking_wait() {
    let Some(dev) = device() else { return };
    let s = dev.stream();
    let mut buf = s.alloc::<u32>(1 << 20).unwrap();
    s.fill(&mut buf, 7).unwrap();
    let e = s.record_event().unwrap();
    let t = Instant::now();
    while !e.query().unwrap() {
        assert!(t.elapsed().as_secs() < 60, "the event never completed");
        std::thread::yield_now();
    }
    assert_eq!(buf.to_vec().unwrap()[12345], 7);
}

/// An event recorded when nothing is batched stays with the work that
/// follows (so a timed region excludes host overhead), yet querying or
/// waiting for it on its own still completes.
#[test]
fn an_event_on_an_idle_stream_completes_on_its_own() {
    let Some(dev) = device() else { return };
    let s = dev.stream();
    s.synchronize().unwrap();
    let lone = s.record_event().unwrap();
    let t = Instant::now();
    while !lone.query().unwrap() {
        assert!(t.elapsed().as_secs() < 60, "a lone event never completed");
        std::thread::yield_now();
    }
    let a = s.record_event().unwrap();
    let b = s.record_event().unwrap();
    b.synchronize().unwrap();
    a.synchronize().unwrap();
    if dev.info().features.timestamps {
        // Two marks with nothing between: a tiny, non-negative interval.
        assert!(b.elapsed_since(&a).unwrap().as_millis() < 1000);
    }
}
