//! Histograms: `bins` equal-width bins over `[lo, hi)` of `u8`, `i32` or
//! `f32` values, with `u32` counts (NumPy's `histogram` with a range, CUDA's
//! histogram-with-atomics sample).
//!
//! # Semantics, the same on every backend
//! - `bins` is 1 to 4096, and `counts` holds exactly `bins` elements; the
//!   function zeroes it first.
//! - A value `v` with `lo <= v < hi` goes to bin
//!   `floor((v - lo) * bins / (hi - lo))`. Integers compute it exactly (in
//!   64-bit arithmetic). Floats
//!   compute `min(floor((v - lo) * s), bins - 1)` in `f32`, with `s = bins /
//!   (hi - lo)` rounded to `f32` once: every backend gets the same bins, and
//!   a value just below `hi` stays in the last bin.
//! - Values outside `[lo, hi)`, and NaN, are dropped: not counted in any
//!   bin, and their number is returned (or left on the device).
//! - Counts wrap past 2^32 (only possible with more than 2^32 elements).
//! - Bounds: `u8` takes `u32` bounds (so `hi` can be 256), `i32` takes `i64`
//!   bounds in `[i32::MIN, 2^31]`, `f32` finite `f32` bounds; `lo < hi`.
//!   Anything else is `Err(InvalidArgument)`.
//!
//! # How
//! CUDA: privatised bins in shared memory, one block per few SMs' worth of
//! data, 16-byte loads; each warp aggregates equal bins before its shared
//! atomics (one atomic when all 32 lanes agree, as on skewed data;
//! `__match_any_sync` groups otherwise), and each block adds its nonzero
//! bins to the global counts. WGSL: workgroup-memory bins with `u32`
//! atomics, eight loads in flight per invocation (`u8` read as packed
//! words). The CPU counts chunks in parallel.
//!
//! # Examples
//! ```
//! use kiln_core::Device;
//! use kiln_cpu::Cpu;
//! use kiln_kernels::histogram::histogram;
//! # fn main() -> kiln_core::Result<()> {
//! let dev = Device::<Cpu>::open(0)?;
//! let s = dev.stream();
//! let x = s.upload(&[0.5f32, 1.5, 1.25, 3.0, f32::NAN, 2.0])?;
//! let mut counts = s.alloc::<u32>(3)?;
//! let dropped = histogram(&s, &x, 3, 0.0, 3.0, &mut counts)?;   // bins [0,1) [1,2) [2,3)
//! assert_eq!(counts.to_vec()?, vec![1, 2, 1]);
//! assert_eq!(dropped, 2);                                         // 3.0 and NaN
//! # Ok(()) }
//! ```

mod cpu;
#[cfg(target_arch = "x86_64")]
mod cpu_x86;

use std::sync::Arc;

use kiln_core::{
    Args, Backend, DType, Device, Element, Error, Language, LaunchConfig, Program, Result, Stream, View, ViewMut,
};

use crate::launch::{check_dtype, cuda_source, host_fn, index_width, program, wgsl_preamble};
use crate::reduce::wgsl_is_nan;

/// The most bins a histogram may have (16 KiB of `u32` counts per block).
pub const MAX_BINS: usize = 4096;

/// An element type a histogram counts: `u8`, `i32` or `f32`.
pub trait HistogramInput: Element {
    /// The type of the range bounds: `u32` for `u8` (so `hi` can be 256),
    /// `i64` for `i32` (so `hi` can be 2^31), `f32` for `f32`.
    type Bound: Copy + PartialOrd + std::fmt::Debug + Send + Sync + 'static;
    /// Whether bins are computed in `f32` (else exactly, on integers).
    const FLOAT: bool;
    /// The smallest value of the type (ignored for floats).
    const LOWEST: f64;
    /// A bound as an f64 (exact).
    fn bound_to_f64(b: Self::Bound) -> f64;
    /// The value as an f64 (exact).
    fn value_to_f64(self) -> f64;
    /// An integer value's two's complement bits, modulo 2^32 (the kernels'
    /// distance from `lo` is measured in them); unused for floats.
    fn value_bits(self) -> u32 {
        self.value_to_f64() as i64 as u32
    }
}

