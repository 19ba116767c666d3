//! Thrust-style helpers (see [`kiln_kernels::thrust`]).

use kiln_core::Result;

use super::compact::Predicate;
use super::elementwise::BinaryOp;
use super::map::MapOp;
use super::reduce::ReduceOp;
use super::{Number, dispatch, on, on_mut};
use crate::runtime::{Stream, View, ViewMut};

/// `thrust::sequence`: `dst[i] = init + i * step`.
pub fn sequence<T: Number>(stream: &Stream, dst: &mut impl ViewMut<T>, init: T, step: T) -> Result<()> {
    let dst = dst.view_mut();
    dispatch!(stream, Stream, s => kiln_kernels::thrust::sequence(s, &mut on_mut("sequence: dst", s, dst)?, init, step))
}

/// `thrust::transform` with a unary op.
pub fn transform<T: Number>(stream: &Stream, x: &impl View<T>, y: &mut impl ViewMut<T>, op: MapOp) -> Result<()> {
    let (x, y) = (x.view(), y.view_mut());
    dispatch!(stream, Stream, s => {
        kiln_kernels::thrust::transform(s, &on("transform: x", s, x)?, &mut on_mut("transform: y", s, y)?, op)
    })
}

/// `thrust::transform` with a binary op.
pub fn transform_binary<T: Number>(
    stream: &Stream,
    a: &impl View<T>,
    b: &impl View<T>,
    c: &mut impl ViewMut<T>,
    op: BinaryOp,
) -> Result<()> {
    let (a, b, c) = (a.view(), b.view(), c.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::thrust::transform_binary(
        s,
        &on("transform_binary: a", s, a)?,
        &on("transform_binary: b", s, b)?,
        &mut on_mut("transform_binary: c", s, c)?,
        op,
    ))
}

/// `thrust::reduce`: `init` combined with every element by `op`; blocks.
///
/// # Examples
/// ```
/// use kiln::kernels::reduce::ReduceOp;
/// # fn main() -> kiln::Result<()> {
/// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
/// let s = dev.stream();
/// let x = s.upload(&[1i32, 2, 3])?;
/// assert_eq!(kiln::kernels::thrust::reduce(&s, &x, 10, ReduceOp::Sum)?, 16);
/// # Ok(()) }
/// ```
pub fn reduce<T: Number>(stream: &Stream, x: &impl View<T>, init: T, op: ReduceOp) -> Result<T> {
    let x = x.view();
    dispatch!(stream, Stream, s => kiln_kernels::thrust::reduce(s, &on("reduce: x", s, x)?, init, op))
}

/// `thrust::copy_if`; returns how many were kept; blocks.
pub fn copy_if<T: Number>(
    stream: &Stream,
    x: &impl View<T>,
    out: &mut impl ViewMut<T>,
    pred: Predicate<T>,
) -> Result<usize> {
    let (x, out) = (x.view(), out.view_mut());
    dispatch!(stream, Stream, s => {
        kiln_kernels::thrust::copy_if(s, &on("copy_if: x", s, x)?, &mut on_mut("copy_if: out", s, out)?, pred)
    })
}
