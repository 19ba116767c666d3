//! Matrix transpose (see [`kiln_kernels::transpose`]).

use kiln_core::{Element, Result};

use super::{dispatch, on, on_mut};
use crate::runtime::{Stream, View, ViewMut};

pub use kiln_kernels::transpose::TransposeAlgorithm;

/// `output` (`cols x rows`) = the transpose of `input` (`rows x cols`), row-major.
///
/// # Examples
/// ```
/// # fn main() -> kiln::Result<()> {
/// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
/// let s = dev.stream();
/// let a = s.upload(&[1u32, 2, 3, 4, 5, 6])?;
/// let mut t = s.alloc::<u32>(6)?;
/// kiln::kernels::transpose::transpose(&s, &a, 2, 3, &mut t)?;
/// assert_eq!(t.to_vec()?, [1, 4, 2, 5, 3, 6]);
/// # Ok(()) }
/// ```
pub fn transpose<T: Element>(
    stream: &Stream,
    input: &impl View<T>,
    rows: usize,
    cols: usize,
    output: &mut impl ViewMut<T>,
) -> Result<()> {
    let (input, output) = (input.view(), output.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::transpose::transpose(
        s,
        &on("transpose: input", s, input)?,
        rows,
        cols,
        &mut on_mut("transpose: output", s, output)?,
    ))
}

/// [`transpose`] with a chosen algorithm.
pub fn transpose_with<T: Element>(
    stream: &Stream,
    algorithm: TransposeAlgorithm,
    input: &impl View<T>,
    rows: usize,
    cols: usize,
    output: &mut impl ViewMut<T>,
) -> Result<()> {
    let (input, output) = (input.view(), output.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::transpose::transpose_with(
        s,
        algorithm,
        &on("transpose_with: input", s, input)?,
        rows,
        cols,
        &mut on_mut("transpose_with: output", s, output)?,
    ))
}
