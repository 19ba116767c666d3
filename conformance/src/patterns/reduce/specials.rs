//! NaN and infinities in float reductions, by the documented rules.

use kiln_core::{Backend, Device};
use kiln_kernels::Number;
use kiln_kernels::reduce::{ReduceOp, dot, reduce};
use rand::Rng;

use super::reference::{dot_product, fold};
use super::values::values;
use crate::patterns::inputs::from_f64;
use crate::{Arith, Ctx, Expected, Failure};

/// NaN and infinities in float reductions: a NaN makes sum, product, dot,
/// min and max NaN and wins argmin/argmax; +inf and -inf make a sum NaN.
pub(super) fn nan_inf<B: Backend, T: Arith + Number>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let n = ctx.n;
    if n == 0 {
        return Ok(());
    }
    let s = device.stream();
    let specials: [(&str, &[f64]); 4] = [
        ("a NaN", &[f64::NAN]),
        ("+inf", &[f64::INFINITY]),
        ("-inf", &[f64::NEG_INFINITY]),
        ("+inf and -inf", &[f64::INFINITY, f64::NEG_INFINITY]),
    ];
    for (what, put) in specials {
        for op in ReduceOp::ALL {
            let mut x: Vec<T> = values(op, ctx, n);
            for &v in put {
                let at = ctx.rng.random_range(0..n);
                x[at] = from_f64(v);
            }
            let (want, bound) = fold(op, &x);
            let got = reduce(&s, op, &device.upload(&x)?)?;
            ctx.compare(
                &format!("reduce {op} of {n} elements with {what}"),
                &Expected::within(vec![want], vec![bound]),
                &[got],
            )?;
        }
        let mut x: Vec<T> = values(ReduceOp::Sum, ctx, n);
        let y: Vec<T> = values(ReduceOp::Sum, ctx, n);
        for &v in put {
            let at = ctx.rng.random_range(0..n);
            x[at] = from_f64(v);
        }
        let (want, bound) = dot_product(&x, &y);
        let got = dot(&s, &device.upload(&x)?, &device.upload(&y)?)?;
        ctx.compare(
            &format!("dot of {n} elements with {what} in x"),
            &Expected::within(vec![want], vec![bound]),
            &[got],
        )?;
    }
    Ok(())
}
