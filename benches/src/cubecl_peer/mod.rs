//! CubeCL, the Rust multi-backend peer, through its wgpu runtime on the
//! very wgpu device (instance, adapter, device and queue) that kiln's wgpu
//! rows ran on, at the cases and sizes those rows measured.
//!
//! Built with the `cubecl` feature only, so that kiln's library does not
//! depend on CubeCL. CubeCL's CUDA and CPU runtimes are left out: they
//! download a prebuilt LLVM at build time, which fails on machines without
//! internet access.
//!
//! # Timing
//! Each run goes through CubeCL's own profiler (`Client::profile`), which on
//! an adapter with timestamp queries brackets the run's compute passes with
//! device timestamps, as kiln's wgpu events do; without them it falls back
//! to its system clock around two syncs, and if profiling fails altogether
//! the run is timed on the host clock between `Client::sync` calls. Either
//! way each row says which ([`Timer`]), and the peer's version string (the
//! report header) names the timers used. The latency case is timed end to
//! end on the host clock, as kiln's are.
//!
//! # Correctness
//! Before timing, each case runs once and its result is checked against the
//! host (sampled elements of elementwise and matmul outputs into poisoned
//! buffers, the whole sum); a wrong result, an error or a panic leaves the
//! case untimed, refused with the reason, and its cell reads absent.
//!
//! # Cases
//! See [`cases`]: the elementwise patterns, `reduce_sum`, `dot`, `sgemm` and
//! `reduce_latency`, on f32. CubeCL has no device-to-device copy, fill or
//! sequence in its client API, and cubek has no scan, compaction, histogram,
//! transpose, image or sort kernels that take kiln's inputs, so those rows
//! read "-".

mod cases;
mod kernels;

use std::panic::{AssertUnwindSafe, catch_unwind};

use cubecl::future::block_on;
use cubecl::prelude::Client;
use cubecl::profile::TimingMethod;
use cubecl::wgpu::{RuntimeOptions, WgpuSetup, try_init_device};
use kiln_core::{DType, Device};
use kiln_wgpu::Wgpu;

use crate::case::size_label;
use crate::latency::latency_runs;
use crate::options::{RunOptions, set_count};
use crate::peers::{Peer, PeerRow};
use crate::row::Row;
use crate::timing::{Sampling, Timer, Timing, sample_windows_warmed, time_end_to_end};
use crate::{BenchConfig, Case};
use cases::{Ctx, Run, has, prepare};

/// The CubeCL release this peer is built against.
pub const CUBECL_VERSION: &str = "0.11.3";

/// The cubek release (reduce, matmul) this peer is built against.
const CUBEK_VERSION: &str = "0.3.1";

/// The peer's name in tables and reports.
const NAME: &str = "cubecl";

