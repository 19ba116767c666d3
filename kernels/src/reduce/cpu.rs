//! CPU implementation of the reductions: the reference the GPU kernels are
//! checked against, so float sums are accurate first (f32 accumulated in
//! f64, f64 with Neumaier's compensated summation) and parallel second.
//!
//! Each function honours the kernel's contract for any grid: partial `b` of
//! a launch may be anything whose fold is the whole result, so the CPU puts
//! the whole result in partial 0 and the fold's identity in the others.

use kiln_core::{DType, Error, HostArgs, Result};
use rayon::prelude::*;

use super::ReduceOp;
use crate::Number;
use crate::code::Code;

/// Chunks of at least this many elements go to one rayon task.
const GRAIN: usize = 1 << 14;

/// Whether `v` is NaN (never, for integers).
#[allow(clippy::eq_op)] // NaN is the one value unequal to itself
pub(crate) fn is_nan<T: PartialEq>(v: T) -> bool {
    v != v
}

/// `a` folded with `b` by `op`; min and max propagate NaN (`a`'s first).
pub(crate) fn fold_pair<T: Number>(op: ReduceOp, a: T, b: T) -> T {
    match op {
        ReduceOp::Sum => a.add(b),
        ReduceOp::Product => a.mul(b),
        ReduceOp::Min if is_nan(a) || a < b => a,
        ReduceOp::Max if is_nan(a) || a > b => a,
        ReduceOp::Min | ReduceOp::Max => b,
    }
}

/// Neumaier's compensated sum: a running sum and the rounding error it lost.
#[derive(Clone, Copy, Default)]
pub(crate) struct Compensated {
    sum: f64,
    error: f64,
}

impl Compensated {
    pub(crate) fn add(mut self, v: f64) -> Self {
        let t = self.sum + v;
        self.error += if self.sum.abs() >= v.abs() { (self.sum - t) + v } else { (v - t) + self.sum };
        self.sum = t;
        self
    }

    pub(crate) fn merge(self, other: Compensated) -> Self {
        let mut m = self.add(other.sum);
        m.error += other.error;
        m
    }

    /// The compensated total; an infinite or NaN sum is returned as is (its
    /// error term is meaningless then).
    pub(crate) fn total(self) -> f64 {
        if self.sum.is_finite() { self.sum + self.error } else { self.sum }
    }
}

/// The fold of `xs` by `op`, over rayon's threads.
pub(crate) trait HostFold: Number {
    /// The fold of every element of `xs`.
    fn fold_all(op: ReduceOp, xs: &[Self]) -> Self;
    /// `sum(x[i] * y[i])`.
    fn dot_all(x: &[Self], y: &[Self]) -> Self;
}

fn fold_generic<T: Number>(op: ReduceOp, xs: &[T], identity: T) -> T {
    xs.par_iter().with_min_len(GRAIN).copied().reduce(|| identity, |a, b| fold_pair(op, a, b))
}

macro_rules! int_fold {
    ($t:ty) => {
        impl HostFold for $t {
            fn fold_all(op: ReduceOp, xs: &[Self]) -> Self {
                fold_generic(op, xs, identity_of::<$t>(op))
            }
            fn dot_all(x: &[Self], y: &[Self]) -> Self {
                x.par_iter()
                    .with_min_len(GRAIN)
                    .zip(y)
                    .map(|(a, b)| a.wrapping_mul(*b))
                    .reduce(|| 0, <$t>::wrapping_add)
            }
        }
    };
}
int_fold!(i32);
int_fold!(u32);

impl HostFold for f32 {
    /// Sums and products accumulate in f64 and round once at the end.
    fn fold_all(op: ReduceOp, xs: &[Self]) -> Self {
        match op {
            ReduceOp::Sum => in_chunks(xs.par_chunks(GRAIN).map(|c| lanes(c, c, |a, _| a as f64))) as f32,
            ReduceOp::Product => xs.par_iter().with_min_len(GRAIN).map(|&v| v as f64).product::<f64>() as f32,
            _ => fold_generic(op, xs, identity_of::<f32>(op)),
        }
    }
    /// Each product is exact in f64; the sum accumulates there.
    fn dot_all(x: &[Self], y: &[Self]) -> Self {
        let chunks = x.par_chunks(GRAIN).zip(y.par_chunks(GRAIN));
        in_chunks(chunks.map(|(x, y)| lanes(x, y, |a, b| a as f64 * b as f64))) as f32
    }
}

