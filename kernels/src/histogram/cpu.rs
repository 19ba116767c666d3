//! CPU implementation of the histogram, the reference: the same bin formula
//! as the kernels, integer bins in exact arithmetic.

use kiln_core::{Error, HostArgs, Result};
use multiversion::multiversion;
use rayon::prelude::*;
use strength_reduce::StrengthReducedU64;

use super::{BinParams, HistogramInput, MAX_BINS};
use crate::prefetch;

/// Elements per rayon task.
const CHUNK: usize = 1 << 16;
/// Copies of the counters each task keeps, element `i` of a group counted
/// in copy `i % WAYS`: a run of equal bins then updates eight counters in
/// turn, so each increment need not wait for the one before it.
const WAYS: usize = 8;
/// Counters per copy: a power of two past the most bins and the dropped
/// counter, so that an index masked to it needs no bounds check.
const SLOTS: usize = 2 * MAX_BINS;
/// Counters between copies: one line more than `SLOTS`, so that a bin's
/// counters in the eight copies are not 4 KiB apart (loads and stores 4 KiB
/// apart look alike to the core's store forwarding, and wait on each other).
const STRIDE: usize = SLOTS + 16;
/// Elements counted between prefetches: 64 bytes of 4-byte input.
const GROUP: usize = 16;
/// How many groups ahead the next group's input is asked for: 2 KiB.
const AHEAD: usize = 32;

/// The counter of a float `v`: its bin, or `dropped` when it is out of
/// range or NaN.
#[inline(always)]
fn float_bin<T: HistogramInput>(v: T, p: &BinParams, dropped: u32) -> u32 {
    let v = v.value_to_f64() as f32;
    let (lo, hi) = (f32::from_bits(p.a), f32::from_bits(p.b));
    // `as` truncates toward zero and saturates, as the kernels' conversions do.
    let q = (((v - lo) * p.scale) as u32).min(p.bins - 1);
    if v >= lo && v < hi {
        q
    } else {
        dropped
    }
}

/// The distance of an integer `v` from lo (whose bits are `a`) modulo
/// 2^32, and whether it is below hi (`b = hi - lo - 1`).
#[inline(always)]
fn distance<T: HistogramInput>(v: T, a: u32, b: u32) -> (u32, bool) {
    let d = v.value_bits().wrapping_sub(a);
    (d, d <= b)
}

/// Arguments as the CUDA kernel takes them: (x, counts, dropped, a, b,
/// shift, scale, bins, n); adds to `counts` and `dropped[0]`.
pub(crate) fn histogram<T: HistogramInput>(args: &mut HostArgs<'_>) -> Result<()> {
    let p = BinParams {
        a: args.scalar::<u32>(3)?,
        b: args.scalar::<u32>(4)?,
        shift: args.scalar::<u32>(5)?,
        scale: args.scalar::<f32>(6)?,
        bins: args.scalar::<u32>(7)?,
    };
    if p.bins == 0 || p.bins as usize > MAX_BINS {
        return Err(Error::invalid("histogram on the CPU", format!("{} bins: 1 to {MAX_BINS} are supported", p.bins)));
    }
    let x = args.input::<T>(0)?;
    // One counter function for the whole pass, taking the parameters by
    // value: floats in f32 as the kernels; integers by the bin width's
    // shift where it is a power of two, else `d * bins / (b + 1)` exactly,
    // the division by a run-time constant as a multiply and shifts (the
    // `strength_reduce` crate's, exact for every divisor), where a 64-bit
    // division per element would bound the pass. Dropped values go to the
    // counter after the last bin.
    let (a, b, shift, bins) = (p.a, p.b, p.shift, p.bins);
    let (found, missed) = if T::FLOAT {
        count(x, bins, move |v| float_bin(v, &p, bins))
    } else if shift < 32 {
        count(x, bins, move |v| match distance(v, a, b) {
            (d, true) => d >> shift,
            _ => bins,
        })
    } else {
        let span = StrengthReducedU64::new(u64::from(b) + 1);
        count(x, bins, move |v| match distance(v, a, b) {
            (d, true) => (u64::from(d) * u64::from(bins) / span) as u32,
            _ => bins,
        })
    };
    for (c, f) in args.output::<u32>(1)?.iter_mut().zip(&found) {
        *c = c.wrapping_add(*f);
    }
    let dropped = args.output::<u64>(2)?;
    let d = dropped.first_mut().ok_or_else(|| Error::invalid("histogram on the CPU", "the dropped count is empty"))?;
    *d += missed;
    Ok(())
}

/// One task's counters: `WAYS` copies, and the values it dropped.
type Counters = (Box<[[u32; STRIDE]; WAYS]>, u64);

fn counters() -> Counters {
    (Box::new([[0; STRIDE]; WAYS]), 0)
}

/// The counts of `x` in `bins` bins by `counter` (`bins` for a dropped
/// value), and how many it dropped. Counts wrap modulo 2^32, as the
/// kernels' do; the dropped count is exact. Integer sums in any order, so
/// the result is the same however the tasks split.
fn count<T: HistogramInput>(x: &[T], bins: u32, counter: impl Fn(T) -> u32 + Send + Sync + Copy) -> (Vec<u32>, u64) {
    let bins = bins as usize;
    let (ways, missed) = x
        .par_chunks(CHUNK)
        .fold(counters, move |(mut ways, missed), chunk| {
            count_chunk(&mut ways, chunk, counter);
            // Take the chunk's dropped values out of the 32-bit counters.
            let dropped: u64 = ways.iter_mut().map(|w| std::mem::take(&mut w[bins]) as u64).sum();
            (ways, missed + dropped)
        })
        .reduce(counters, |(mut a, da), (b, db)| {
            for (a, b) in a.iter_mut().zip(b.iter()) {
                a[..bins].iter_mut().zip(&b[..bins]).for_each(|(a, b)| *a = a.wrapping_add(*b));
            }
            (a, da + db)
        });
    let mut found = vec![0u32; bins];
    for way in ways.iter() {
        found.iter_mut().zip(&way[..bins]).for_each(|(f, w)| *f = f.wrapping_add(*w));
    }
    (found, missed)
}

/// Count `chunk` into `ways`, built also for AVX2 and chosen at run time.
#[multiversion(targets("x86_64+avx2"))]
fn count_chunk<T: HistogramInput>(ways: &mut [[u32; STRIDE]; WAYS], chunk: &[T], counter: impl Fn(T) -> u32) {
    let groups = chunk.chunks_exact(GROUP);
    let rest = groups.remainder();
    for (g, group) in groups.enumerate() {
        if let Some(ahead) = chunk.get((g + AHEAD) * GROUP) {
            prefetch::line(ahead);
        }
        // As an array, so that the loop unrolls with each copy fixed.
        let Ok(group) = <&[T; GROUP]>::try_from(group) else { continue };
        for (i, &v) in group.iter().enumerate() {
            let c = &mut ways[i % WAYS][counter(v) as usize % SLOTS];
            *c = c.wrapping_add(1);
        }
    }
    for &v in rest {
        let c = &mut ways[0][counter(v) as usize % SLOTS];
        *c = c.wrapping_add(1);
    }
}
