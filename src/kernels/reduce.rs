//! Reductions: whole arrays, dot products, along an axis, arg-min/max (see [`kiln_kernels::reduce`]).

use kiln_core::Result;

use super::{Number, dispatch, on, on_mut};
use crate::runtime::{Stream, View, ViewMut};

pub use kiln_kernels::reduce::{ArgOp, ReduceOp};

/// Reduce `x` with `op` into `out[0]`, on the device; returns at once.
pub fn reduce_into<T: Number>(
    stream: &Stream,
    op: ReduceOp,
    x: &impl View<T>,
    out: &mut impl ViewMut<T>,
) -> Result<()> {
    let (x, out) = (x.view(), out.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::reduce::reduce_into(
        s,
        op,
        &on("reduce_into: x", s, x)?,
        &mut on_mut("reduce_into: out", s, out)?,
    ))
}

/// Reduce `x` with `op` and return the result on the host; blocks.
///
/// # Examples
/// ```
/// use kiln::kernels::reduce::{reduce, ReduceOp};
/// # fn main() -> kiln::Result<()> {
/// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
/// let s = dev.stream();
/// let x = s.upload(&[4i32, -1, 7])?;
/// assert_eq!(reduce(&s, ReduceOp::Max, &x)?, 7);
/// # Ok(()) }
/// ```
pub fn reduce<T: Number>(stream: &Stream, op: ReduceOp, x: &impl View<T>) -> Result<T> {
    let x = x.view();
    dispatch!(stream, Stream, s => kiln_kernels::reduce::reduce(s, op, &on("reduce: x", s, x)?))
}

/// `out[0] = sum(x[i] * y[i])`, on the device; returns at once.
pub fn dot_into<T: Number>(
    stream: &Stream,
    x: &impl View<T>,
    y: &impl View<T>,
    out: &mut impl ViewMut<T>,
) -> Result<()> {
    let (x, y, out) = (x.view(), y.view(), out.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::reduce::dot_into(
        s,
        &on("dot_into: x", s, x)?,
        &on("dot_into: y", s, y)?,
        &mut on_mut("dot_into: out", s, out)?,
    ))
}

/// `sum(x[i] * y[i])`, returned on the host; blocks.
pub fn dot<T: Number>(stream: &Stream, x: &impl View<T>, y: &impl View<T>) -> Result<T> {
    let (x, y) = (x.view(), y.view());
    dispatch!(stream, Stream, s => kiln_kernels::reduce::dot(s, &on("dot: x", s, x)?, &on("dot: y", s, y)?))
}

/// Reduce a row-major `rows x cols` matrix along `axis` (0: down the
/// columns, giving `cols` values; 1: along the rows, giving `rows`).
pub fn reduce_axis<T: Number>(
    stream: &Stream,
    op: ReduceOp,
    x: &impl View<T>,
    rows: usize,
    cols: usize,
    axis: usize,
    out: &mut impl ViewMut<T>,
) -> Result<()> {
    let (x, out) = (x.view(), out.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::reduce::reduce_axis(
        s,
        op,
        &on("reduce_axis: x", s, x)?,
        rows,
        cols,
        axis,
        &mut on_mut("reduce_axis: out", s, out)?,
    ))
}

/// The index and value of the first minimum or maximum of `x`, on the device.
pub fn arg_reduce_into<T: Number>(
    stream: &Stream,
    op: ArgOp,
    x: &impl View<T>,
    index: &mut impl ViewMut<u64>,
    value: &mut impl ViewMut<T>,
) -> Result<()> {
    let (x, index, value) = (x.view(), index.view_mut(), value.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::reduce::arg_reduce_into(
        s,
        op,
        &on("arg_reduce_into: x", s, x)?,
        &mut on_mut("arg_reduce_into: index", s, index)?,
        &mut on_mut("arg_reduce_into: value", s, value)?,
    ))
}

/// The index and value of the first minimum of `x`; blocks.
pub fn argmin<T: Number>(stream: &Stream, x: &impl View<T>) -> Result<(usize, T)> {
    let x = x.view();
    dispatch!(stream, Stream, s => kiln_kernels::reduce::argmin(s, &on("argmin: x", s, x)?))
}

/// The index and value of the first maximum of `x`; blocks.
pub fn argmax<T: Number>(stream: &Stream, x: &impl View<T>) -> Result<(usize, T)> {
    let x = x.view();
    dispatch!(stream, Stream, s => kiln_kernels::reduce::argmax(s, &on("argmax: x", s, x)?))
}
