//! Histograms (see [`kiln_kernels::histogram`]).

use kiln_core::Result;

use super::{dispatch, on, on_mut};
use crate::runtime::{Stream, View, ViewMut};

pub use kiln_kernels::histogram::{HistogramInput, MAX_BINS};

/// Count `x` into `bins` equal bins over `[lo, hi)`, adding to `counts`;
/// values outside the range are added to `dropped[0]`; returns at once.
#[allow(clippy::too_many_arguments)]
pub fn histogram_into<T: HistogramInput>(
    stream: &Stream,
    x: &impl View<T>,
    bins: usize,
    lo: T::Bound,
    hi: T::Bound,
    counts: &mut impl ViewMut<u32>,
    dropped: &mut impl ViewMut<u64>,
) -> Result<()> {
    let (x, counts, dropped) = (x.view(), counts.view_mut(), dropped.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::histogram::histogram_into(
        s,
        &on("histogram_into: x", s, x)?,
        bins,
        lo,
        hi,
        &mut on_mut("histogram_into: counts", s, counts)?,
        &mut on_mut("histogram_into: dropped", s, dropped)?,
    ))
}

/// Count `x` into `bins` equal bins over `[lo, hi)`, writing `counts`;
/// returns how many values fell outside; blocks.
///
/// # Examples
/// ```
/// use kiln::kernels::histogram::histogram;
/// # fn main() -> kiln::Result<()> {
/// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
/// let s = dev.stream();
/// let x = s.upload(&[0u8, 1, 1, 255])?;
/// let mut counts = s.alloc::<u32>(2)?;
/// let dropped = histogram(&s, &x, 2, 0, 2, &mut counts)?;
/// assert_eq!((counts.to_vec()?, dropped), (vec![1, 2], 1));
/// # Ok(()) }
/// ```
pub fn histogram<T: HistogramInput>(
    stream: &Stream,
    x: &impl View<T>,
    bins: usize,
    lo: T::Bound,
    hi: T::Bound,
    counts: &mut impl ViewMut<u32>,
) -> Result<u64> {
    let (x, counts) = (x.view(), counts.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::histogram::histogram(
        s,
        &on("histogram: x", s, x)?,
        bins,
        lo,
        hi,
        &mut on_mut("histogram: counts", s, counts)?,
    ))
}
