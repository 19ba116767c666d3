//! The stress suite, briefly: on the CPU and (when the machine has a Vulkan
//! adapter) on wgpu; and the suite's own alarms: a wrong result is reported
//! with its step and index, a stuck worker is reported by the watchdog.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use kiln_conformance::stress::{
    self, Cause, Heartbeat, MemoryCheck, OpKind, StepAction, StepHook, StepInfo, StressConfig, StressReport, Watchdog,
};
use kiln_core::{BackendKind, Device, Error};
use kiln_cpu::Cpu;
use kiln_wgpu::Wgpu;

fn cpu() -> Device<Cpu> {
    Device::<Cpu>::open(0).unwrap()
}

/// A short run with small sizes: a debug build on two cores keeps up.
fn small() -> StressConfig {
    StressConfig {
        threads: 3,
        streams_per_thread: 3,
        duration: None,
        iterations: None,
        max_alloc_bytes: 2 << 20,
        seed: 0x5eed_0001,
        ..StressConfig::default()
    }
}

/// Every operation ran, and each run checked something.
fn assert_covered(report: &StressReport) {
    for op in OpKind::ALL {
        let count = report.ops.iter().find(|c| c.op == op).unwrap();
        assert!(count.runs + count.skipped > 0, "{op} never ran:\n{report}");
    }
    assert!(report.checks >= report.ops.iter().map(|c| c.runs).sum::<u64>() / 2, "{report}");
    assert!(report.bytes_moved > 0 && report.peak_live_bytes > 0, "{report}");
}

#[test]
fn runs_on_the_cpu_with_every_check_passing() {
    let cfg = StressConfig {
        iterations: Some(330),
        // The CPU reports the host's available memory, which the other
        // tests of this binary and every other process move as well: the
        // verdict is left to the GPU runs, the figures are printed.
        memory_slack: Some(u64::MAX),
        ..small()
    };
    let mut calls = 0;
    let report = stress::run(&cpu(), &cfg, |p| {
        calls += 1;
        assert!(p.fraction() <= 1.0);
    })
    .unwrap_or_else(|e| panic!("{e}\n{}", e.report));
    eprintln!("{report}");
    assert_eq!(report.steps, 330);
    assert!(calls >= 1);
    assert_covered(&report);
    assert_eq!(report.skipped(), 0, "the CPU computes in every dtype:\n{report}");
    assert!(matches!(report.memory, MemoryCheck::Measured { .. }), "{report}");
    assert_pools_bounded(&report);
}

/// The pools, read after the run before any trim, kept within their bound
/// (at most the peak in use), and the leak check after the trim ran.
fn assert_pools_bounded(report: &StressReport) {
    let pool = report.pool.expect("the device pool is read after the run");
    assert!(pool.cached <= pool.cache_bound, "{report}");
    assert_eq!(pool.used, 0, "every buffer dropped: {report}");
    let host = report.host_pool.expect("the host pool is read after the run");
    assert!(host.cached <= host.cache_bound && host.cache_bound <= host.peak, "{report}");
    assert!(matches!(report.leak, MemoryCheck::Measured { .. }), "{report}");
    assert!(report.to_string().contains("after trim_memory(0)"), "{report}");
}

#[test]
fn runs_on_wgpu_when_an_adapter_exists() {
    let dev = match Device::<Wgpu>::open(0) {
        Ok(d) => d,
        Err(Error::BackendUnavailable { backend: BackendKind::Wgpu, reason }) => {
            eprintln!("skipped: {reason}");
            return;
        }
        Err(e) => panic!("opening the wgpu device failed with an unexpected error: {e}"),
    };
    let cfg = StressConfig {
        threads: 2,
        streams_per_thread: 2,
        duration: Some(Duration::from_secs(6)),
        max_alloc_bytes: 1 << 20,
        ..small()
    };
    let report = stress::run(&dev, &cfg, |_| {}).unwrap_or_else(|e| panic!("{e}\n{}", e.report));
    eprintln!("{report}");
    assert!(report.steps > 0 && report.checks > 0, "{report}");
    assert!(
        matches!(report.memory, MemoryCheck::Measured { .. }),
        "wgpu reports its memory (budget or heap less reserved): {report}"
    );
    assert_pools_bounded(&report);
}

