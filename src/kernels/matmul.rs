//! Matrix multiply (see [`kiln_kernels::matmul`]).

use kiln_core::{DType, Result};

use super::{dispatch, on, on_mut};
use crate::runtime::{Device, Stream, View, ViewMut};

pub use kiln_kernels::matmul::{MatmulElement, MatmulShape, MatmulStrategy};

/// The strategy [`MatmulStrategy::Auto`] picks on `device` for a product of
/// `dtype` inputs and `shape`.
pub fn choose(device: &Device, dtype: DType, shape: MatmulShape) -> MatmulStrategy {
    dispatch!(device, Device, d => kiln_kernels::matmul::choose(d, dtype, shape))
}

/// `c = a . b`, row-major (`a` is `m x k`, `b` is `k x n`, `c` is `m x n`
/// of the accumulator type); returns the strategy it ran.
///
/// # Examples
/// ```
/// use kiln::kernels::matmul::{matmul, MatmulShape};
/// # fn main() -> kiln::Result<()> {
/// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
/// let s = dev.stream();
/// let a = s.upload(&[1.0f32, 2.0, 3.0, 4.0])?;
/// let b = s.upload(&[1.0f32, 0.0, 0.0, 1.0])?;
/// let mut c = s.alloc::<f32>(4)?;
/// matmul(&s, &a, &b, &mut c, MatmulShape::new(2, 2, 2))?;
/// assert_eq!(c.to_vec()?, [1.0, 2.0, 3.0, 4.0]);
/// # Ok(()) }
/// ```
pub fn matmul<T: MatmulElement>(
    stream: &Stream,
    a: &impl View<T>,
    b: &impl View<T>,
    c: &mut impl ViewMut<T::Acc>,
    shape: MatmulShape,
) -> Result<MatmulStrategy> {
    matmul_with(stream, MatmulStrategy::Auto, a, b, c, shape)
}

/// [`matmul`] with a chosen strategy.
pub fn matmul_with<T: MatmulElement>(
    stream: &Stream,
    strategy: MatmulStrategy,
    a: &impl View<T>,
    b: &impl View<T>,
    c: &mut impl ViewMut<T::Acc>,
    shape: MatmulShape,
) -> Result<MatmulStrategy> {
    let (a, b, c) = (a.view(), b.view(), c.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::matmul::matmul_with(
        s,
        strategy,
        &on("matmul: a", s, a)?,
        &on("matmul: b", s, b)?,
        &mut on_mut("matmul: c", s, c)?,
        shape,
    ))
}
