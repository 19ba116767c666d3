//! `matmul_rounded`: products of f16 and bf16 matrices into their own
//! type, on batches of random layouts (`matmul.rs`'s): every element of c's
//! matrices within the f32 sum's bound plus one rounding to the type of an
//! f64 reference, every other element of c's buffer keeping its bits.

use kiln_core::{Backend, Device};
use kiln_kernels::matmul::{MatmulShape, MatmulStrategy, RoundedElement, matmul_rounded};
use rand::Rng;

use super::inputs::from_f64;
use super::matmul::{Operand, at, at_offset, batch_shape, check_used, expect, kept_outside, within_bounds};
use super::transpose::{inverted, random_bits};
use crate::{Cases, Ctx, Failure, Sample};

fn rounded<B: Backend, T: Operand + RoundedElement + Sample>(
    strategy: MatmulStrategy,
    device: &Device<B>,
    ctx: &mut Ctx,
) -> Result<(), Failure> {
    let shape = batch_shape(ctx);
    let MatmulShape { m, n, k, batch, c: lc, .. } = shape;
    let scale = (k as f64 + 2.0) * T::ACC_EPSILON;
    let Some([a_span, b_span, c_span]) = shape.spans() else {
        return Err(Failure::Contract(format!("the spans of {shape} overflow")));
    };
    let (a, a_off) = at_offset(ctx, a_span, T::sample);
    let (b, b_off) = at_offset(ctx, b_span, T::sample);
    let (c_off, c_after) = (ctx.rng.random_range(0..4), ctx.rng.random_range(0..4));
    let mut before: Vec<T> = random_bits(ctx, c_off + c_span + c_after);
    let mut inside = vec![false; before.len()];
    let mut want = Vec::with_capacity(batch * m * n);
    for z in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let (sum, bound) = expect(&a[a_off..], &b[b_off..], &shape, z, i, j, scale);
                let exact = T::acc_f64(sum);
                // The f32 sum's bound, then one rounding to T.
                let bound = bound + <T as Sample>::epsilon() * (exact.abs() + bound + T::min_normal());
                let value: T = from_f64(exact);
                let place = c_off + at(&lc, z, i, j);
                before[place] = inverted(&[value])[0];
                inside[place] = true;
                want.push((value, bound));
            }
        }
    }
    let s = device.stream();
    let (ab, bb) = (device.upload(&a)?, device.upload(&b)?);
    let mut cb = device.upload(&before)?;
    let used = {
        let (av, bv) = (ab.slice(a_off..)?, bb.slice(b_off..)?);
        let mut cv = cb.slice_mut(c_off..c_off + c_span)?;
        matmul_rounded(&s, strategy, &av, &bv, &mut cv, shape)?
    };
    check_used(strategy, used)?;
    let what = format!("{shape} ({used}), views at offsets {a_off}, {b_off} and {c_off}");
    let got = kept_outside(&what, [(&a, &ab), (&b, &bb)], &before, &cb.to_vec()?, &inside)?;
    within_bounds(&format!("c of {what}, elements by product, row and column"), &want, &got, |v| v.to_f64())
}

/// Add `matmul/{strategy}/rounded` on f16 and bf16 to `group`.
pub(super) fn register<B: Backend>(c: &mut Cases<B>, group: &'static str, strategy: MatmulStrategy) {
    let pattern = format!("matmul/{strategy}/rounded");
    c.one(group, pattern.clone(), kiln_core::DType::F16, move |d, ctx| rounded::<B, half::f16>(strategy, d, ctx));
    c.one(group, pattern, kiln_core::DType::BF16, move |d, ctx| rounded::<B, half::bf16>(strategy, d, ctx));
}
