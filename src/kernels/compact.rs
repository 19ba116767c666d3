//! Stream compaction (see [`kiln_kernels::compact`]).

use kiln_core::Result;

use super::{Number, dispatch, on, on_mut};
use crate::runtime::{Stream, View, ViewMut};

pub use kiln_kernels::compact::Predicate;

/// Copy the elements of `x` that pass `pred` to the front of `out`, in
/// order, and their count to `count[0]`; returns at once.
pub fn copy_if_into<T: Number>(
    stream: &Stream,
    x: &impl View<T>,
    pred: Predicate<T>,
    out: &mut impl ViewMut<T>,
    count: &mut impl ViewMut<u64>,
) -> Result<()> {
    let (x, out, count) = (x.view(), out.view_mut(), count.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::compact::copy_if_into(
        s,
        &on("copy_if_into: x", s, x)?,
        pred,
        &mut on_mut("copy_if_into: out", s, out)?,
        &mut on_mut("copy_if_into: count", s, count)?,
    ))
}

/// Copy the elements of `x` that pass `pred` to the front of `out`, in
/// order; returns how many; blocks.
///
/// # Examples
/// ```
/// use kiln::kernels::compact::{copy_if, Predicate};
/// # fn main() -> kiln::Result<()> {
/// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
/// let s = dev.stream();
/// let x = s.upload(&[5i32, -1, 8, -3])?;
/// let mut out = s.alloc::<i32>(4)?;
/// let n = copy_if(&s, &x, Predicate::GreaterThan(0), &mut out)?;
/// assert_eq!(out.slice(..n)?.to_vec()?, [5, 8]);
/// # Ok(()) }
/// ```
pub fn copy_if<T: Number>(
    stream: &Stream,
    x: &impl View<T>,
    pred: Predicate<T>,
    out: &mut impl ViewMut<T>,
) -> Result<usize> {
    let (x, out) = (x.view(), out.view_mut());
    dispatch!(stream, Stream, s => {
        kiln_kernels::compact::copy_if(s, &on("copy_if: x", s, x)?, pred, &mut on_mut("copy_if: out", s, out)?)
    })
}

/// The indices of the elements of `x` that pass `pred`, and their count in
/// `count[0]`; returns at once.
pub fn copy_if_indices_into<T: Number>(
    stream: &Stream,
    x: &impl View<T>,
    pred: Predicate<T>,
    indices: &mut impl ViewMut<u32>,
    count: &mut impl ViewMut<u64>,
) -> Result<()> {
    let (x, indices, count) = (x.view(), indices.view_mut(), count.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::compact::copy_if_indices_into(
        s,
        &on("copy_if_indices_into: x", s, x)?,
        pred,
        &mut on_mut("copy_if_indices_into: indices", s, indices)?,
        &mut on_mut("copy_if_indices_into: count", s, count)?,
    ))
}

/// The indices of the elements of `x` that pass `pred`; returns how many; blocks.
pub fn copy_if_indices<T: Number>(
    stream: &Stream,
    x: &impl View<T>,
    pred: Predicate<T>,
    indices: &mut impl ViewMut<u32>,
) -> Result<usize> {
    let (x, indices) = (x.view(), indices.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::compact::copy_if_indices(
        s,
        &on("copy_if_indices: x", s, x)?,
        pred,
        &mut on_mut("copy_if_indices: indices", s, indices)?,
    ))
}
