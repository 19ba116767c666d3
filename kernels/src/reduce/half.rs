//! Reductions of the 16-bit floats (`f16`, `bf16`): the input widened to
//! `f32` (exactly), folded (or searched, for argmin and argmax) by the
//! `f32` plan of the backend, the result rounded once to the input's type. Sums are as accurate as `f32` sums of
//! the same values; min and max are exact and propagate NaN, as for the
//! other types. The widening is a pass of its own (2 bytes read and 4
//! written per element before the fold reads 4), so these reductions move
//! five times the bytes of a one-pass 16-bit fold.

use kiln_core::{Backend, BufferView, BufferViewMut, Element, Result, Stream};

use super::{ArgOp, ReduceOp, arg_reduce_into, fold_into as fold_f32, launch};
use crate::widen::{narrow, widen};

/// The fold of `x` by `op` into `out[0]` (one element); returns at once.
pub(super) fn fold_into<B: Backend, T: Element>(
    stream: &Stream<B>,
    op: ReduceOp,
    x: BufferView<'_, B, T>,
    out: BufferViewMut<'_, B, T>,
) -> Result<()> {
    let wide = widen(stream, x)?;
    let mut sum = stream.alloc::<f32>(1)?;
    fold_f32(stream, op, wide.view(), sum.view_mut())?;
    narrow(stream, sum.view(), out)
}

/// `sum(x[i] * y[i])` into `out[0]`, each product exact in `f32`; returns at once.
pub(super) fn dot_into<B: Backend, T: Element>(
    stream: &Stream<B>,
    x: BufferView<'_, B, T>,
    y: BufferView<'_, B, T>,
    out: BufferViewMut<'_, B, T>,
) -> Result<()> {
    let (wx, wy) = (widen(stream, x)?, widen(stream, y)?);
    let mut sum = stream.alloc::<f32>(1)?;
    launch::dot_into(stream, wx.view(), wy.view(), sum.view_mut())?;
    narrow(stream, sum.view(), out)
}

/// The fold of `op` along `axis` of `x` seen as `rows x cols`, into `out`
/// (of the length [`reduce_axis`](super::reduce_axis) checked).
pub(super) fn fold_axis<B: Backend, T: Element>(
    stream: &Stream<B>,
    op: ReduceOp,
    x: BufferView<'_, B, T>,
    (rows, cols, axis): (usize, usize, usize),
    out: BufferViewMut<'_, B, T>,
) -> Result<()> {
    let wide = widen(stream, x)?;
    let mut folded = stream.alloc::<f32>(out.len())?;
    super::reduce_axis(stream, op, &wide, rows, cols, axis, &mut folded)?;
    narrow(stream, folded.view(), out)
}

/// The position and value of the extreme element of `x` into `index[0]`
/// and `value[0]`. Widening keeps every value and its order (NaN stays
/// NaN): the f32 search finds the same element, whose value narrows back
/// exactly.
pub(super) fn arg_into<B: Backend, T: Element>(
    stream: &Stream<B>,
    op: ArgOp,
    x: BufferView<'_, B, T>,
    mut index: BufferViewMut<'_, B, u64>,
    value: BufferViewMut<'_, B, T>,
) -> Result<()> {
    let wide = widen(stream, x)?;
    let mut wide_value = stream.alloc::<f32>(1)?;
    arg_reduce_into(stream, op, &wide, &mut index, &mut wide_value)?;
    narrow(stream, wide_value.view(), value)
}
