//! System benchmarks of the CUDA backend, each against its goal and, where
//! one exists, a baseline measured in the same run: launch overhead (kiln vs
//! a bare cudarc launch of the same function on the same kind of stream),
//! NVRTC compile and cached load in a new process, page-locked copy
//! bandwidth both ways, the device-to-device copy ceiling, and a 16-chunk
//! copy/compute pipeline on 4 streams vs 1.

use std::path::{Path, PathBuf};
use std::time::Instant;

use kiln_core::{Args, Device, Event, HostBuffer, LaunchConfig, Priority, Program, Result};
use kiln_cuda::{CacheStatus, Cuda};
use serde::Serialize;

/// One measured case.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// What was measured ("launch empty kernel / kiln").
    pub case: String,
    /// The unit of `median` and `min` ("us", "ms", "GB/s", "x").
    pub unit: String,
    /// Median over the runs.
    pub median: f64,
    /// Best run (for GB/s and speedups, the largest).
    pub min: f64,
    /// Runs measured.
    pub runs: usize,
    /// The case this one is compared with, measured in the same run.
    pub baseline: Option<String>,
    /// median / baseline's median.
    pub ratio: Option<f64>,
    /// The goal, in words.
    pub goal: String,
    /// Whether the goal was met.
    pub met: Option<bool>,
    /// Anything a reader needs to judge the number.
    pub note: String,
}

/// The whole run.
#[derive(Debug, Serialize)]
pub struct Report {
    /// Device name.
    pub device: String,
    /// Driver version, as kiln reports it.
    pub driver: String,
    /// NVRTC version.
    pub nvrtc: String,
    /// Compute capability.
    pub arch: String,
    /// The commit the binary was built from.
    pub commit: String,
    /// Seconds since the Unix epoch at the start of the run.
    pub unix_time: u64,
    /// The command that produced this report.
    pub command: String,
    /// The rows.
    pub rows: Vec<Row>,
}

fn stats(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(|a, b| a.total_cmp(b));
    (crate::timing::median(&v), v.first().copied().unwrap_or(f64::NAN), v.last().copied().unwrap_or(f64::NAN))
}

/// A row from samples where lower is better (times).
fn time_row(case: &str, unit: &str, samples: Vec<f64>, goal: &str, note: String) -> Row {
    let runs = samples.len();
    let (median, min, _) = stats(samples);
    Row {
        case: case.into(),
        unit: unit.into(),
        median,
        min,
        runs,
        baseline: None,
        ratio: None,
        goal: goal.into(),
        met: None,
        note,
    }
}

/// A row from samples where higher is better (GB/s, speedups): `min` holds the best.
fn rate_row(case: &str, unit: &str, samples: Vec<f64>, goal: &str, note: String) -> Row {
    let (_, _, max) = stats(samples.clone());
    Row { min: max, ..time_row(case, unit, samples, goal, note) }
}

const EMPTY: &str = "extern \"C\" __global__ void empty_kernel() {}";
const FOUR_ARGS: &str =
    "extern \"C\" __global__ void four_args(const float* x, float* y, float a, unsigned long long n) {}";

/// One way of issuing launches, timed: `batch` launches back to back, the
/// clock read after the loop (`sync_in_time`: after a synchronize), repeated.
#[derive(Clone, Copy)]
struct Regime {
    name: &'static str,
    batch: usize,
    repeats: usize,
    sync_in_time: bool,
    note: &'static str,
}

/// CuPy's method (20000 launches, then a synchronize, wall time over all),
/// and the host's own cost (batches short enough never to fill the driver's
/// queue, the clock stopped before the synchronize).
const REGIMES: [Regime; 2] = [
    Regime {
        name: "sustained",
        batch: 20_000,
        repeats: 7,
        sync_in_time: true,
        note: "CuPy's method: 20000 launches then a synchronize, wall time / 20000; bound by the slower of the host and the GPU's launch rate",
    },
    Regime {
        name: "host issue",
        batch: 256,
        repeats: 101,
        sync_in_time: false,
        note: "batches of 256 launches (the driver's queue never fills), clock stopped before the synchronize: the host's own cost",
    },
];

