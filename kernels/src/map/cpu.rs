//! CPU implementation of map.

use kiln_core::Result;
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

/// `y[i] = op(x[i])`.
pub(crate) fn map<T: Number, const OP: u8>(x: &[T], y: &mut [T], _n: u64) -> Result<()> {
    let op = MapOp::decode(u32::from(OP), "map on the CPU")?;
    y.par_iter_mut().zip(x.par_iter()).for_each(|(y, &x)| *y = apply(op, x));
    Ok(())
}

/// `x[i] = op(x[i])`.
pub(crate) fn map_in_place<T: Number, const OP: u8>(x: &mut [T], _n: u64) -> Result<()> {
    let op = MapOp::decode(u32::from(OP), "in-place map on the CPU")?;
    x.par_iter_mut().for_each(|x| *x = apply(op, *x));
    Ok(())
}
