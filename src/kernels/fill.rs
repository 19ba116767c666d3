//! Fill and sequence (see [`kiln_kernels::fill`]).

use kiln_core::{Element, Result};

use super::{Number, dispatch, on_mut};
use crate::runtime::{Stream, ViewMut};

/// Set every element of `dst` to `value`.
///
/// # Examples
/// ```
/// # fn main() -> kiln::Result<()> {
/// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
/// let s = dev.stream();
/// let mut x = s.alloc::<i32>(3)?;
/// kiln::kernels::fill::fill(&s, &mut x, -4)?;
/// assert_eq!(x.to_vec()?, [-4, -4, -4]);
/// # Ok(()) }
/// ```
pub fn fill<T: Element>(stream: &Stream, dst: &mut impl ViewMut<T>, value: T) -> Result<()> {
    let dst = dst.view_mut();
    dispatch!(stream, Stream, s => kiln_kernels::fill::fill(s, &mut on_mut("fill", s, dst)?, value))
}

/// `dst[i] = start + i * step`.
///
/// # Examples
/// ```
/// # fn main() -> kiln::Result<()> {
/// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
/// let s = dev.stream();
/// let mut x = s.alloc::<u32>(4)?;
/// kiln::kernels::fill::sequence(&s, &mut x, 5, 2)?;
/// assert_eq!(x.to_vec()?, [5, 7, 9, 11]);
/// # Ok(()) }
/// ```
pub fn sequence<T: Number>(stream: &Stream, dst: &mut impl ViewMut<T>, start: T, step: T) -> Result<()> {
    let dst = dst.view_mut();
    dispatch!(stream, Stream, s => kiln_kernels::fill::sequence(s, &mut on_mut("sequence", s, dst)?, start, step))
}
