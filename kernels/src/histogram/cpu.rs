//! CPU implementation of the histogram, the reference: the same bin formula
//! as the kernels, integer bins in exact arithmetic.

use kiln_core::{Error, Result};
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
/// Counters per copy (`SLOTS`): a power of two past the bins and the
/// dropped counter, so that an index masked to it needs no bounds check;
/// this many for up to `FEW - 1` bins, else twice [`MAX_BINS`]. Each task
/// allocates its own counters, so they are no larger than the bins need
/// (eight copies of 8208 counters are 262 KiB, which the allocator hands
/// back to the system and takes again, page by page, task after task).
/// Below `FEW` bins the counters are 16-bit, emptied into the task's
/// 32-bit counts before they can overflow: half the cache, and a little
/// faster (a probe counting from memory on 2 cores: 0.38 ns per element
/// against 0.40 with 32-bit counters; in cache on the 16-core GPU host's
/// 16 threads, 0.90-1.08 against 1.03-1.09).
const FEW: usize = 512;
/// Bytes between copies past their `SLOTS` counters (`STRIDE` is `SLOTS`
/// and this many bytes): a bin's counters in the eight copies are then
/// not 4 KiB apart (loads and stores 4 KiB apart look alike to the core's
/// store forwarding, and wait on each other).
const PAST: usize = 64;
/// Elements whose counter indices are taken together before they are
/// counted (eight at a time in vector registers where the counter
/// function has a vector form): a host-side batch, unrelated to the GPU
/// block size (`launch::BLOCK`).
const BATCH: usize = 256;
/// How many batches ahead the input is asked for.
const AHEAD: usize = 2;

/// The counter of a float `v`: its bin, or `dropped` when it is out of
/// range or NaN.
#[inline(always)]
fn float_bin<T: HistogramInput>(v: T, p: &BinParams, dropped: u32) -> u32 {
    let v = v.value_to_f64() as f32;
    let (lo, hi) = (f32::from_bits(p.a), f32::from_bits(p.b));
    // `as` truncates toward zero and saturates, as the kernels' conversions do.
    let q = (((v - lo) * p.scale) as u32).min(p.bins - 1);
    if v >= lo && v < hi { q } else { dropped }
}

/// The counter of an integer `v` when the bin width is `1 << p.shift`.
#[inline(always)]
fn shifted_bin<T: HistogramInput>(v: T, p: &BinParams) -> u32 {
    match distance(v, p.a, p.b) {
        (d, true) => d >> p.shift,
        _ => p.bins,
    }
}

/// The distance of an integer `v` from lo (whose bits are `a`) modulo
/// 2^32, and whether it is below hi (`b = hi - lo - 1`).
#[inline(always)]
fn distance<T: HistogramInput>(v: T, a: u32, b: u32) -> (u32, bool) {
    let d = v.value_bits().wrapping_sub(a);
    (d, d <= b)
}

/// The arguments of the CUDA kernel; adds to `counts` and `dropped[0]`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn histogram<T: HistogramInput>(
    x: &[T],
    counts: &mut [u32],
    dropped: &mut [u64],
    a: u32,
    b: u32,
    shift: u32,
    scale: f32,
    bins: u32,
    _n: u64,
) -> Result<()> {
    let p = BinParams { a, b, shift, scale, bins };
    if p.bins == 0 || p.bins as usize > MAX_BINS {
        return Err(Error::invalid("histogram on the CPU", format!("{} bins: 1 to {MAX_BINS} are supported", p.bins)));
    }
    // One counter function for the whole pass, taking the parameters by
    // value: floats in f32 as the kernels; integers by the bin width's
    // shift where it is a power of two, else `d * bins / (b + 1)` exactly,
    // the division by a run-time constant as a multiply and shifts (the
    // `strength_reduce` crate's, exact for every divisor), where a 64-bit
    // division per element would bound the pass. Dropped values go to the
    // counter after the last bin.
    let (a, b, shift, bins) = (p.a, p.b, p.shift, p.bins);
    let (found, missed) = if T::FLOAT {
        count(x, bins, Vector::floats(p), move |v| float_bin(v, &p, bins))
    } else if shift < 32 {
        count(x, bins, Vector::shifted(p), move |v| shifted_bin(v, &p))
    } else {
        let span = StrengthReducedU64::new(u64::from(b) + 1);
        count(x, bins, Vector::No, move |v| match distance(v, a, b) {
            (d, true) => (u64::from(d) * u64::from(bins) / span) as u32,
            _ => bins,
        })
    };
    for (c, f) in counts.iter_mut().zip(&found) {
        *c = c.wrapping_add(*f);
    }
    let d = dropped.first_mut().ok_or_else(|| Error::invalid("histogram on the CPU", "the dropped count is empty"))?;
    *d += missed;
    Ok(())
}