/// Time `launch` under `regime`, microseconds per launch for each repeat.
fn time_launches(regime: Regime, sync: &dyn Fn() -> Result<()>, launch: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
    sync()?;
    let t = Instant::now();
    for _ in 0..regime.batch {
        launch()?;
    }
    if regime.sync_in_time {
        sync()?;
    }
    let us = t.elapsed().as_secs_f64() * 1e6 / regime.batch as f64;
    sync()?;
    Ok(us)
}

/// Host wall time per launch of kiln (the typed tier and the run-time
/// tier) and of a bare cudarc launch of the same function on the same kind
/// of stream, interleaved repeat by repeat.
fn launch_overhead(dev: &Device<Cuda>, rows: &mut Vec<Row>) -> Result<()> {
    use kiln::Tier;
    let empty = dev.kernel(&Program::new("empty_kernel").cuda(EMPTY))?;
    let four = dev.kernel(&Program::new("four_args").cuda(FOUR_ARGS))?;
    let s = dev.create_stream(Priority::Normal)?;
    let raw = dev.create_stream(Priority::Normal)?;
    let x = s.alloc::<f32>(1024)?;
    let mut y = s.alloc::<f32>(1024)?;
    // The same device on the run-time tier: its own stream, kernels and buffers.
    let rdev = Cuda::wrap_device(dev.clone());
    let rs = rdev.create_stream(Priority::Normal)?;
    let (rempty, rfour) = (
        rdev.kernel(&Program::new("empty_kernel").cuda(EMPTY))?,
        rdev.kernel(&Program::new("four_args").cuda(FOUR_ARGS))?,
    );
    let rx = rs.alloc::<f32>(1024)?;
    let mut ry = rs.alloc::<f32>(1024)?;
    let cfg = LaunchConfig::new(1, 1);
    let raw_cfg = cudarc::driver::LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
    let driver_err = |e: cudarc::driver::DriverError| {
        kiln_core::Error::driver(kiln_core::BackendKind::Cuda, "cudarc launch", format!("{e:?}"))
    };
    let (stream, func0, func4) =
        (raw.raw().driver_stream(), empty.raw().driver_function(), four.raw().driver_function());
    let (xp, yp, a, n) = (x.raw().device_ptr(), y.raw().device_ptr(), 2.0f32, 1024u64);
    let sync_s = || s.synchronize();
    let sync_raw = || raw.synchronize();
    let sync_rs = || rs.synchronize();
    for regime in REGIMES {
        let mut samples: [Vec<f64>; 6] = Default::default();
        for rep in 0..regime.repeats + 1 {
            let k0 = time_launches(regime, &sync_s, &mut || {
                // SAFETY: the empty kernel touches no memory.
                unsafe { s.launch(&empty, cfg, Args::new()) }
            })?;
            let b0 = time_launches(regime, &sync_raw, &mut || {
                // SAFETY: the empty kernel takes no parameters and touches no memory.
                unsafe { stream.launch_builder(func0).launch(raw_cfg) }.map(drop).map_err(driver_err)
            })?;
            let r0 = time_launches(regime, &sync_rs, &mut || {
                // SAFETY: the empty kernel touches no memory.
                unsafe { rs.launch(&rempty, cfg, kiln::Args::new()) }
            })?;
            let k4 = time_launches(regime, &sync_s, &mut || {
                let args = Args::new().arg(&x).arg(&mut y).arg(2.0f32).arg(1024u64);
                // SAFETY: four_args touches no memory.
                unsafe { s.launch(&four, cfg, args) }
            })?;
            let b4 = time_launches(regime, &sync_raw, &mut || {
                use cudarc::driver::PushKernelArg;
                let mut b = stream.launch_builder(func4);
                b.arg(&xp).arg(&yp).arg(&a).arg(&n);
                // SAFETY: four_args touches no memory; the arguments match its parameters.
                unsafe { b.launch(raw_cfg) }.map(drop).map_err(driver_err)
            })?;
            let r4 = time_launches(regime, &sync_rs, &mut || {
                let args = kiln::Args::new().arg(&rx).arg(&mut ry).arg(2.0f32).arg(1024u64);
                // SAFETY: four_args touches no memory.
                unsafe { rs.launch(&rfour, cfg, args) }
            })?;
            if rep > 0 {
                // The first repeat warms caches and the driver's queues.
                for (v, x) in samples.iter_mut().zip([k0, b0, r0, k4, b4, r4]) {
                    v.push(x);
                }
            }
        }
        let [kiln0, bare0, run0, kiln4, bare4, run4] = samples;
        // The floor is the bare driver launch measured here and now: no
        // absolute figure (the driver's own cost differs by machine), no
        // peer's number carried in the text.
        let goal = "<= 1.05x the bare cudarc launch (the driver's floor, measured in this run)";
        for (what, kiln, bare, run_time) in
            [("empty kernel", kiln0, bare0, run0), ("4-argument kernel", kiln4, bare4, run4)]
        {
            let note = format!("{}; grid 1 x block 1; {} repeats", regime.note, regime.repeats);
            let base =
                time_row(&format!("launch {what}, {} / cudarc", regime.name), "us", bare, "baseline", note.clone());
            let mut row = time_row(&format!("launch {what}, {} / kiln", regime.name), "us", kiln, goal, note.clone());
            row.baseline = Some(base.case.clone());
            row.ratio = Some(row.median / base.median);
            row.met = Some(row.median / base.median <= 1.05);
            let mut rt = time_row(
                &format!("launch {what}, {} / kiln run-time tier", regime.name),
                "us",
                run_time,
                "<= 1.03x the typed tier's launch",
                note,
            );
            rt.baseline = Some(row.case.clone());
            rt.ratio = Some(rt.median / row.median);
            rt.met = Some(rt.median / row.median <= 1.03);
            rows.push(base);
            rows.push(row);
            rows.push(rt);
        }
    }
    Ok(())
}

