//! The copy/compute pipeline case: 16 chunks through copy in, a kernel and
//! copy out, on 4 streams against 1, with one traced pass showing which
//! stages overlapped.

use std::time::Instant;

use kiln_core::{Args, Device, Event, HostBuffer, LaunchConfig, Priority, Program, Result, Stream};
use kiln_cuda::Cuda;

use super::{Row, elapsed, rate_row, time_row};

const CHUNKS: usize = 16;
const CHUNK: usize = 4 << 20; // u32 elements: 16 MiB

/// xorshift32 applied `iters` times per element: integer work, so the CPU
/// reproduces every output exactly, and `iters` sets the compute time.
const CHURN: &str = r#"
extern "C" __global__ void churn(const unsigned int* __restrict__ x, unsigned int* __restrict__ y,
                                 unsigned int iters, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        unsigned int v = x[i];
        for (unsigned int k = 0; k < iters; ++k) { v ^= v << 13; v ^= v >> 17; v ^= v << 5; }
        y[i] = v;
    }
}
"#;

fn churn_reference(mut v: u32, iters: u32) -> u32 {
    for _ in 0..iters {
        v ^= v << 13;
        v ^= v >> 17;
        v ^= v << 5;
    }
    v
}

/// Everything one pipeline configuration needs.
struct Pipeline {
    streams: Vec<Stream<Cuda>>,
    dev_in: Vec<kiln_core::Buffer<Cuda, u32>>,
    dev_out: Vec<kiln_core::Buffer<Cuda, u32>>,
}

/// Per-chunk events: before the copy in, before the kernel, after it, after the copy out.
type Trace = Vec<[Event<Cuda>; 4]>;

impl Pipeline {
    fn new(dev: &Device<Cuda>, streams: usize) -> Result<Self> {
        let streams: Vec<_> = (0..streams).map(|_| dev.create_stream(Priority::Normal)).collect::<Result<_>>()?;
        let dev_in = streams.iter().map(|s| s.alloc::<u32>(CHUNK)).collect::<Result<_>>()?;
        let dev_out = streams.iter().map(|s| s.alloc::<u32>(CHUNK)).collect::<Result<_>>()?;
        Ok(Pipeline { streams, dev_in, dev_out })
    }

    /// One pass over the 16 chunks, chunk c on stream c mod streams; host wall seconds.
    fn pass(
        &mut self,
        k: &kiln_core::Kernel<Cuda>,
        iters: u32,
        input: &[HostBuffer<Cuda, u32>],
        output: &mut [HostBuffer<Cuda, u32>],
        mut trace: Option<&mut Trace>,
    ) -> Result<f64> {
        let t = Instant::now();
        for (c, (hin, hout)) in input.iter().zip(output.iter_mut()).enumerate() {
            let i = c % self.streams.len();
            let s = &self.streams[i];
            let e0 = trace.as_ref().map(|_| s.record_event()).transpose()?;
            s.copy_to_device_async(hin, &mut self.dev_in[i])?;
            let e1 = trace.as_ref().map(|_| s.record_event()).transpose()?;
            let args = Args::new().arg(&self.dev_in[i]).arg(&mut self.dev_out[i]).arg(iters).arg(CHUNK as u64);
            // SAFETY: churn reads dev_in[i] and writes dev_out[i], CHUNK elements each.
            unsafe { s.launch(k, LaunchConfig::for_elements(CHUNK, 256), args)? };
            let e2 = trace.as_ref().map(|_| s.record_event()).transpose()?;
            s.copy_to_host_async(&self.dev_out[i], hout)?;
            if let (Some(t), Some(e0), Some(e1), Some(e2)) = (trace.as_deref_mut(), e0, e1, e2) {
                t.push([e0, e1, e2, s.record_event()?]);
            }
        }
        for s in &self.streams {
            s.synchronize()?;
        }
        Ok(t.elapsed().as_secs_f64())
    }
}

/// Milliseconds during which a stage of kind `a` and one of kind `b` were both
/// in flight, on a 5 us grid, and the busy time of `b`.
fn overlap(trace: &Trace, origin: &Event<Cuda>, a: usize, b: usize) -> Result<(f64, f64)> {
    let span = |e: &[Event<Cuda>; 4], stage: usize| -> Result<(f64, f64)> {
        Ok((elapsed(origin, &e[stage])? * 1e3, elapsed(origin, &e[stage + 1])? * 1e3))
    };
    let (mut sa, mut sb) = (Vec::new(), Vec::new());
    for e in trace {
        sa.push(span(e, a)?);
        sb.push(span(e, b)?);
    }
    let end = sa.iter().chain(&sb).map(|s| s.1).fold(0.0, f64::max);
    let (step, mut both, mut busy) = (0.005, 0.0, 0.0);
    let mut t = 0.0;
    while t < end {
        let in_a = sa.iter().any(|&(x, y)| x <= t && t < y);
        let in_b = sb.iter().any(|&(x, y)| x <= t && t < y);
        busy += if in_b { step } else { 0.0 };
        both += if in_a && in_b { step } else { 0.0 };
        t += step;
    }
    Ok((both, busy))
}