/// The vector form of a counter function, where the CPU has one.
#[derive(Clone, Copy)]
enum Vector {
    No,
    /// Integer bins by a power-of-two width; only made where the CPU has AVX2.
    Shifted(BinParams),
    /// Float bins; only made where the CPU has AVX2.
    Floats(BinParams),
}

impl Vector {
    fn shifted(p: BinParams) -> Vector {
        if avx2() { Vector::Shifted(p) } else { Vector::No }
    }

    fn floats(p: BinParams) -> Vector {
        if avx2() { Vector::Floats(p) } else { Vector::No }
    }

    /// The counter index of each of `block`'s values: by the vector form
    /// where there is one for `T`, else by `counter`.
    #[inline(always)]
    fn slots<T: HistogramInput>(self, block: &[T; BATCH], slots: &mut [u32; BATCH], counter: impl Fn(T) -> u32) {
        #[cfg(target_arch = "x86_64")]
        {
            // `block` as an array of `U`, where `T` is `U` (element types
            // are one per dtype).
            fn same<T: HistogramInput, U: kiln_core::Element>(block: &[T; BATCH]) -> Option<&[U; BATCH]> {
                if T::DTYPE != U::DTYPE {
                    return None;
                }
                bytemuck::try_cast_slice::<T, U>(block).ok()?.try_into().ok()
            }
            match self {
                Vector::Shifted(p) => {
                    if let Some(block) = same::<T, i32>(block) {
                        // SAFETY: `Shifted` is only made where the CPU has AVX2.
                        return unsafe { super::cpu_x86::shifted(block, &p, slots) };
                    }
                    if let Some(block) = same::<T, u8>(block) {
                        // SAFETY: as above.
                        return unsafe { super::cpu_x86::shifted(block, &p, slots) };
                    }
                }
                Vector::Floats(p) => {
                    if let Some(block) = same::<T, f32>(block) {
                        // SAFETY: `Floats` is only made where the CPU has AVX2.
                        return unsafe { super::cpu_x86::floats(block, &p, slots) };
                    }
                }
                Vector::No => {}
            }
        }
        for (s, &v) in slots.iter_mut().zip(block) {
            *s = counter(v);
        }
    }
}

fn avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    return is_x86_feature_detected!("avx2");
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// A counter of one copy: 16 bits where the bins are few, else 32.
trait Counter: Copy + Default + Send + 'static {
    /// The largest count it holds.
    const MAX: usize;
    /// Add one, wrapping.
    fn bump(&mut self);
    /// The count, leaving zero.
    fn take(&mut self) -> u32;
}

impl Counter for u16 {
    const MAX: usize = u16::MAX as usize;
    #[inline(always)]
    fn bump(&mut self) {
        *self = self.wrapping_add(1);
    }
    fn take(&mut self) -> u32 {
        u32::from(std::mem::take(self))
    }
}

impl Counter for u32 {
    const MAX: usize = u32::MAX as usize;
    #[inline(always)]
    fn bump(&mut self) {
        *self = self.wrapping_add(1);
    }
    fn take(&mut self) -> u32 {
        std::mem::take(self)
    }
}

/// The most one copy's counter gains from one chunk: its share of the
/// chunk's whole blocks, and every element past them.
const MOST_PER_CHUNK: usize = CHUNK / WAYS + BATCH;

/// One task's counts: `WAYS` copies of counters `C`, emptied into 32-bit
/// `found` (wrapping, as the kernels' counts) and exact `missed` before
/// any can overflow.
struct Tally<C, const STRIDE: usize> {
    ways: Box<[[C; STRIDE]; WAYS]>,
    found: Vec<u32>,
    missed: u64,
    /// Chunks counted into `ways` since they were last emptied.
    chunks: usize,
}

impl<C: Counter, const STRIDE: usize> Tally<C, STRIDE> {
    fn new(bins: usize) -> Self {
        Tally { ways: Box::new([[C::default(); STRIDE]; WAYS]), found: vec![0; bins], missed: 0, chunks: 0 }
    }

    /// Empty the copies into `found` and `missed` (the counter after the
    /// last bin holds the dropped values).
    fn empty(&mut self) {
        let bins = self.found.len();
        for way in self.ways.iter_mut() {
            self.found.iter_mut().zip(&mut way[..bins]).for_each(|(f, c)| *f = f.wrapping_add(c.take()));
            self.missed += u64::from(way[bins].take());
        }
        self.chunks = 0;
    }