/// `HistogramInput` for the integer type `$t`, its bounds of type `$bound`
/// (wide enough for `hi` one past its largest value).
macro_rules! integer_input {
    ($t:ty, $bound:ty) => {
        impl HistogramInput for $t {
            type Bound = $bound;
            const FLOAT: bool = false;
            const LOWEST: f64 = <$t>::MIN as f64;
            fn bound_to_f64(b: $bound) -> f64 {
                b as f64
            }
            fn value_to_f64(self) -> f64 {
                self as f64
            }
            fn value_bits(self) -> u32 {
                self as u32
            }
        }
    };
}
integer_input!(u8, u32);
integer_input!(i32, i64);

impl HistogramInput for f32 {
    type Bound = f32;
    const FLOAT: bool = true;
    const LOWEST: f64 = f64::NEG_INFINITY;
    fn bound_to_f64(b: f32) -> f64 {
        b as f64
    }
    fn value_to_f64(self) -> f64 {
        self as f64
    }
}

/// The kernels' bin parameters (see kernel.cu): for integers the distance
/// origin `a` (lo's bits), `b = hi - lo - 1`, the power-of-two `shift` of
/// the bin width (32 when it is none); for floats lo's and hi's bits in `a`
/// and `b`; `scale = bins / (hi - lo)` in f32 for both.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BinParams {
    pub(crate) a: u32,
    pub(crate) b: u32,
    pub(crate) shift: u32,
    pub(crate) scale: f32,
    pub(crate) bins: u32,
}

fn bin_params<T: HistogramInput>(bins: usize, lo: T::Bound, hi: T::Bound) -> Result<BinParams> {
    let what = format!("histogram of {} over [{lo:?}, {hi:?}) in {bins} bins", T::DTYPE);
    if !(1..=MAX_BINS).contains(&bins) {
        return Err(Error::invalid(what, format!("bins must be 1 to {MAX_BINS}")));
    }
    let (l, h) = (T::bound_to_f64(lo), T::bound_to_f64(hi));
    let bins_f = bins as f64;
    if T::FLOAT {
        if !(l.is_finite() && h.is_finite() && l < h) {
            return Err(Error::invalid(what, "the range must be finite with lo < hi"));
        }
        let scale = (bins_f / (h - l)) as f32;
        if !scale.is_normal() {
            return Err(Error::invalid(what, format!("bins / (hi - lo) = {scale} is not a normal f32")));
        }
        let (a, b) = ((l as f32).to_bits(), (h as f32).to_bits());
        return Ok(BinParams { a, b, shift: 0, scale, bins: bins as u32 });
    }
    // The kernels measure v - lo modulo 2^32, which needs every value of T
    // within 2^32 below hi.
    if !(l < h && l >= T::LOWEST && h <= T::LOWEST + 4_294_967_296.0) {
        return Err(Error::invalid(
            what,
            format!("need lo < hi, lo >= {} and hi <= {}", T::LOWEST, T::LOWEST + 4_294_967_296.0),
        ));
    }
    let range = (h - l) as u64;
    let width = range / bins as u64;
    let shift = if range.is_multiple_of(bins as u64) && width.is_power_of_two() { width.trailing_zeros() } else { 32 };
    Ok(BinParams {
        a: l as i64 as u32,
        b: (range - 1) as u32,
        shift,
        scale: (bins_f / range as f64) as f32,
        bins: bins as u32,
    })
}

/// Whether the kernels group a warp's equal bins with `__match_any_sync`
/// (1) or let each lane add its own shared-memory atomic (0); the
/// all-lanes-agree case is one atomic either way. Measured on the H100
/// (256 bins, 64 Mi i32): uniform data 0.537 ms with 1, 0.105 ms with 0;
/// every value in one bin 0.124 ms with 1, 0.122 ms with 0.
const WARP_MATCH: u8 = 0;
/// Blocks per SM of the CUDA kernel: 8 (2048 threads, two 16-byte loads in
/// flight each: 64 KiB per SM) while merging each block's bins is cheap,
/// 4 past 1024 bins, where every block adds up to 4096 atomics to the totals.
fn blocks_per_sm(bins: usize) -> usize {
    if bins <= 1024 { 8 } else { 4 }
}
/// Most WGSL workgroups (each merges its bins into the global counts):
/// 1024, about 8 per unit of a 128-unit GPU (16 KiB of workgroup bins
/// each), so that enough loads are in flight; 256 past 1024 bins, where
/// each workgroup adds up to 4096 atomics to the totals.
fn wgsl_groups(bins: usize) -> usize {
    if bins <= 1024 { 1024 } else { 256 }
}