/// Run the pipeline case and add its rows.
pub(super) fn run(dev: &Device<Cuda>, rows: &mut Vec<Row>) -> Result<()> {
    const RUNS: usize = 10;
    let k = dev.kernel(&Program::new("churn").cuda(CHURN))?;
    let mut input: Vec<HostBuffer<Cuda, u32>> = (0..CHUNKS).map(|_| dev.alloc_host(CHUNK)).collect::<Result<_>>()?;
    let mut output: Vec<HostBuffer<Cuda, u32>> = (0..CHUNKS).map(|_| dev.alloc_host(CHUNK)).collect::<Result<_>>()?;
    let mut seed = 0x9E37_79B9u32;
    for h in &mut input {
        for v in h.as_mut_slice()? {
            seed = churn_reference(seed, 1);
            *v = seed;
        }
    }
    // Calibrate: make one chunk's kernel take about as long as its copy in.
    let mut one = Pipeline::new(dev, 1)?;
    let s = &one.streams[0];
    let probe = 64u32;
    let a = s.record_event()?;
    s.copy_to_device_async(&input[0], &mut one.dev_in[0])?;
    let b = s.record_event()?;
    let args = Args::new().arg(&one.dev_in[0]).arg(&mut one.dev_out[0]).arg(probe).arg(CHUNK as u64);
    // SAFETY: as in `Pipeline::pass`.
    unsafe { s.launch(&k, LaunchConfig::for_elements(CHUNK, 256), args)? };
    let c = s.record_event()?;
    c.synchronize()?;
    let (copy_s, kernel_s) = (elapsed(&a, &b)?, elapsed(&b, &c)?);
    let iters = ((f64::from(probe) * copy_s / kernel_s).round() as u32).clamp(1, 1 << 20);

    let mut four = Pipeline::new(dev, 4)?;
    let (mut t1, mut t4) = (Vec::new(), Vec::new());
    for run in 0..RUNS + 1 {
        let x1 = one.pass(&k, iters, &input, &mut output, None)?;
        let x4 = four.pass(&k, iters, &input, &mut output, None)?;
        if run > 0 {
            t1.push(x1 * 1e3);
            t4.push(x4 * 1e3);
        }
    }
    // Check every chunk's output at a spread of indices against the CPU.
    for (c, (hin, hout)) in input.iter().zip(&output).enumerate() {
        let (xi, yo) = (hin.as_slice()?, hout.as_slice()?);
        for j in (0..CHUNK).step_by(997) {
            if yo[j] != churn_reference(xi[j], iters) {
                return Err(kiln_core::Error::invalid("pipeline check", format!("chunk {c} element {j} is wrong")));
            }
        }
    }
    // One traced pass on 4 streams: which stages overlapped.
    let mut trace = Trace::new();
    let origin = four.streams[0].record_event()?;
    for s in &four.streams[1..] {
        s.wait(&origin)?;
    }
    four.pass(&k, iters, &input, &mut output, Some(&mut trace))?;
    let (h2d_k, kbusy) = overlap(&trace, &origin, 0, 1)?;
    let (d2h_k, _) = overlap(&trace, &origin, 2, 1)?;
    let (h2d_d2h, _) = overlap(&trace, &origin, 0, 2)?;

    let note = format!(
        "{CHUNKS} chunks x {} MiB u32: copy in from page-locked memory, xorshift x{iters} (one chunk: copy {:.3} ms, \
         kernel calibrated to match), copy out; host wall time of a pass",
        (CHUNK * 4) >> 20,
        copy_s * 1e3
    );
    let base = time_row("pipeline, 1 stream", "ms", t1.clone(), "baseline", note.clone());
    let mut row = time_row("pipeline, 4 streams", "ms", t4.clone(), "reported", note);
    row.baseline = Some(base.case.clone());
    row.ratio = Some(row.median / base.median);
    let speedups: Vec<f64> = t1.iter().zip(&t4).map(|(a, b)| a / b).collect();
    let mut speed = rate_row(
        "pipeline speedup, 4 streams vs 1",
        "x",
        speedups,
        ">= 1.8x, copies both ways overlapping compute",
        format!(
            "traced pass: of {kbusy:.2} ms of kernel time, {h2d_k:.2} ms overlapped a copy in and {d2h_k:.2} ms a copy out; \
             copies in and out overlapped each other for {h2d_d2h:.2} ms"
        ),
    );
    speed.met = Some(speed.median >= 1.8 && h2d_k > 0.0 && d2h_k > 0.0);
    rows.push(base);
    rows.push(row);
    rows.push(speed);
    Ok(())
}