    /// Count `chunk`, first emptying the copies if it could overflow them.
    fn count<T: HistogramInput, const SLOTS: usize>(
        mut self,
        chunk: &[T],
        vector: Vector,
        counter: impl Fn(T) -> u32,
    ) -> Self {
        if (self.chunks + 1) * MOST_PER_CHUNK > C::MAX {
            self.empty();
        }
        count_chunk::<T, C, SLOTS, STRIDE>(&mut self.ways, chunk, vector, counter);
        self.chunks += 1;
        self
    }

    /// The counts of both tasks.
    fn merge(mut self, mut other: Self) -> Self {
        self.empty();
        other.empty();
        self.found.iter_mut().zip(&other.found).for_each(|(a, b)| *a = a.wrapping_add(*b));
        self.missed += other.missed;
        self
    }
}

/// The counts of `x` in `bins` bins by `counter` (`bins` for a dropped
/// value), and how many it dropped. Counts wrap modulo 2^32, as the
/// kernels' do; the dropped count is exact. Integer sums in any order, so
/// the result is the same however the tasks split.
fn count<T: HistogramInput>(
    x: &[T],
    bins: u32,
    vector: Vector,
    counter: impl Fn(T) -> u32 + Send + Sync + Copy,
) -> (Vec<u32>, u64) {
    if (bins as usize) < FEW {
        count_in::<T, u16, FEW, { FEW + PAST / 2 }>(x, bins, vector, counter)
    } else {
        count_in::<T, u32, { 2 * MAX_BINS }, { 2 * MAX_BINS + PAST / 4 }>(x, bins, vector, counter)
    }
}

/// [`count`] with `SLOTS` counters `C` per copy, `STRIDE` apart.
fn count_in<T: HistogramInput, C: Counter, const SLOTS: usize, const STRIDE: usize>(
    x: &[T],
    bins: u32,
    vector: Vector,
    counter: impl Fn(T) -> u32 + Send + Sync + Copy,
) -> (Vec<u32>, u64) {
    const {
        assert!(SLOTS.is_power_of_two() && STRIDE * size_of::<C>() == SLOTS * size_of::<C>() + PAST);
        assert!(MOST_PER_CHUNK <= C::MAX);
    };
    let bins = bins as usize;
    let mut tally = x
        .par_chunks(CHUNK)
        .fold(|| Tally::<C, STRIDE>::new(bins), move |tally, chunk| tally.count::<T, SLOTS>(chunk, vector, counter))
        .reduce(|| Tally::new(bins), Tally::merge);
    tally.empty();
    (tally.found, tally.missed)
}

