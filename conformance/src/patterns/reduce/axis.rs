//! `reduce_axis`: one result per column (axis 0) or per row (axis 1) of a
//! matrix of random shape.

use kiln_core::{Backend, Device};
use kiln_kernels::Number;
use kiln_kernels::reduce::{ReduceOp, reduce_axis};

use super::reference::{flushed_extremes, fold};
use super::refusals::expect_invalid;
use super::values::{shape, values};
use crate::patterns::inputs::{offset, upload_at};
use crate::patterns::unchanged;
use crate::{Arith, Ctx, Expected, Failure, NumberPattern};

/// `reduce_axis` of one operation along one axis.
#[derive(Debug, Clone, Copy)]
pub struct Axis {
    /// The operation.
    pub op: ReduceOp,
    /// 0 (one result per column) or 1 (one per row).
    pub axis: usize,
}

impl NumberPattern for Axis {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let (op, axis) = (self.op, self.axis);
        let (rows, cols) = shape(ctx);
        let x: Vec<T> = values(op, ctx, rows * cols);
        let (results, folded) = if axis == 0 { (cols, rows) } else { (rows, cols) };
        let line = |r: usize| -> Vec<T> {
            if axis == 0 { (0..rows).map(|i| x[i * cols + r]).collect() } else { x[r * cols..(r + 1) * cols].to_vec() }
        };
        let what = format!("reduce_axis {op} along axis {axis} of {rows} x {cols}");
        let off = offset(ctx);
        let (buf, all) = upload_at(device, ctx, &x, off)?;
        let view = buf.slice(off..)?;
        let s = device.stream();
        if results > 0 && folded == 0 && !op.has_identity() {
            let initial: Vec<T> = crate::random_vec(&mut ctx.rng, results);
            let mut out = device.upload(&initial)?;
            expect_invalid(&what, reduce_axis(&s, op, &view, rows, cols, axis, &mut out))?;
            return unchanged("output after a refused reduce_axis", &out, &initial);
        }
        let (mut want, mut bounds) = (Vec::with_capacity(results), Vec::with_capacity(results));
        for r in 0..results {
            let (v, b) = if folded == 0 { (op.identity::<T>(), 0.0) } else { fold(op, &line(r)) };
            want.push(v);
            bounds.push(b);
        }
        let mut expected = Expected::within(want.clone(), bounds);
        if ctx.flush_subnormals && folded > 0 && matches!(op, ReduceOp::Min | ReduceOp::Max) {
            // Every value each line may give once subnormals read as zero
            // (with ties between a subnormal and zero, either may win).
            let alternatives: Vec<Vec<T>> = (0..results).map(|r| flushed_extremes(op, &line(r))).collect();
            let most = alternatives.iter().map(Vec::len).max().unwrap_or(0);
            for k in 0..most {
                expected = expected.or(alternatives.iter().map(|a| a[k.min(a.len() - 1)]).collect());
            }
        }
        let mut out = crate::poisoned(device, &want)?;
        reduce_axis(&s, op, &view, rows, cols, axis, &mut out)?;
        ctx.compare(&what, &expected, &out.to_vec()?)?;
        unchanged("input", &buf, &all)
    }
}