/// Blocks and dynamic shared memory (bytes) of a histogram of `n`
/// `size`-byte elements into `bins` bins, in the shape each source is
/// written for: CUDA's keeps the block's bins in dynamic shared memory and
/// streams vectors of the device's width from a grid sized by its
/// multiprocessors; WGSL's sizes its workgroup arrays statically (WGSL has
/// no dynamic workgroup memory); a host fn runs the whole launch.
fn grid<B: Backend>(device: &Device<B>, n: usize, bins: usize, size: usize) -> (usize, u32) {
    match B::LANGUAGE {
        language if language.runs_whole_launch() => (1, 0),
        Language::Cuda => {
            // 256 threads x 2 vectors per step.
            let vector = device.info().features.vector_bytes as usize;
            let per_step = 256 * 2 * (vector / size).max(1);
            let most = (device.info().compute_units as usize * blocks_per_sm(bins)).max(1);
            (n.div_ceil(per_step).clamp(1, most), bins as u32 * 4)
        }
        _ => (n.div_ceil(2048 * 4).clamp(1, wgsl_groups(bins)), 0),
    }
}

/// Bins of WGSL's workgroup array for `bins` bins: the next power of two,
/// at least 256. Measured on an H200 (256 bins, 64 Mi i32): 1106 GB/s with
/// an array of 4096, 2502 with 256.
fn wgsl_bin_slots(bins: usize) -> usize {
    bins.next_power_of_two().max(256)
}

/// The histogram program whose WGSL holds `slots` bins per workgroup
/// (CUDA's sizes its shared bins at launch: one program for all).
fn histogram_program<T: HistogramInput>(slots: usize) -> Arc<Program> {
    let name = match slots {
        MAX_BINS => format!("kiln_histogram_{}", T::DTYPE),
        _ => format!("kiln_histogram_{slots}_{}", T::DTYPE),
    };
    program(&name, || {
        let kind = match T::DTYPE {
            DType::U8 => 0,
            DType::I32 => 1,
            _ => 2,
        };
        Program::new(&name)
            .cuda(cuda_source(T::DTYPE, include_str!("kernel.cu")))
            .wgsl(format!(
                "{}{}{}",
                wgsl_header(T::DTYPE),
                include_str!("../mul_wide16.wgsl"),
                include_str!("kernel.wgsl")
            ))
            .host(host_fn!(cpu::histogram::<T>))
            .define("KERNEL", &name)
            .define("INPUT_TYPE", kind)
            .define("WARP_MATCH", WARP_MATCH)
            .define("BIN_SLOTS", format!("{slots}u"))
    })
}

/// The WGSL bindings, `load(i)` and `bin_of(v)` for `dtype`.
fn wgsl_header(dtype: DType) -> String {
    let (src, load, bin) = match dtype {
        DType::U8 => (
            "u32",
            "fn load(i: u32) -> u32 { return (src[i >> 2u] >> ((i & 3u) * 8u)) & 0xffu; }\n",
            "fn bin_of(v: u32) -> u32 { return int_bin(v - params.a); }\n",
        ),
        DType::I32 => (
            "i32",
            "fn load(i: u32) -> i32 { return src[i]; }\n",
            "fn bin_of(v: i32) -> u32 { return int_bin(bitcast<u32>(v) - params.a); }\n",
        ),
        _ => (
            "f32",
            "fn load(i: u32) -> f32 { return src[i]; }\n",
            "fn bin_of(v: f32) -> u32 {\n    let lo = bitcast<f32>(params.a);\n    let hi = bitcast<f32>(params.b);\n    \
             if (is_nan(v) || v < lo || v >= hi) { return NONE; }\n    \
             return min(u32((v - lo) * params.scale), params.bins - 1u);\n}\n",
        ),
    };
    // `is_nan` takes a `T`: the f32 of the float path. `VALUE` is what
    // `load` returns (a u8 as a u32, like its words).
    let buffers = [("src", src, false), ("counts", "atomic<u32>", true), ("dropped", "atomic<u32>", true)];
    format!("{}alias VALUE = {src};\n{}{load}{bin}", wgsl_preamble(DType::F32, &buffers), wgsl_is_nan(DType::F32))
}

