//! Refused calls: the checks that a call refused as it must, and the case
//! of every refusal the reductions document.

use kiln_core::{Backend, Device, Error};
use kiln_kernels::reduce::{ArgOp, ReduceOp, arg_reduce_into, dot, dot_into, reduce_axis, reduce_into};

use crate::patterns::unchanged;
use crate::{Ctx, Failure};

/// `Ok` if `result` is an `InvalidArgument` error, else a broken contract of `call`.
pub(super) fn expect_invalid<T: std::fmt::Debug>(call: &str, result: kiln_core::Result<T>) -> Result<(), Failure> {
    match result {
        Err(Error::InvalidArgument { .. }) => Ok(()),
        other => Err(Failure::Contract(format!("{call} returned {other:?}, not InvalidArgument"))),
    }
}

/// `Ok` if `result` is a `LengthMismatch` error, else a broken contract of `call`.
fn expect_mismatch<T: std::fmt::Debug>(call: &str, result: kiln_core::Result<T>) -> Result<(), Failure> {
    match result {
        Err(Error::LengthMismatch { .. }) => Ok(()),
        other => Err(Failure::Contract(format!("{call} returned {other:?}, not LengthMismatch"))),
    }
}

/// Every refused call: wrong output lengths, mismatched operands, empty
/// folds without identity, an axis past 1; nothing may be written.
pub(super) fn refusals<B: Backend>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let n = ctx.n;
    let s = device.stream();
    let x = device.upload(&crate::random_vec::<f32>(&mut ctx.rng, n))?;
    let long = device.upload(&crate::random_vec::<f32>(&mut ctx.rng, n + 1))?;
    let initial: Vec<f32> = crate::random_vec(&mut ctx.rng, 2);
    let mut out = device.upload(&initial)?;
    expect_mismatch("reduce_into with a 2-element output", reduce_into(&s, ReduceOp::Sum, &x, &mut out))?;
    expect_mismatch("dot_into with a 2-element output", dot_into(&s, &x, &x, &mut out))?;
    expect_mismatch("dot of n and n + 1 elements", dot(&s, &x, &long))?;
    let mut index = device.upload(&[7u64, 9])?;
    let mut one = device.upload(&initial[..1])?;
    expect_mismatch(
        "arg_reduce_into with a 2-element index",
        arg_reduce_into(&s, ArgOp::ArgMin, &x, &mut index, &mut one),
    )?;
    let empty = device.alloc::<f32>(0)?;
    expect_invalid("reduce_into max of nothing", reduce_into(&s, ReduceOp::Max, &empty, &mut one))?;
    let mut cols = device.upload(&initial)?;
    expect_invalid("reduce_axis along axis 2", reduce_axis(&s, ReduceOp::Sum, &long, 1, n + 1, 2, &mut one))?;
    expect_mismatch(
        "reduce_axis of (n + 1) x 1 over n elements",
        reduce_axis(&s, ReduceOp::Sum, &x, n + 1, 1, 0, &mut one),
    )?;
    expect_mismatch(
        "reduce_axis with 2 outputs for 1 x (n + 1)",
        reduce_axis(&s, ReduceOp::Min, &long, 1, n + 1, 1, &mut cols),
    )?;
    unchanged("output after refused calls", &out, &initial)?;
    if index.to_vec()? != [7, 9] {
        return Err(Failure::Contract("a refused arg_reduce_into wrote its index".into()));
    }
    unchanged("value after refused calls", &one, &initial[..1])?;
    unchanged("columns after refused calls", &cols, &initial)
}