/// Independent accumulators in one chunk's sum: an addition into one lane
/// does not wait for the others', so the loop runs at memory's pace rather
/// than at one addition's latency per element.
const LANES: usize = 8;

/// The f64 sum of `value(x[i], y[i])` over the shorter of `x` and `y`,
/// element `i` into lane `i % LANES`, the lanes added pairwise: a fixed
/// order, so the same bits on every run. Whole groups of `LANES` elements
/// are read without bounds checks, so the loop vectorises.
#[inline]
fn lanes(x: &[f32], y: &[f32], value: impl Fn(f32, f32) -> f64) -> f64 {
    let mut acc = [0.0f64; LANES];
    let (xs, ys) = (x.chunks_exact(LANES), y.chunks_exact(LANES));
    let (x_tail, y_tail) = (xs.remainder(), ys.remainder());
    for (g, (a, b)) in xs.zip(ys).enumerate() {
        crate::prefetch::stream(x, g * LANES);
        if !std::ptr::eq(x, y) {
            crate::prefetch::stream(y, g * LANES);
        }
        for l in 0..LANES {
            acc[l] += value(a[l], b[l]);
        }
    }
    for (l, (&a, &b)) in x_tail.iter().zip(y_tail).enumerate() {
        acc[l] += value(a, b);
    }
    let mut width = LANES;
    while width > 1 {
        width /= 2;
        for l in 0..width {
            acc[l] += acc[l + width];
        }
    }
    acc[0]
}

/// The sum of chunk sums, in chunk order (the chunks are fixed, not
/// rayon's splits, so the result does not depend on the threads' timing).
fn in_chunks(sums: impl IndexedParallelIterator<Item = f64>) -> f64 {
    sums.collect::<Vec<f64>>().iter().sum()
}

impl HostFold for f64 {
    /// Sums are compensated (Neumaier): error about one rounding of the total.
    fn fold_all(op: ReduceOp, xs: &[Self]) -> Self {
        match op {
            ReduceOp::Sum => compensated(xs.par_iter().with_min_len(GRAIN).copied()),
            ReduceOp::Product => xs.par_iter().with_min_len(GRAIN).product(),
            _ => fold_generic(op, xs, identity_of::<f64>(op)),
        }
    }
    fn dot_all(x: &[Self], y: &[Self]) -> Self {
        compensated(x.par_iter().with_min_len(GRAIN).zip(y).map(|(&a, &b)| a * b))
    }
}

fn compensated(values: impl ParallelIterator<Item = f64>) -> f64 {
    values.fold(Compensated::default, Compensated::add).reduce(Compensated::default, Compensated::merge).total()
}

/// The identity of `op` on `T`: 0, 1, the largest value (+inf for floats) for
/// min, the smallest (-inf) for max.
pub(crate) fn identity_of<T: Number>(op: ReduceOp) -> T {
    match op {
        ReduceOp::Sum => T::from_index(0),
        ReduceOp::Product => T::from_index(1),
        ReduceOp::Min => extreme::<T>(true),
        ReduceOp::Max => extreme::<T>(false),
    }
}

/// The largest (`top`) or smallest value of `T`, infinities for floats.
pub(crate) fn extreme<T: Number>(top: bool) -> T {
    let bytes: [u8; 8] = match (T::DTYPE, top) {
        (DType::F32, true) => widen(&f32::INFINITY.to_le_bytes()),
        (DType::F32, false) => widen(&f32::NEG_INFINITY.to_le_bytes()),
        (DType::F64, true) => f64::INFINITY.to_le_bytes(),
        (DType::F64, false) => f64::NEG_INFINITY.to_le_bytes(),
        (DType::I32, true) => widen(&i32::MAX.to_le_bytes()),
        (DType::I32, false) => widen(&i32::MIN.to_le_bytes()),
        (DType::U32, true) => widen(&u32::MAX.to_le_bytes()),
        (DType::F16, true) => [0x00, 0x7c, 0, 0, 0, 0, 0, 0],
        (DType::F16, false) => [0x00, 0xfc, 0, 0, 0, 0, 0, 0],
        (DType::BF16, true) => [0x80, 0x7f, 0, 0, 0, 0, 0, 0],
        (DType::BF16, false) => [0x80, 0xff, 0, 0, 0, 0, 0, 0],
        _ => [0; 8],
    };
    bytemuck::pod_read_unaligned(&bytes[..size_of::<T>()])
}

fn widen(b: &[u8; 4]) -> [u8; 8] {
    [b[0], b[1], b[2], b[3], 0, 0, 0, 0]
}

