//! Prefix sums and scans (see [`kiln_kernels::scan`]).

use kiln_core::Result;

use super::{Number, dispatch, on, on_mut};
use crate::runtime::{Stream, View, ViewMut};

pub use kiln_kernels::scan::ScanKind;

/// `y` = the inclusive or exclusive prefix sum of `x`.
///
/// # Examples
/// ```
/// use kiln::kernels::scan::{scan, ScanKind};
/// # fn main() -> kiln::Result<()> {
/// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
/// let s = dev.stream();
/// let x = s.upload(&[1u32, 2, 3, 4])?;
/// let mut y = s.alloc::<u32>(4)?;
/// scan(&s, ScanKind::Exclusive, &x, &mut y)?;
/// assert_eq!(y.to_vec()?, [0, 1, 3, 6]);
/// # Ok(()) }
/// ```
pub fn scan<T: Number>(stream: &Stream, kind: ScanKind, x: &impl View<T>, y: &mut impl ViewMut<T>) -> Result<()> {
    let (x, y) = (x.view(), y.view_mut());
    dispatch!(stream, Stream, s => {
        kiln_kernels::scan::scan(s, kind, &on("scan: x", s, x)?, &mut on_mut("scan: y", s, y)?)
    })
}

/// The prefix sum of `x`, in place.
pub fn scan_in_place<T: Number>(stream: &Stream, kind: ScanKind, x: &mut impl ViewMut<T>) -> Result<()> {
    let x = x.view_mut();
    dispatch!(stream, Stream, s => kiln_kernels::scan::scan_in_place(s, kind, &mut on_mut("scan_in_place: x", s, x)?))
}

/// A prefix sum restarting wherever `flags[i]` is non-zero.
pub fn segmented_scan<T: Number>(
    stream: &Stream,
    kind: ScanKind,
    x: &impl View<T>,
    flags: &impl View<u32>,
    y: &mut impl ViewMut<T>,
) -> Result<()> {
    let (x, flags, y) = (x.view(), flags.view(), y.view_mut());
    dispatch!(stream, Stream, s => kiln_kernels::scan::segmented_scan(
        s,
        kind,
        &on("segmented_scan: x", s, x)?,
        &on("segmented_scan: flags", s, flags)?,
        &mut on_mut("segmented_scan: y", s, y)?,
    ))
}
