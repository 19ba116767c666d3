//! CPU implementation of the elementwise binary operations and axpy.

use kiln_core::{HostArgs, Result};
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

/// `c[i] = a[i] op b[i]`; arguments (a, b, c, n).
pub(crate) fn binary<T: Number, const OP: u8>(args: &mut HostArgs<'_>) -> Result<()> {
    let op = BinaryOp::decode(u32::from(OP), "elementwise operation on the CPU")?;
    let (a, b) = (args.input::<T>(0)?, args.input::<T>(1)?);
    args.output::<T>(2)?.par_iter_mut().zip(a.par_iter().zip(b)).for_each(|(c, (&a, &b))| *c = combine(op, a, b));
    Ok(())
}

/// `a[i] = a[i] op b[i]`; arguments (a, b, n).
pub(crate) fn binary_in_place<T: Number, const OP: u8>(args: &mut HostArgs<'_>) -> Result<()> {
    let op = BinaryOp::decode(u32::from(OP), "in-place elementwise operation on the CPU")?;
    let b = args.input::<T>(1)?;
    args.output::<T>(0)?.par_iter_mut().zip(b.par_iter()).for_each(|(a, &b)| *a = combine(op, *a, b));
    Ok(())
}

/// `z[i] = alpha * x[i] + y[i]`; arguments (x, y, z, alpha, n).
pub(crate) fn axpy<T: Number>(args: &mut HostArgs<'_>) -> Result<()> {
    let (x, y, alpha) = (args.input::<T>(0)?, args.input::<T>(1)?, args.scalar::<T>(3)?);
    args.output::<T>(2)?.par_iter_mut().zip(x.par_iter().zip(y)).for_each(|(z, (&x, &y))| *z = alpha.mul(x).add(y));
    Ok(())
}

/// `y[i] = alpha * x[i] + y[i]`; arguments (x, y, alpha, n).
pub(crate) fn axpy_in_place<T: Number>(args: &mut HostArgs<'_>) -> Result<()> {
    let (x, alpha) = (args.input::<T>(0)?, args.scalar::<T>(2)?);
    args.output::<T>(1)?.par_iter_mut().zip(x.par_iter()).for_each(|(y, &x)| *y = alpha.mul(x).add(*y));
    Ok(())
}