/// Run `f` with `T` as the concrete type it is, so host functions generic
/// over `Number` reach the per-type code of [`HostFold`].
macro_rules! per_dtype {
    ($t:ty, $args:expr, $f:ident $(, $extra:expr)*) => {
        match <$t as kiln_core::Element>::DTYPE {
            DType::I32 => $f::<i32>($args $(, $extra)*),
            DType::U32 => $f::<u32>($args $(, $extra)*),
            DType::F32 => $f::<f32>($args $(, $extra)*),
            DType::F64 => $f::<f64>($args $(, $extra)*),
            d => Err(Error::invalid("reduction on the CPU", format!("no reduction for {d}"))),
        }
    };
}

/// Whole-array fold; arguments (x, out, identity, n): `out[0]` = fold of x,
/// the other partials the identity.
pub(crate) fn fold<T: Number, const OP: u8>(args: &mut HostArgs<'_>) -> Result<()> {
    let op = ReduceOp::decode(u32::from(OP), "reduction on the CPU")?;
    per_dtype!(T, args, fold_typed, op)
}

fn fold_typed<T: HostFold>(args: &mut HostArgs<'_>, op: ReduceOp) -> Result<()> {
    args.call(|x: &[T], out: &mut [T], identity: T, _n: u64| put(out, T::fold_all(op, x), identity))
}

/// Dot product; arguments (x, y, out, n).
pub(crate) fn dot<T: Number>(args: &mut HostArgs<'_>) -> Result<()> {
    per_dtype!(T, args, dot_typed)
}

fn dot_typed<T: HostFold>(args: &mut HostArgs<'_>) -> Result<()> {
    args.call(|x: &[T], y: &[T], out: &mut [T], _n: u64| put(out, T::dot_all(x, y), T::from_index(0)))
}

/// Write `value` to partial 0 and `identity` to the rest.
fn put<T: Number>(out: &mut [T], value: T, identity: T) -> Result<()> {
    let (first, rest) =
        out.split_first_mut().ok_or_else(|| Error::invalid("reduction on the CPU", "the output holds no element"))?;
    *first = value;
    rest.fill(identity);
    Ok(())
}

/// Along axis 1 (one result per row); arguments (x, out, identity, rows, cols).
pub(crate) fn fold_rows<T: Number, const OP: u8>(args: &mut HostArgs<'_>) -> Result<()> {
    let op = ReduceOp::decode(u32::from(OP), "row reduction on the CPU")?;
    per_dtype!(T, args, rows_typed, op)
}

fn rows_typed<T: HostFold>(args: &mut HostArgs<'_>, op: ReduceOp) -> Result<()> {
    args.call(|x: &[T], out: &mut [T], identity: T, _rows: u64, cols: u64, _chunk: u64| {
        let cols = cols as usize;
        if cols == 0 {
            out.fill(identity);
            return Ok(());
        }
        out.par_iter_mut().zip(x.par_chunks(cols)).for_each(|(o, row)| *o = T::fold_all(op, row));
        Ok(())
    })
}

/// Along axis 0 (one result per column), rows split in chunks of
/// `rows_per_chunk`; arguments (x, out, identity, rows, cols, rows_per_chunk).
/// The CPU folds all rows into chunk 0 and gives the other chunks the identity.
pub(crate) fn fold_cols<T: Number, const OP: u8>(args: &mut HostArgs<'_>) -> Result<()> {
    let op = ReduceOp::decode(u32::from(OP), "column reduction on the CPU")?;
    per_dtype!(T, args, cols_typed, op)
}

fn cols_typed<T: HostFold>(args: &mut HostArgs<'_>, op: ReduceOp) -> Result<()> {
    args.call(|x: &[T], out: &mut [T], identity: T, _rows: u64, cols: u64, _rows_per_chunk: u64| {
        cols_into(op, x, out, identity, cols as usize)
    })
}

/// [`cols_typed`]'s work: `out[c]` = the fold of column `c` of `x`.
fn cols_into<T: HostFold>(op: ReduceOp, x: &[T], out: &mut [T], identity: T, cols: usize) -> Result<()> {
    let (first, rest) = out.split_at_mut(cols.min(out.len()));
    rest.fill(identity);
    // Each column gathered once, then folded like a whole array, so the
    // column sums are as accurate as `reduce`'s.
    first.par_iter_mut().enumerate().for_each(|(c, o)| {
        let column: Vec<T> = x.iter().skip(c).step_by(cols).copied().collect();
        *o = T::fold_all(op, &column);
    });
    Ok(())
}
