//! CPU implementation of the elementwise binary operations and axpy.

use kiln_core::Result;
use rayon::prelude::*;

use super::BinaryOp;
use crate::Number;
use crate::code::Code;

pub(crate) fn combine<T: Number>(op: BinaryOp, a: T, b: T) -> T {
    match op {
        BinaryOp::Add => a.add(b),
        BinaryOp::Sub => a.sub(b),
        BinaryOp::Mul => a.mul(b),
        BinaryOp::Div => a.div(b),
    }
}

/// `c[i] = a[i] op b[i]`.
pub(crate) fn binary<T: Number, const OP: u8>(a: &[T], b: &[T], c: &mut [T], _n: u64) -> Result<()> {
    let op = BinaryOp::decode(u32::from(OP), "elementwise operation on the CPU")?;
    c.par_iter_mut().zip(a.par_iter().zip(b)).for_each(|(c, (&a, &b))| *c = combine(op, a, b));
    Ok(())
}

/// `a[i] = a[i] op b[i]`.
pub(crate) fn binary_in_place<T: Number, const OP: u8>(a: &mut [T], b: &[T], _n: u64) -> Result<()> {
    let op = BinaryOp::decode(u32::from(OP), "in-place elementwise operation on the CPU")?;
    a.par_iter_mut().zip(b.par_iter()).for_each(|(a, &b)| *a = combine(op, *a, b));
    Ok(())
}

/// `z[i] = alpha * x[i] + y[i]`.
pub(crate) fn axpy<T: Number>(x: &[T], y: &[T], z: &mut [T], alpha: T, _n: u64) -> Result<()> {
    z.par_iter_mut().zip(x.par_iter().zip(y)).for_each(|(z, (&x, &y))| *z = alpha.mul(x).add(y));
    Ok(())
}

/// `y[i] = alpha * x[i] + y[i]`.
pub(crate) fn axpy_in_place<T: Number>(x: &[T], y: &mut [T], alpha: T, _n: u64) -> Result<()> {
    y.par_iter_mut().zip(x.par_iter()).for_each(|(y, &x)| *y = alpha.mul(x).add(*y));
    Ok(())
}
