//! Sorting (see [`kiln_kernels::sort`]).

use kiln_core::Result;

use super::{dispatch, on, on_mut};
use crate::runtime::{Stream, View, ViewMut};

pub use kiln_kernels::sort::{SortKey, SortOrder};

/// Sort `keys` in place (stable).
///
/// # Examples
/// ```
/// use kiln::kernels::sort::{sort, SortOrder};
/// # fn main() -> kiln::Result<()> {
/// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
/// let s = dev.stream();
/// let mut k = s.upload(&[3.5f32, -1.0, 2.0])?;
/// sort(&s, &mut k, SortOrder::Ascending)?;
/// assert_eq!(k.to_vec()?, [-1.0, 2.0, 3.5]);
/// # Ok(()) }
/// ```
pub fn sort<K: SortKey>(stream: &Stream, keys: &mut impl ViewMut<K>, order: SortOrder) -> Result<()> {
    let keys = keys.view_mut();
    dispatch!(stream, Stream, s => kiln_kernels::sort::sort(s, &mut on_mut("sort: keys", s, keys)?, order))
}

/// `sorted` = `keys` sorted (stable); `keys` is left as it was.
pub fn sort_into<K: SortKey>(
    stream: &Stream,
    keys: &impl View<K>,
    sorted: &mut impl ViewMut<K>,
    order: SortOrder,
) -> Result<()> {
    let (keys, sorted) = (keys.view(), sorted.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::sort::sort_into(
        s,
        &on("sort_into: keys", s, keys)?,
        &mut on_mut("sort_into: sorted", s, sorted)?,
        order,
    ))
}

/// Sort `keys` in place, carrying `values` along (stable).
pub fn sort_pairs<K: SortKey>(
    stream: &Stream,
    keys: &mut impl ViewMut<K>,
    values: &mut impl ViewMut<u32>,
    order: SortOrder,
) -> Result<()> {
    let (keys, values) = (keys.view_mut(), values.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::sort::sort_pairs(
        s,
        &mut on_mut("sort_pairs: keys", s, keys)?,
        &mut on_mut("sort_pairs: values", s, values)?,
        order,
    ))
}

/// `indices` = the permutation that sorts `keys` (stable).
pub fn argsort<K: SortKey>(
    stream: &Stream,
    keys: &impl View<K>,
    indices: &mut impl ViewMut<u32>,
    order: SortOrder,
) -> Result<()> {
    let (keys, indices) = (keys.view(), indices.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::sort::argsort(
        s,
        &on("argsort: keys", s, keys)?,
        &mut on_mut("argsort: indices", s, indices)?,
        order,
    ))
}