/// Run CubeCL on `device` at every case of `config` it has that kiln
/// measured there (`wgpu_rows` holds kiln's rows of that device), with the
/// same runs, sizes, inputs and buffer rotation. `progress` hears each case
/// before it runs. The peer is absent, with the reason, when CubeCL cannot
/// take the device; a case whose result is wrong is refused.
///
/// # Examples
/// ```
/// use kiln_benches::{run_cubecl_peer, BenchConfig, CUBECL_VERSION};
/// use kiln_core::Device;
/// use kiln_wgpu::Wgpu;
/// // Lavapipe on a machine without a GPU; nothing to compare with without Vulkan.
/// if let Ok(device) = Device::<Wgpu>::open(0) {
///     // No kiln rows were measured, so CubeCL times nothing, but is there.
///     let peer = run_cubecl_peer(&device, &BenchConfig::default(), &[], &mut |_| {});
///     assert!(peer.get("vector_add", "f32", 1 << 20).is_none());
///     assert!(peer.status.unwrap().starts_with(CUBECL_VERSION));
/// }
/// ```
pub fn run_cubecl_peer(
    device: &Device<Wgpu>,
    config: &BenchConfig,
    wgpu_rows: &[Row],
    progress: &mut dyn FnMut(&str),
) -> Peer {
    progress("cubecl: kiln's wgpu device, through CubeCL's wgpu runtime");
    let client = match client_on(device) {
        Ok(c) => c,
        Err(reason) => return Peer::absent(NAME, reason),
    };
    let opts = config.run_options();
    let stream = device.stream();
    let sets = |bytes| set_count(&stream, bytes);
    let clock = crate::clock::SmClock::find(device.name());
    let ctx = Ctx { client: &client, sets: &sets, seed: opts.seed, clock: clock.as_ref() };
    let (mut rows, mut refused, mut timers) = (Vec::new(), Vec::new(), Vec::new());
    for case in config.cases().into_iter().chain(config.large_cases()) {
        let (pattern, dtype) = (case.pattern.name(), case.dtype.to_string());
        let kiln_measured = wgpu_rows
            .iter()
            .any(|r| r.pattern == pattern && r.dtype == dtype && r.size == case.n && r.median_ms.is_some());
        if !has(case.pattern) || case.dtype != DType::F32 || !kiln_measured {
            continue;
        }
        progress(&format!("cubecl {pattern} {}", size_label(case.n)));
        let outcome = catch_unwind(AssertUnwindSafe(|| measure(&ctx, &case, &opts)))
            .unwrap_or_else(|panic| Err(format!("CubeCL panicked: {}", panic_message(&*panic))));
        match outcome {
            Ok(t) => {
                if !timers.contains(&t.timer) {
                    timers.push(t.timer);
                }
                rows.push(PeerRow {
                    pattern,
                    dtype,
                    size: case.n,
                    median_ms: t.median_ms,
                    min_ms: t.min_ms,
                    timer: Some(t.timer),
                    calls: None,
                });
            }
            Err(reason) => refused.push((pattern, dtype, case.n, reason)),
        }
        // Hand the case's buffers back before the next one allocates its own.
        let _ = client.memory_cleanup();
    }
    let timers: Vec<&str> = timers.iter().map(|t| timer_words(*t)).collect();
    let timed = if timers.is_empty() { "no case timed".to_string() } else { timers.join(", ") };
    let version = format!("{CUBECL_VERSION} (wgpu runtime on kiln's wgpu device, {timed}; cubek {CUBEK_VERSION})");
    let mut peer = Peer::measured(NAME, &version, rows);
    for (pattern, dtype, n, reason) in refused {
        peer.refuse(&pattern, &dtype, n, reason);
    }
    peer
}

/// A CubeCL client on kiln's wgpu device: the same instance, adapter,
/// device and queue, registered with CubeCL's wgpu runtime.
fn client_on(device: &Device<Wgpu>) -> Result<Client, String> {
    let raw = device.raw();
    let adapter = raw.wgpu_adapter().clone();
    let setup = WgpuSetup {
        instance: raw.wgpu_instance().clone(),
        backend: adapter.get_info().backend,
        adapter,
        device: raw.wgpu_device().clone(),
        queue: raw.wgpu_queue().clone(),
    };
    let options = RuntimeOptions::try_default().map_err(|e| format!("CubeCL's runtime options: {e}"))?;
    let cube_device =
        try_init_device(setup, options).map_err(|e| format!("CubeCL cannot take kiln's wgpu device: {e}"))?;
    Ok(cubecl::Device::Wgpu(cube_device).client())
}

/// Prepare and check `case`, then time it.
fn measure(ctx: &Ctx<'_>, case: &Case, opts: &RunOptions) -> Result<Timing, String> {
    if case.pattern.is_latency() {
        let (warmup, runs) = latency_runs(opts);
        let run = prepare(ctx, case, warmup + runs)?;
        return time_end_to_end(warmup, runs, run);
    }
    let mut run = prepare(ctx, case, opts.warmup + opts.runs.max(1))?;
    time_profiled(ctx, &opts.sampling(), &mut run)
}

