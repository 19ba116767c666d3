//! Where the time of a wgpu histogram goes (256 bins over [0, 1024) of
//! i32, as the bench's `histogram_i32`): the library's call (two fills and
//! one launch) beside its parts, each timed as the bench times (`time_runs`)
//! alone between events and back to back in windows of 2 ms, at 1 Mi and
//! 64 Mi values.
//!
//! - `library`: `histogram_into`;
//! - `fills`: the two fills it starts with (the counts and the dropped count);
//! - `kernel`: the library's WGSL kernel alone, built here from its source,
//!   at the library's grid and at four times as many workgroups;
//! - `one-element map`: the cost of any launch;
//! - `copy`: the memory's rate for the bytes the kernel reads, twice over.
//!
//! ```text
//! cargo run --release -p kiln-benches --features cubecl --example wgpu_histogram_lab
//! ```

use kiln_benches::{Sampling, time_runs};
use kiln_core::{Args, Buffer, Device, LaunchConfig, Program, Result, Stream};
use kiln_kernels::histogram::histogram_into;
use kiln_kernels::map::{MapOp, map};
use kiln_wgpu::Wgpu;

const ABI: &str = include_str!("../../kernels/src/abi.wgsl");
const MUL_WIDE: &str = include_str!("../../kernels/src/mul_wide16.wgsl");
const KERNEL: &str = include_str!("../../kernels/src/histogram/kernel.wgsl");
/// The i32 bindings and functions the library puts before the kernel.
const HEADER: &str = "
@group(0) @binding(0) var<storage, read> src: array<i32>;
@group(0) @binding(1) var<storage, read_write> counts: array<atomic<u32>>;
@group(0) @binding(2) var<storage, read_write> dropped: array<atomic<u32>>;
";
const I32_FNS: &str = "
alias VALUE = i32;
fn load(i: u32) -> i32 { return src[i]; }
fn bin_of(v: i32) -> u32 { return int_bin(bitcast<u32>(v) - params.a); }
";
/// One operation between two events a sample, as the bench times a call
/// alone.
const ALONE: Sampling = Sampling { warmup: 2, warmup_ms: 200.0, runs: 15, sample_ms: 0.0 };
/// Enough operations back to back between two events to cover 2 ms, as
/// the bench samples.
const WINDOW: Sampling = Sampling { sample_ms: 2.0, ..ALONE };

/// `op`'s median us alone and in a window, each by [`time_runs`] (its
/// warm-up waits for the SM clock).
fn show(s: &Stream<Wgpu>, what: &str, mut op: impl FnMut() -> Result<()>) -> Result<()> {
    let alone = time_runs(s, &ALONE, |_| op())?.median_ms;
    let window = time_runs(s, &WINDOW, |_| op())?.median_ms;
    println!("{what:<52} alone {:8.2} us   in a window {:8.2} us", alone * 1e3, window * 1e3);
    Ok(())
}

fn main() -> Result<()> {
    let dev = Device::<Wgpu>::open(0)?;
    let s = dev.stream();
    println!("{}", dev.name());
    let prog = Program::new("lab")
        .wgsl(format!("{HEADER}{ABI}{I32_FNS}{MUL_WIDE}{KERNEL}"))
        .define("KERNEL", "lab")
        .define("INPUT_TYPE", 1)
        .define("WARP_MATCH", 0)
        .define("BIN_SLOTS", "256u");
    let kernel = dev.kernel(&prog)?;
    let one = s.upload(&[2.0f32])?;
    let mut one_out = s.alloc::<f32>(1)?;
    for mi in [1usize, 64] {
        let n = mi << 20;
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let host: Vec<i32> = (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 40) as i32 % 1024
            })
            .collect();
        let mut want = vec![0u32; 256];
        for &v in &host {
            want[v as usize / 4] += 1;
        }
        let src: Buffer<Wgpu, i32> = s.upload(&host)?;
        let mut counts = s.alloc::<u32>(256)?;
        let mut dropped = s.alloc::<u64>(1)?;
        let mut copy_out = s.alloc::<i32>(n)?;
        println!("{mi} Mi i32:");
        show(&s, "library", || histogram_into(&s, &src, 256, 0, 1024, &mut counts, &mut dropped))?;
        let library = counts.to_vec()?;
        show(&s, "fills", || {
            s.fill(&mut counts, 0u32)?;
            s.fill(&mut dropped, 0u64)
        })?;
        let groups = n.div_ceil(2048 * 4).clamp(1, 1024) as u32;
        for (what, g) in [("kernel, the library's grid", groups), ("kernel, four times the workgroups", 4 * groups)] {
            s.fill(&mut counts, 0u32)?;
            s.fill(&mut dropped, 0u64)?;
            let launch = |counts: &mut Buffer<Wgpu, u32>, dropped: &mut Buffer<Wgpu, u64>| {
                // a, b, shift, scale, bins, n: 256 bins of 4 over [0, 1024).
                let args = Args::new()
                    .arg(&src)
                    .arg(counts)
                    .arg(dropped)
                    .scalar(0u32)
                    .scalar(1023u32)
                    .scalar(2u32)
                    .scalar(0.25f32)
                    .scalar(256u32)
                    .scalar(n as u32);
                // SAFETY: the kernel reads src[0..n) and adds to
                // counts[0..256) and the low word of dropped.
                unsafe { s.launch(&kernel, LaunchConfig::new(g, 256), args) }
            };
            launch(&mut counts, &mut dropped)?;
            let once = counts.to_vec()?;
            let check = if once == want && library == want { "counts match" } else { "counts DIFFER" };
            show(&s, &format!("{what} ({g}), {check}"), || launch(&mut counts, &mut dropped))?;
        }
        show(&s, "one-element map", || map(&s, MapOp::Square, &one, &mut one_out))?;
        show(&s, "copy of the values", || s.copy(&src, &mut copy_out))?;
    }
    Ok(())
}