/// Count `chunk` into `ways`, built also for AVX2 and chosen at run time:
/// a block's counter indices first, then its increments.
#[multiversion(targets("x86_64+avx2"))]
fn count_chunk<T: HistogramInput, C: Counter, const SLOTS: usize, const STRIDE: usize>(
    ways: &mut [[C; STRIDE]; WAYS],
    chunk: &[T],
    vector: Vector,
    counter: impl Fn(T) -> u32,
) {
    let blocks = chunk.chunks_exact(BATCH);
    let rest = blocks.remainder();
    let mut slots = [0u32; BATCH];
    for (g, block) in blocks.enumerate() {
        if let Some(ahead) = chunk.get((g + AHEAD) * BATCH..(g + AHEAD + 1) * BATCH) {
            prefetch::lines(ahead);
        }
        let Ok(block) = <&[T; BATCH]>::try_from(block) else { continue };
        vector.slots(block, &mut slots, &counter);
        // Element `i` of a group in copy `i`: the loop unrolls with each copy fixed.
        for group in slots.chunks_exact(WAYS) {
            for (way, &k) in ways.iter_mut().zip(group) {
                way[k as usize % SLOTS].bump();
            }
        }
    }
    for &v in rest {
        ways[0][counter(v) as usize % SLOTS].bump();
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::super::bin_params;
    use super::*;

    /// `Vector::slots` against the counter function one value at a time,
    /// on values drawn around the range's ends and inside it.
    fn agree<T: HistogramInput>(vector: Vector, p: &BinParams, values: &[T], counter: impl Fn(T) -> u32) {
        for block in values.chunks_exact(BATCH) {
            let block = <&[T; BATCH]>::try_from(block).expect("a block");
            let mut slots = [u32::MAX; BATCH];
            vector.slots(block, &mut slots, &counter);
            for (v, got) in block.iter().zip(slots) {
                assert_eq!(got, counter(*v), "{v:?} with {p:?}");
            }
        }
    }

    #[test]
    fn vector_bins_are_the_scalar_bins() {
        if !avx2() {
            return;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        for (bins, lo, hi) in [(256, 0i64, 1024i64), (1, -5, -4), (4096, i32::MIN as i64, 1 << 31), (8, -100, 28)] {
            let p = bin_params::<i32>(bins, lo, hi).expect("parameters");
            assert!(p.shift < 32);
            let edges = [lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, i32::MIN as i64, i32::MAX as i64];
            let values: Vec<i32> = (0..64 * BATCH)
                .map(|i| match i % 3 {
                    0 => edges[rng.random_range(0..edges.len())].clamp(i32::MIN as i64, i32::MAX as i64) as i32,
                    1 => rng.random_range(lo.max(i32::MIN as i64)..hi.min(i32::MAX as i64)) as i32,
                    _ => rng.random(),
                })
                .collect();
            agree(Vector::shifted(p), &p, &values, |v| shifted_bin(v, &p));
        }
        for (bins, lo, hi) in [(256u32, 0u32, 256u32), (16, 32, 96), (1, 7, 8)] {
            let p = bin_params::<u8>(bins as usize, lo, hi).expect("parameters");
            let values: Vec<u8> = (0..16 * BATCH).map(|_| rng.random()).collect();
            agree(Vector::shifted(p), &p, &values, |v| shifted_bin(v, &p));
        }
        for (bins, lo, hi) in [(256, 0.0f32, 1.0f32), (3, -1.5, 7.25), (4096, -1e6, 1e-3), (1, 0.5, 0.5000001)] {
            let p = bin_params::<f32>(bins, lo, hi).expect("parameters");
            let ends = [lo, hi, lo.next_down(), lo.next_up(), hi.next_down(), hi.next_up(), -0.0, 0.0];
            let odd = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX, f32::MIN, 3e38, -3e38];
            let values: Vec<f32> = (0..64 * BATCH)
                .map(|i| match i % 4 {
                    0 => ends[rng.random_range(0..ends.len())],
                    1 => odd[rng.random_range(0..odd.len())],
                    2 => rng.random_range(lo..hi),
                    _ => rng.random_range(2.0 * lo - hi..2.0 * hi - lo),
                })
                .collect();
            agree(Vector::floats(p), &p, &values, |v| float_bin(v, &p, p.bins));
        }
    }

    #[test]
    fn narrow_counters_are_emptied_before_they_overflow() {
        // One task counts every chunk: a copy's 16-bit counter would pass
        // 2^16 after eight chunks of one value.
        let one = rayon::ThreadPoolBuilder::new().num_threads(1).build().expect("a pool");
        let n = 21 * CHUNK + BATCH + 77;
        for bins in [7u32, FEW as u32 - 1, FEW as u32] {
            let counter = move |v: i32| if (v as u32) < bins { v as u32 } else { bins };
            for (value, kept) in [(3, true), (-1, false)] {
                let x = vec![value; n];
                let (found, missed) = one.install(|| count(&x, bins, Vector::No, counter));
                let mut want = vec![0u32; bins as usize];
                if kept {
                    want[value as usize] = n as u32;
                }
                assert_eq!(found, want, "{bins} bins, all {value}");
                assert_eq!(missed, if kept { 0 } else { n as u64 }, "{bins} bins, all {value}: dropped");
            }
        }
    }

    #[test]
    fn counts_are_a_plain_count_with_few_bins_and_many() {
        // Both sizes of counters, at and next to the edge between them,
        // over several tasks' chunks and a remainder.
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        let n = 3 * CHUNK + BATCH + 5;
        let x: Vec<i32> = (0..n).map(|_| rng.random_range(-5000..5000)).collect();
        for bins in [1u32, 255, FEW as u32 - 1, FEW as u32, MAX_BINS as u32] {
            // Value v counts in bin v mod (bins + 1); bin `bins` is dropped.
            let counter = move |v: i32| v.rem_euclid(bins as i32 + 1) as u32;
            let mut want = vec![0u32; bins as usize + 1];
            for &v in &x {
                want[counter(v) as usize] += 1;
            }
            let (found, missed) = count(&x, bins, Vector::No, counter);
            assert_eq!(found, want[..bins as usize], "{bins} bins");
            assert_eq!(missed, u64::from(want[bins as usize]), "{bins} bins: dropped");
        }
    }
}
