//! The patterns the suite checks, one file per group of the kernel library.

mod elementwise;
mod fill;
mod map;
mod memory;

pub use elementwise::{Axpy, Binary, MismatchedLengths};
pub use fill::{Fill, Sequence};
pub use map::Map;
pub use memory::{AsyncRoundTrip, CopyRange, FillView, RoundTrip};

use kiln_core::{Backend, Buffer, Result};

use crate::{Expected, Failure, Sample, Tolerance};

/// `Err` unless `buffer` still holds exactly `data`: inputs must come out of
/// a pattern unchanged, and refused calls must touch nothing.
fn unchanged<B: Backend, T: Sample>(what: &str, buffer: &Buffer<B, T>, data: &[T]) -> Result<(), Failure> {
    let got = buffer.to_vec()?;
    crate::compare(what, &Expected::new(data.to_vec(), Tolerance::Bits), &got).map_err(Failure::Mismatch)
}