/// What the compile timings compile: a hand-written saxpy, or the same
/// computation as a generated user kernel; a nonce starting with
/// [`GENERATED`] picks the generated one.
const GENERATED: &str = "generated";

/// A kernel of realistic size for compile timings; `nonce` makes it new to every cache.
fn compile_program(nonce: &str) -> Result<Program> {
    if nonce.starts_with(GENERATED) {
        // The nonce goes into the name: a generated source follows from its
        // name and body alone.
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(nonce, &mut h);
        let name = format!("user_axpy_{:016x}", std::hash::Hasher::finish(&h));
        let k = kiln_kernels::user::Elementwise::new(name)
            .scalar("a", kiln_core::DType::F32)
            .input("x", kiln_core::DType::F32)
            .inout("y", kiln_core::DType::F32)
            .set("y", kiln_kernels::expr::var("a") * kiln_kernels::expr::var("x") + kiln_kernels::expr::var("y"))
            .build()?;
        return k.program(kiln_core::Language::Cuda, kiln_core::IndexWidth::U64, &[]);
    }
    Ok(Program::new("saxpy_bench").cuda(format!(
        "// {nonce}\nextern \"C\" __global__ void saxpy_bench(const float* x, float* y, float a, unsigned long long n) {{\n\
         for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;\n\
              i += (unsigned long long)gridDim.x * blockDim.x) y[i] = a * x[i] + y[i];\n}}\n"
    )))
}

/// The child side of the cached-load measurement: prints `CACHED_LOAD_US=...`.
pub fn cached_load_child(dir: &Path, nonce: &str) -> Result<()> {
    let dev = Device::<Cuda>::open(0)?;
    dev.raw().set_disk_cache_dir(Some(dir.to_path_buf()));
    let t = Instant::now();
    let k = dev.kernel(&compile_program(nonce)?)?;
    let us = t.elapsed().as_secs_f64() * 1e6;
    if k.raw().cache_status() != &CacheStatus::Hit {
        return Err(kiln_core::Error::invalid(
            "cached load",
            format!("expected a cache hit, got {:?}", k.raw().cache_status()),
        ));
    }
    println!("CACHED_LOAD_US={us}");
    Ok(())
}