/// Count the elements of `x` into `counts` (`bins` elements, zeroed first)
/// and write the number of dropped elements (outside `[lo, hi)`, or NaN) to
/// `dropped` (one element), on `stream`; returns at once. See the [module
/// documentation](self) for the bin formula.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::histogram::histogram_into;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[0u8, 255, 128, 127, 64])?;
/// let (mut counts, mut dropped) = (s.alloc::<u32>(2)?, s.alloc::<u64>(1)?);
/// histogram_into(&s, &x, 2, 0, 256, &mut counts, &mut dropped)?;
/// assert_eq!((counts.to_vec()?, dropped.to_vec()?), (vec![3, 2], vec![0]));
/// # Ok(()) }
/// ```
pub fn histogram_into<B: Backend, T: HistogramInput>(
    stream: &Stream<B>,
    x: &impl View<B, T>,
    bins: usize,
    lo: T::Bound,
    hi: T::Bound,
    counts: &mut impl ViewMut<B, u32>,
    dropped: &mut impl ViewMut<B, u64>,
) -> Result<()> {
    let p = bin_params::<T>(bins, lo, hi)?;
    let what = format!("histogram of {}", T::DTYPE);
    let x = x.view();
    if counts.view().len() != bins {
        return Err(Error::LengthMismatch {
            what: format!("{what}: counts (one per bin)"),
            expected: bins,
            actual: counts.view().len(),
        });
    }
    if dropped.view().len() != 1 {
        return Err(Error::LengthMismatch {
            what: format!("{what}: dropped count (one element)"),
            expected: 1,
            actual: dropped.view().len(),
        });
    }
    check_dtype(stream, T::DTYPE, &what)?;
    stream.fill(counts, 0u32)?;
    stream.fill(dropped, 0u64)?;
    let n = x.len();
    if n == 0 {
        return Ok(());
    }
    let slots = if B::LANGUAGE == Language::Wgsl { wgsl_bin_slots(bins) } else { MAX_BINS };
    let prog = histogram_program::<T>(slots);
    let kernel = stream.device().kernel(&prog)?;
    let (blocks, shared) = grid::<B>(stream.device(), n, bins, size_of::<T>());
    let args = Args::new()
        .arg(x)
        .arg(counts.view_mut())
        .arg(dropped.view_mut())
        .arg(p.a)
        .arg(p.b)
        .arg(p.shift)
        .arg(p.scale)
        .arg(p.bins);
    let args = args.length(index_width(stream), n, prog.name())?;
    let config = LaunchConfig::new(blocks as u32, 256).with_shared_mem(shared);
    // SAFETY: the kernel reads x[0..n), adds to counts[0..bins) (bins being
    // counts' length, and every bin below it) and to dropped[0]; its shared
    // memory is `bins` words, as launched.
    unsafe { stream.launch(&kernel, config, args) }
}

/// Count the elements of `x` into `counts` (`bins` elements, zeroed first)
/// on `stream`, and return how many were dropped (outside `[lo, hi)`, or
/// NaN); blocks until that number is on the host.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::histogram::histogram;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[-7i32, 0, 3, 9, 10, 42])?;
/// let mut counts = s.upload(&[99u32; 5])?;          // any contents: zeroed first
/// assert_eq!(histogram(&s, &x, 5, 0, 10, &mut counts)?, 3);   // -7, 10 and 42
/// assert_eq!(counts.to_vec()?, vec![1, 1, 0, 0, 1]);
/// assert!(histogram(&s, &x, 5, 10, 0, &mut counts).is_err());  // lo >= hi
/// # Ok(()) }
/// ```
pub fn histogram<B: Backend, T: HistogramInput>(
    stream: &Stream<B>,
    x: &impl View<B, T>,
    bins: usize,
    lo: T::Bound,
    hi: T::Bound,
    counts: &mut impl ViewMut<B, u32>,
) -> Result<u64> {
    let mut dropped = stream.alloc::<u64>(1)?;
    histogram_into(stream, x, bins, lo, hi, counts, &mut dropped)?;
    let mut d = [0u64];
    stream.copy_to_host(&dropped, &mut d)?;
    Ok(d[0])
}
