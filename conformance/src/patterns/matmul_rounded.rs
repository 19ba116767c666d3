//! `matmul_rounded`: products of f16 and bf16 matrices into their own
//! type, on batches of random layouts (`matmul.rs`'s): every element of c's
//! matrices within the f32 sum's bound plus one rounding to the type of an
//! f64 reference, every other element of c's buffer keeping its bits.

use kiln_core::{Backend, Device};
use kiln_kernels::matmul::{MatmulStrategy, RoundedElement, matmul_rounded};

use super::inputs::from_f64;
use super::matmul::{Operand, Product};
use crate::{Cases, Ctx, Failure, Sample};

fn rounded<B: Backend, T: Operand + RoundedElement + Sample>(
    strategy: MatmulStrategy,
    device: &Device<B>,
    ctx: &mut Ctx,
) -> Result<(), Failure> {
    // The f32 sum's bound, then one rounding to T.
    let output = |sum: f32, bound: f64| {
        let exact = f64::from(sum);
        (from_f64::<T>(exact), bound + <T as Sample>::epsilon() * (exact.abs() + bound + T::min_normal()))
    };
    let product = Product { strategy, precision: None, sample: T::sample, output, to_f64: |v: T| v.to_f64() };
    product.check(device, ctx, |s, a, b, c, shape| matmul_rounded(s, strategy, a, b, c, shape))
}

/// Add `matmul/{strategy}/rounded` on f16 and bf16 to `group`, for every strategy.
pub(super) fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    for strategy in MatmulStrategy::ALL {
        let pattern = format!("matmul/{strategy}/rounded");
        c.one(group, pattern.clone(), kiln_core::DType::F16, move |d, ctx| rounded::<B, half::f16>(strategy, d, ctx));
        c.one(group, pattern, kiln_core::DType::BF16, move |d, ctx| rounded::<B, half::bf16>(strategy, d, ctx));
    }
}
