//! The sequential reference of each reduction: the fold and its error
//! bound, the arg-reduction's index, and what a backend that flushes
//! subnormals may return instead.

use kiln_kernels::reduce::{ArgOp, ReduceOp};

use crate::patterns::inputs::from_f64;
use crate::patterns::sums::{Compensated, sum_bound};
use crate::{Arith, Sample};

/// Whether `v` is NaN (never for integers).
fn nan<T: Sample>(v: T) -> bool {
    v.is_nan_value()
}

/// The reference fold of `xs` by `op`, and its error bound.
pub(super) fn fold<T: Arith + PartialOrd>(op: ReduceOp, xs: &[T]) -> (T, f64) {
    match op {
        ReduceOp::Sum if T::IS_FLOAT => {
            let mut s = Compensated::default();
            xs.iter().for_each(|v| s.add(v.to_f64()));
            let magnitude = xs.iter().map(|v| v.to_f64().abs()).sum::<f64>();
            (from_f64(s.value()), sum_bound::<T>(xs.len(), magnitude, s.value()))
        }
        ReduceOp::Sum => (xs.iter().fold(T::index(0), |a, &b| T::plus(a, b)), 0.0),
        ReduceOp::Product if T::IS_FLOAT => {
            // Factors are +-1 but for at most 32 (see `values::factors`): a few roundings.
            let p = xs.iter().fold(1.0f64, |a, b| a * b.to_f64());
            (from_f64(p), (72.0 * T::accumulator_epsilon() + T::epsilon()) * p.abs())
        }
        ReduceOp::Product => (xs.iter().fold(T::index(1), |a, &b| T::times(a, b)), 0.0),
        ReduceOp::Min | ReduceOp::Max => {
            let mut best = xs[0];
            for &v in &xs[1..] {
                let better = if op == ReduceOp::Min { v < best } else { v > best };
                if !nan(best) && (nan(v) || better) {
                    best = v;
                }
            }
            (best, 0.0)
        }
    }
}

/// The reference dot product of `x` and `y`, and its error bound.
pub(super) fn dot_product<T: Arith>(x: &[T], y: &[T]) -> (T, f64) {
    if <T as Sample>::IS_FLOAT {
        let mut s = Compensated::default();
        x.iter().zip(y).for_each(|(a, b)| s.add(a.to_f64() * b.to_f64()));
        let magnitude: f64 = x.iter().zip(y).map(|(a, b)| (a.to_f64() * b.to_f64()).abs()).sum();
        (from_f64::<T>(s.value()), sum_bound::<T>(x.len(), magnitude, s.value()))
    } else {
        (x.iter().zip(y).fold(T::index(0), |acc, (&a, &b)| T::plus(acc, T::times(a, b))), 0.0)
    }
}

/// The flushed alternatives of a min or max: what a backend that reads
/// subnormals as zero may return (the flushed fold, or any element equal to
/// it once flushed).
pub(super) fn flushed_extremes<T: Arith + PartialOrd>(op: ReduceOp, xs: &[T]) -> Vec<T> {
    let flushed: Vec<T> = xs.iter().map(|v| v.flush_subnormal()).collect();
    let (f, _) = fold(op, &flushed);
    let mut alternatives = vec![f];
    for &v in xs {
        if v.flush_subnormal().to_f64() == f.to_f64() && !alternatives.iter().any(|a| a.same_as(v)) {
            alternatives.push(v);
            if alternatives.len() > 16 {
                break;
            }
        }
    }
    alternatives
}

/// The reference arg-reduction: the first NaN, else the first extreme.
pub(super) fn arg_ref<T: Sample + PartialOrd>(op: ArgOp, xs: &[T]) -> usize {
    if let Some(i) = xs.iter().position(|v| nan(*v)) {
        return i;
    }
    let mut best = 0;
    for (i, &v) in xs.iter().enumerate().skip(1) {
        let better = if op == ArgOp::ArgMin { v < xs[best] } else { v > xs[best] };
        if better {
            best = i;
        }
    }
    best
}
