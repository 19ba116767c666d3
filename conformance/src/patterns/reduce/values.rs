//! The values and shapes the reductions are checked on: adversarial where
//! the result stays meaningful, tamed where it would only overflow.

use kiln_kernels::reduce::ReduceOp;
use rand::Rng;

use crate::patterns::inputs::from_f64;
use crate::{Arith, Ctx, Sample};

/// Inputs for `op`: adversarial integers; for floats, moderate values for
/// sums (no overflow), factors of +-1 but for a few for products, and the
/// adversarial mix without NaN (infinities, -0.0, subnormals, extremes)
/// for min and max.
pub(super) fn values<T: Arith>(op: ReduceOp, ctx: &mut Ctx, len: usize) -> Vec<T> {
    match op {
        ReduceOp::Sum if T::IS_FLOAT => (0..len).map(|_| T::random_moderate(&mut ctx.rng)).collect(),
        ReduceOp::Product => factors(ctx, len),
        ReduceOp::Min | ReduceOp::Max => no_nan(crate::random_vec(&mut ctx.rng, len), ctx),
        ReduceOp::Sum => crate::random_vec(&mut ctx.rng, len),
    }
}

/// The adversarial mix with each NaN replaced by a moderate value.
pub(super) fn no_nan<T: Sample>(mut xs: Vec<T>, ctx: &mut Ctx) -> Vec<T> {
    for v in xs.iter_mut().filter(|v| v.is_nan_value()) {
        *v = T::random_moderate(&mut ctx.rng);
    }
    xs
}

/// Product factors whose product neither overflows nor vanishes: for
/// floats +-1 except for up to 16 mantissas in [1, 2) and 16 powers of two
/// in [2^-4, 2^4]; for integers odd values (so the wrapped product is not
/// simply 0) and a few even ones.
fn factors<T: Arith>(ctx: &mut Ctx, len: usize) -> Vec<T> {
    let one = T::index(1);
    if !T::IS_FLOAT {
        return (0..len)
            .map(|_| {
                let v = T::random(&mut ctx.rng);
                if ctx.rng.random_range(0..len.max(8)) < 4 { v } else { T::plus(T::times(v, T::index(2)), one) }
            })
            .collect();
    }
    let mut xs: Vec<T> = (0..len).map(|_| if ctx.rng.random() { one } else { T::negated(one) }).collect();
    for k in 0..len.min(32) {
        let at = ctx.rng.random_range(0..len);
        let v = if k % 2 == 0 { ctx.rng.random_range(1.0..2.0) } else { 2f64.powi(ctx.rng.random_range(-4..=4)) };
        xs[at] = from_f64(if ctx.rng.random() { v } else { -v });
    }
    xs
}

/// A shape for `n` elements: one row, one column, or a random number of
/// rows or columns up to 64 (the rest of `n` dropped); for `n = 0`, an
/// empty axis next to a short one.
pub(crate) fn shape(ctx: &mut Ctx) -> (usize, usize) {
    let n = ctx.n;
    if n == 0 {
        let k = ctx.rng.random_range(0..4);
        return if ctx.rng.random() { (0, k) } else { (k, 0) };
    }
    match ctx.rng.random_range(0..4) {
        0 => (1, n),
        1 => (n, 1),
        2 => {
            let rows = ctx.rng.random_range(1..=n.min(64));
            (rows, n / rows)
        }
        _ => {
            let cols = ctx.rng.random_range(1..=n.min(64));
            (n / cols, cols)
        }
    }
}
