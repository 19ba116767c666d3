//! CPU implementation of map.

use kiln_core::{HostArgs, Result};
use rayon::prelude::*;

use super::MapOp;
use crate::Number;
use crate::code::Code;

pub(crate) fn apply<T: Number>(op: MapOp, v: T) -> T {
    match op {
        MapOp::Square => v.mul(v),
        MapOp::Abs => v.abs(),
        MapOp::Negate => v.neg(),
        MapOp::Sqrt => v.sqrt(),
    }
}

/// `y[i] = op(x[i])`; arguments (x, y, n).
pub(crate) fn map<T: Number, const OP: u8>(args: &mut HostArgs<'_>) -> Result<()> {
    let op = MapOp::decode(u32::from(OP), "map on the CPU")?;
    let x = args.input::<T>(0)?;
    args.output::<T>(1)?.par_iter_mut().zip(x.par_iter()).for_each(|(y, &x)| *y = apply(op, x));
    Ok(())
}

/// `x[i] = op(x[i])`; arguments (x, n).
pub(crate) fn map_in_place<T: Number, const OP: u8>(args: &mut HostArgs<'_>) -> Result<()> {
    let op = MapOp::decode(u32::from(OP), "in-place map on the CPU")?;
    args.output::<T>(0)?.par_iter_mut().for_each(|x| *x = apply(op, *x));
    Ok(())
}
