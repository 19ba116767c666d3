//! Reductions of a whole array: `reduce` and `reduce_into` of each
//! operation, `dot` and `dot_into`.

use kiln_core::{Backend, Device};
use kiln_kernels::Number;
use kiln_kernels::reduce::{ReduceOp, dot, dot_into, reduce, reduce_into};

use super::reference::{dot_product, flushed_extremes, fold};
use super::refusals::expect_invalid;
use super::values::values;
use crate::patterns::inputs::{offset, upload_at};
use crate::patterns::unchanged;
use crate::{Arith, Ctx, Expected, Failure, NumberPattern};

/// `reduce` and `reduce_into` of one operation.
#[derive(Debug, Clone, Copy)]
pub struct Reduce {
    /// The operation.
    pub op: ReduceOp,
}

impl NumberPattern for Reduce {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let op = self.op;
        let x: Vec<T> = values(op, ctx, ctx.n);
        let off = offset(ctx);
        let (buf, all) = upload_at(device, ctx, &x, off)?;
        let view = buf.slice(off..)?;
        let s = device.stream();
        let mut out = device.upload(&crate::random_vec::<T>(&mut ctx.rng, 3))?;
        let before = out.to_vec()?;
        if x.is_empty() && !op.has_identity() {
            expect_invalid(&format!("reduce {op} of nothing"), reduce(&s, op, &view))?;
            expect_invalid(
                &format!("reduce_into {op} of nothing"),
                reduce_into(&s, op, &view, &mut out.slice_mut(1..2)?),
            )?;
            return unchanged("output after a refused reduce_into", &out, &before);
        }
        let (want, bound) = if x.is_empty() { (op.identity::<T>(), 0.0) } else { fold(op, &x) };
        let mut expected = Expected::within(vec![want], vec![bound]);
        if ctx.flush_subnormals && !x.is_empty() && matches!(op, ReduceOp::Min | ReduceOp::Max) {
            for alt in flushed_extremes(op, &x) {
                expected = expected.or(vec![alt]);
            }
        }
        let got = reduce(&s, op, &view)?;
        ctx.compare(&format!("reduce {op} of {} elements", x.len()), &expected, &[got])?;
        reduce_into(&s, op, &view, &mut out.slice_mut(1..2)?)?;
        let after = out.to_vec()?;
        ctx.compare(&format!("reduce_into {op}: the element written"), &expected, &after[1..2])?;
        unchanged("input", &buf, &all)?;
        let neighbours = Expected::within(vec![before[0], before[2]], vec![0.0; 2]);
        ctx.compare("reduce_into: the elements around the output", &neighbours, &[after[0], after[2]])
    }
}

/// `dot` and `dot_into`.
#[derive(Debug, Clone, Copy)]
pub struct Dot;

impl NumberPattern for Dot {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let n = ctx.n;
        let (x, y): (Vec<T>, Vec<T>) = (values(ReduceOp::Sum, ctx, n), values(ReduceOp::Sum, ctx, n));
        let (want, bound) = dot_product(&x, &y);
        let expected = Expected::within(vec![want], vec![bound]);
        // x and y at different offsets: on CUDA a relative misalignment takes the scalar path.
        let (ox, oy) = (offset(ctx), offset(ctx));
        let (xb, xall) = upload_at(device, ctx, &x, ox)?;
        let (yb, yall) = upload_at(device, ctx, &y, oy)?;
        let (xv, yv) = (xb.slice(ox..)?, yb.slice(oy..)?);
        let s = device.stream();
        let got = dot(&s, &xv, &yv)?;
        ctx.compare(&format!("dot of {n} elements (x at +{ox}, y at +{oy})"), &expected, &[got])?;
        let mut out = device.upload(&[T::poison(want)])?;
        dot_into(&s, &xv, &yv, &mut out)?;
        ctx.compare("dot_into", &expected, &out.to_vec()?)?;
        unchanged("input x", &xb, &xall)?;
        unchanged("input y", &yb, &yall)
    }
}