fn nvrtc(dev: &Device<Cuda>, rows: &mut Vec<Row>) -> Result<()> {
    compile_rows(dev, rows, "", "saxpy", "CuPy 31 ms, PyCUDA 496 ms")?;
    compile_rows(dev, rows, GENERATED, "generated axpy, a user kernel", "CuPy's ElementwiseKernel 31 ms")
}

/// First compile, cached load in a new process, and memory-cache hit of
/// the programs `compile_program` makes from nonces starting with `prefix`.
fn compile_rows(dev: &Device<Cuda>, rows: &mut Vec<Row>, prefix: &str, what: &str, peers: &str) -> Result<()> {
    let dir = std::env::temp_dir().join(format!("kiln-bench-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dev.raw().set_disk_cache_dir(Some(dir.clone()));
    let (mut first, mut child, mut memory) = (Vec::new(), Vec::new(), Vec::new());
    let exe =
        std::env::current_exe().map_err(|e| kiln_core::Error::invalid("locating the bench binary", e.to_string()))?;
    for i in 0..7 {
        let nonce = format!("{prefix}bench {} {i} {:?}", std::process::id(), Instant::now());
        let program = compile_program(&nonce)?;
        let t = Instant::now();
        let k = dev.kernel(&program)?;
        first.push(t.elapsed().as_secs_f64() * 1e3);
        if k.raw().cache_status() != &CacheStatus::Stored {
            return Err(kiln_core::Error::invalid("first compile", format!("{:?}", k.raw().cache_status())));
        }
        let t = Instant::now();
        dev.kernel(&program)?;
        memory.push(t.elapsed().as_secs_f64() * 1e6);
        let out = std::process::Command::new(&exe)
            .args(["--cached-load-child", &dir.display().to_string(), &nonce])
            .output()
            .map_err(|e| kiln_core::Error::invalid("starting the cached-load child", e.to_string()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        match text.lines().find_map(|l| l.strip_prefix("CACHED_LOAD_US=")).and_then(|v| v.parse::<f64>().ok()) {
            Some(us) => child.push(us / 1e3),
            None => {
                return Err(kiln_core::Error::invalid(
                    "cached-load child",
                    format!("{}{}", text, String::from_utf8_lossy(&out.stderr)),
                ));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    let target = format!("NVRTC to a CUBIN, disk cache on; {peers}");
    rows.push(time_row(&format!("NVRTC first compile ({what})"), "ms", first, "reported", target));
    let mut row = time_row(
        &format!("NVRTC cached load in a new process ({what})"),
        "ms",
        child,
        "< 1 ms",
        "Device::kernel in a fresh process with the device already open: read, checksum, cuModuleLoadData; CuPy 0.02 ms, PyCUDA 0.19 ms".into(),
    );
    row.met = Some(row.median < 1.0);
    rows.push(row);
    rows.push(time_row(
        &format!("repeat compile, same process (memory cache, {what})"),
        "us",
        memory,
        "reported",
        "Device::kernel hit".into(),
    ));
    Ok(())
}

fn gbps(bytes: usize, seconds: f64) -> f64 {
    bytes as f64 / seconds / 1e9
}

fn elapsed(a: &Event<Cuda>, b: &Event<Cuda>) -> Result<f64> {
    Ok(b.elapsed_since(a)?.as_secs_f64())
}

fn bandwidth(dev: &Device<Cuda>, rows: &mut Vec<Row>) -> Result<()> {
    const BYTES: usize = 256 << 20;
    const RUNS: usize = 20;
    let n = BYTES / 4;
    let s = dev.create_stream(Priority::Normal)?;
    let s2 = dev.create_stream(Priority::Normal)?;
    let mut host_in: HostBuffer<Cuda, f32> = dev.alloc_host(n)?;
    host_in.as_mut_slice()?.iter_mut().enumerate().for_each(|(i, v)| *v = i as f32);
    let mut host_out: HostBuffer<Cuda, f32> = dev.alloc_host(n)?;
    let mut d = s.alloc::<f32>(n)?;
    let mut d2 = s.alloc::<f32>(n)?;
    s.fill(&mut d2, 1.0)?;
    let (mut h2d, mut d2h, mut both, mut d2d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for run in 0..RUNS + 2 {
        let a = s.record_event()?;
        s.copy_to_device_async(&host_in, &mut d)?;
        let b = s.record_event()?;
        s.copy_to_host_async(&d2, &mut host_out)?;
        let c = s.record_event()?;
        s.copy(&d2, &mut d)?;
        let e = s.record_event()?;
        // Both directions at once, on two streams.
        let start = s.record_event()?;
        s2.wait(&start)?;
        s.copy_to_device_async(&host_in, &mut d)?;
        s2.copy_to_host_async(&d2, &mut host_out)?;
        let s2_done = s2.record_event()?;
        s.wait(&s2_done)?;
        let end = s.record_event()?;
        end.synchronize()?;
        if run >= 2 {
            h2d.push(gbps(BYTES, elapsed(&a, &b)?));
            d2h.push(gbps(BYTES, elapsed(&b, &c)?));
            d2d.push(gbps(2 * BYTES, elapsed(&c, &e)?));
            both.push(gbps(2 * BYTES, elapsed(&start, &end)?));
        }
    }
    if host_out.as_slice()?.iter().any(|&v| v != 1.0) {
        return Err(kiln_core::Error::invalid("bandwidth check", "device-to-host copy returned wrong data"));
    }
    let note = format!("{} MiB page-locked, timed with events, {RUNS} runs", BYTES >> 20);
    for (name, samples) in [("pinned host-to-device", h2d), ("pinned device-to-host", d2h)] {
        let mut row = rate_row(name, "GB/s", samples, ">= 50 GB/s (PCIe limit ~55)", note.clone());
        row.met = Some(row.median >= 50.0);
        rows.push(row);
    }
    rows.push(rate_row(
        "pinned both directions at once (2 streams)",
        "GB/s",
        both,
        "reported (sum of both directions)",
        note.clone(),
    ));
    rows.push(rate_row(
        "device-to-device copy (ceiling)",
        "GB/s",
        d2d,
        "reported; ~2900 GB/s with cuMemcpy here",
        format!("{} MiB, bytes read + written", BYTES >> 20),
    ));
    Ok(())
}

#[path = "cuda_system/pipeline.rs"]
mod pipeline;

/// Run every case on device 0 and return the report.
pub fn run(command: &str) -> Result<Report> {
    let dev = Device::<Cuda>::open(0)?;
    let info = dev.info().clone();
    let mut rows = Vec::new();
    launch_overhead(&dev, &mut rows)?;
    nvrtc(&dev, &mut rows)?;
    bandwidth(&dev, &mut rows)?;
    pipeline::run(&dev, &mut rows)?;
    let (major, minor) = info.compute_capability.unwrap_or((0, 0));
    Ok(Report {
        device: info.name.clone(),
        driver: info.driver.clone(),
        nvrtc: dev.raw().nvrtc_version().map(|(a, b)| format!("{a}.{b}")).unwrap_or_default(),
        arch: format!("sm_{major}{minor}"),
        commit: option_env!("KILN_GIT_COMMIT").unwrap_or("unknown").to_string(),
        unix_time: std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        command: command.to_string(),
        rows,
    })
}

/// The report as a terminal table.
pub fn table(report: &Report) -> String {
    let mut out = format!("{} ({}, {}, NVRTC {})\n", report.device, report.arch, report.driver, report.nvrtc);
    out += &format!("{:<46} {:>10} {:>10} {:>6} {:>7}  goal\n", "case", "median", "best", "unit", "ratio");
    for r in &report.rows {
        let ratio = r.ratio.map(|x| format!("{x:.2}x")).unwrap_or_default();
        let met = match r.met {
            Some(true) => "met: ",
            Some(false) => "MISSED: ",
            None => "",
        };
        out +=
            &format!("{:<46} {:>10.3} {:>10.3} {:>6} {:>7}  {met}{}\n", r.case, r.median, r.min, r.unit, ratio, r.goal);
    }
    out
}

/// Where `--json` asked the report to go.
pub fn json_path(args: &[String]) -> Option<PathBuf> {
    args.windows(2).find(|w| w[0] == "--json").map(|w| PathBuf::from(&w[1]))
}