/// kiln's sampling method ([`sample_windows_warmed`], warmed until the SM
/// clock is up as kiln's rows are), each window inside one profiling window
/// of CubeCL's; median and min per operation.
fn time_profiled(ctx: &Ctx<'_>, sampling: &Sampling, run: &mut Run<'_>) -> Result<Timing, String> {
    let client = ctx.client;
    sync(client)?;
    let mut timer = Timer::DeviceEvents;
    let warm = crate::timing::clock_is_up(ctx.clock);
    let (times, launches) = sample_windows_warmed(sampling, warm, |first, launches, _| -> Result<f64, String> {
        let ops = |run: &mut Run<'_>| (first..first + launches).try_for_each(&mut *run);
        if timer == Timer::DeviceEvents {
            match client.profile(|| ops(run), "kiln bench") {
                Ok((result, duration)) => {
                    result?;
                    if duration.timing_method() == TimingMethod::System {
                        timer = Timer::WallClockFenced;
                    }
                    let ticks = block_on(duration.resolve()).ok_or("CubeCL's profiler measured nothing")?;
                    return Ok(ticks.duration().as_secs_f64() * 1e3);
                }
                Err(_) => timer = Timer::WallClockFenced,
            }
        }
        sync(client)?;
        let t0 = std::time::Instant::now();
        ops(run)?;
        sync(client)?;
        Ok(t0.elapsed().as_secs_f64() * 1e3)
    })?;
    Ok(Timing::from_sorted(&times, launches, timer))
}

fn sync(client: &Client) -> Result<(), String> {
    block_on(client.sync()).map_err(|e| format!("CubeCL sync: {e:?}"))
}

/// How the report header names a timer.
fn timer_words(timer: Timer) -> &'static str {
    match timer {
        Timer::DeviceEvents => "device timestamps through CubeCL's profiler",
        Timer::WallClockFenced => "fenced wall clock",
        Timer::MonotonicClock => "monotonic clock",
        Timer::EndToEnd => "the latency case end to end on the host clock",
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "no message".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BenchVisitor, Pattern, Timer};
    use kiln_core::DeviceVisitor;

    /// CubeCL on the wgpu device (lavapipe where there is no GPU): rows for
    /// vector_add and the latency case with positive times, next to kiln's.
    #[test]
    fn cubecl_times_vector_add_and_the_latency_case_on_the_wgpu_device() {
        let device = match Device::<Wgpu>::open(0) {
            Ok(d) => d,
            Err(e) => return eprintln!("no wgpu device here, nothing to compare: {e}"),
        };
        let config = BenchConfig {
            patterns: vec!["vector_add".into(), "reduce_sum".into(), "reduce_latency".into()],
            sizes: vec![1 << 12],
            runs: 5,
            warmup: 1,
            ..Default::default()
        };
        let kiln = BenchVisitor::new(&config, &mut |_| {}).visit(&device).unwrap();
        let peer = run_cubecl_peer(&device, &config, &kiln.rows, &mut |_| {});
        let version = peer.status.clone().unwrap();
        assert!(version.starts_with(CUBECL_VERSION), "{version}");
        for pattern in [Pattern::VectorAdd, Pattern::ReduceSum, Pattern::ReduceLatency] {
            let n = pattern.fixed_size().unwrap_or(1 << 12);
            let reason = peer.refusal(&pattern.name(), "f32", n);
            let row = peer.get(&pattern.name(), "f32", n).unwrap_or_else(|| panic!("{}: {reason:?}", pattern.name()));
            assert!(row.median_ms > 0.0 && row.min_ms > 0.0 && row.min_ms <= row.median_ms, "{row:?}");
            let timer = row.timer.unwrap();
            if pattern.is_latency() {
                assert_eq!(timer, Timer::EndToEnd);
            } else {
                assert!(matches!(timer, Timer::DeviceEvents | Timer::WallClockFenced), "{timer:?}");
            }
        }
        assert!(peer.get("copy_d2d", "f32", 1 << 12).is_none(), "CubeCL has no copy case");
    }
}
