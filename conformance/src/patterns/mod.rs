//! The patterns the suite checks, one file per group of the kernel library.

mod compact;
mod elementwise;
mod fill;
mod histogram;
mod image;
mod map;
mod matmul;
mod memory;
mod reduce;
mod scan;
mod sort;
mod transpose;

pub use compact::register as add_compact;
pub use elementwise::{Axpy, Binary, MismatchedLengths};
pub use fill::{Fill, Sequence};
pub use histogram::register as add_histogram;
pub use image::register as add_image;
pub use map::Map;
pub use matmul::register as add_matmul;
pub use memory::{AsyncRoundTrip, CopyRange, FillView, RoundTrip};
pub use reduce::register as add_reduce;
pub use scan::register as add_scan;
pub use sort::register as add_sort;
pub use transpose::register as add_transpose;

use kiln_core::{Backend, Buffer, Result};

use crate::{Expected, Failure, Sample, Tolerance};

/// `Err` unless `buffer` still holds exactly `data`: inputs must come out of
/// a pattern unchanged, and refused calls must touch nothing.
fn unchanged<B: Backend, T: Sample>(what: &str, buffer: &Buffer<B, T>, data: &[T]) -> Result<(), Failure> {
    let got = buffer.to_vec()?;
    crate::compare(what, &Expected::new(data.to_vec(), Tolerance::Bits), &got).map_err(Failure::Mismatch)
}