#[test]
fn a_wrong_result_is_reported_with_its_step_and_first_bad_index() {
    let hook: StepHook =
        Arc::new(|s: &StepInfo| if s.thread == 1 && s.step >= 5 { StepAction::Corrupt } else { StepAction::Run });
    let cfg = StressConfig { threads: 2, iterations: Some(400), hook: Some(hook), ..small() };
    let err = stress::run(&cpu(), &cfg, |_| {}).expect_err("a corrupted result must fail the run");
    let Cause::Mismatch { site, mismatch } = &err.cause else {
        panic!("not a mismatch: {err}");
    };
    assert_eq!(site.thread, 1);
    assert!(site.step >= 5, "{err}");
    assert_eq!(mismatch.index, mismatch.len / 2, "the hook alters the middle element: {err}");
    assert!(err.report.steps < 400, "the run stopped at the failure: {}", err.report);
    let text = err.to_string();
    for part in [
        "seed 0x5eed0001".to_string(),
        format!("thread 1 step {}", site.step),
        format!("step seed {:#x}", site.step_seed),
        format!("first at index {}", mismatch.index),
    ] {
        assert!(text.contains(&part), "{part:?} missing from: {text}");
    }
}

#[test]
fn a_stuck_worker_is_reported_by_the_watchdog_instead_of_hanging() {
    let release = Arc::new(AtomicBool::new(false));
    let held = release.clone();
    let hook: StepHook = Arc::new(move |s: &StepInfo| {
        // Thread 0 hangs at its step 3 until the test lets it go.
        if s.thread == 0 && s.step == 3 {
            let until = Instant::now() + Duration::from_secs(120);
            while !held.load(Ordering::Acquire) && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        StepAction::Run
    });
    let cfg = StressConfig {
        threads: 2,
        duration: Some(Duration::from_secs(60)),
        timeout: Duration::from_millis(800),
        max_alloc_bytes: 64 << 10,
        hook: Some(hook),
        ..small()
    };
    let started = Instant::now();
    let err = stress::run(&cpu(), &cfg, |_| {}).expect_err("the watchdog must fire");
    let waited = started.elapsed();
    release.store(true, Ordering::Release);
    let Cause::Deadlock { timeout, stalls } = &err.cause else {
        panic!("not a deadlock report: {err}");
    };
    assert_eq!(*timeout, Duration::from_millis(800));
    assert_eq!(stalls.len(), 1, "only thread 0 is stuck: {err}");
    assert_eq!((stalls[0].name.as_str(), stalls[0].step), ("thread 0", 3), "{err}");
    assert!(OpKind::ALL.iter().any(|o| o.name() == stalls[0].op), "{err}");
    assert!(stalls[0].silent_for >= Duration::from_millis(800));
    assert!(waited < Duration::from_secs(30), "reported after {waited:?}");
    assert!(err.to_string().contains("thread 0 stuck in"), "{err}");
}

#[test]
fn the_watchdog_names_silent_heartbeats_only() {
    let beats = [Heartbeat::new("thread 0"), Heartbeat::new("thread 1"), Heartbeat::new("thread 2")];
    let all: Vec<&Heartbeat> = beats.iter().collect();
    let mut dog = Watchdog::new(Duration::from_secs(10));
    let t0 = Instant::now();
    for (i, b) in beats.iter().enumerate() {
        b.enter("scan", i as u64);
    }
    beats[1].describe("scan f32, n = 5 on stream 1".into());
    assert!(dog.check(&all, t0).is_empty());
    // Thread 0 moves on, thread 1 is silent, thread 2 is silent but finished.
    beats[0].beat();
    beats[2].finish();
    assert!(dog.check(&all, t0 + Duration::from_secs(9)).is_empty(), "not yet the timeout");
    let stalls = dog.check(&all, t0 + Duration::from_secs(12));
    assert_eq!(stalls.len(), 1, "{stalls:?}");
    let s = &stalls[0];
    assert_eq!((s.name.as_str(), s.op, s.step), ("thread 1", "scan", 1));
    assert_eq!(s.silent_for, Duration::from_secs(12));
    assert_eq!(s.to_string(), "thread 1 stuck in `scan` (step 1) for 12.0 s: scan f32, n = 5 on stream 1");
    // Thread 0's silence counts from the check that saw its last beat.
    let later = dog.check(&all, t0 + Duration::from_secs(18));
    assert!(later.iter().all(|s| s.name != "thread 0"), "{later:?}");
    assert_eq!(dog.check(&all, t0 + Duration::from_secs(20)).len(), 2);
}

#[test]
fn a_configuration_that_cannot_run_is_refused() {
    for cfg in [
        StressConfig { threads: 0, ..small() },
        StressConfig { streams_per_thread: 0, ..small() },
        StressConfig { timeout: Duration::ZERO, ..small() },
    ] {
        let err = stress::run(&cpu(), &cfg, |_| {}).unwrap_err();
        assert!(matches!(err.cause, Cause::Setup(Error::InvalidArgument { .. })), "{err}");
        assert_eq!(err.report.steps, 0);
    }
}
