//! Binary elementwise operations and axpy (see [`kiln_kernels::elementwise`]).

use kiln_core::Result;

use super::{Number, dispatch, on, on_mut};
use crate::runtime::{Stream, View, ViewMut};

pub use kiln_kernels::elementwise::BinaryOp;

/// `c[i] = op(a[i], b[i])`.
pub fn binary<T: Number>(
    stream: &Stream,
    op: BinaryOp,
    a: &impl View<T>,
    b: &impl View<T>,
    c: &mut impl ViewMut<T>,
) -> Result<()> {
    let (a, b, c) = (a.view(), b.view(), c.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::elementwise::binary(
        s,
        op,
        &on("binary: a", s, a)?,
        &on("binary: b", s, b)?,
        &mut on_mut("binary: c", s, c)?,
    ))
}

/// `a[i] = op(a[i], b[i])`.
pub fn binary_in_place<T: Number>(
    stream: &Stream,
    op: BinaryOp,
    a: &mut impl ViewMut<T>,
    b: &impl View<T>,
) -> Result<()> {
    let (a, b) = (a.view_mut(), b.view());
    dispatch!(stream, Stream, s => kiln_kernels::elementwise::binary_in_place(
        s,
        op,
        &mut on_mut("binary_in_place: a", s, a)?,
        &on("binary_in_place: b", s, b)?,
    ))
}

/// `z[i] = alpha * x[i] + y[i]`.
///
/// # Examples
/// ```
/// # fn main() -> kiln::Result<()> {
/// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
/// let s = dev.stream();
/// let (x, y) = (s.upload(&[1.0f32, 2.0])?, s.upload(&[10.0f32, 20.0])?);
/// let mut z = s.alloc::<f32>(2)?;
/// kiln::kernels::elementwise::axpy(&s, 3.0, &x, &y, &mut z)?;
/// assert_eq!(z.to_vec()?, [13.0, 26.0]);
/// # Ok(()) }
/// ```
pub fn axpy<T: Number>(
    stream: &Stream,
    alpha: T,
    x: &impl View<T>,
    y: &impl View<T>,
    z: &mut impl ViewMut<T>,
) -> Result<()> {
    let (x, y, z) = (x.view(), y.view(), z.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::elementwise::axpy(
        s,
        alpha,
        &on("axpy: x", s, x)?,
        &on("axpy: y", s, y)?,
        &mut on_mut("axpy: z", s, z)?,
    ))
}

/// `y[i] = alpha * x[i] + y[i]`.
pub fn axpy_in_place<T: Number>(stream: &Stream, alpha: T, x: &impl View<T>, y: &mut impl ViewMut<T>) -> Result<()> {
    let (x, y) = (x.view(), y.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::elementwise::axpy_in_place(
        s,
        alpha,
        &on("axpy_in_place: x", s, x)?,
        &mut on_mut("axpy_in_place: y", s, y)?,
    ))
}
