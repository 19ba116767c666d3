//! The patterns the suite checks, one file (or, for reduce and user, one folder) per
//! group of the kernel library. Each group's `add_*` function adds its
//! cases under the group name it is given; the list of groups, in
//! [`for_each_group!`](crate::for_each_group), names them. `inputs` and
//! `sums` hold what several groups share: data at a misalignment, and the
//! reference for float sums with its bound.

/// Add to `group` of `$c` the case `$pattern` on each element type listed:
/// `$run::<$b, T>($variant, device, ctx)` for each such `T`.
macro_rules! each_type {
    ($c:expr, $group:expr, $pattern:expr, $run:ident::<$b:ty>($variant:expr); $($t:ty),*) => {$(
        $c.one($group, $pattern.clone(), <$t as Element>::DTYPE, move |d, ctx| $run::<$b, $t>($variant, d, ctx));
    )*};
}

mod array;
mod array_fused;
mod array_promote;
mod array_routes;
mod compact;
mod elementwise;
mod fft;
mod fill;
mod histogram;
mod image;
mod inputs;
mod linalg;
mod map;
mod matmul;
mod matmul_rounded;
mod matmul_scaled;
mod memory;
mod random;
mod reduce;
mod scan;
mod sort;
mod sums;
mod transpose;
mod user;

pub use array::register as add_array;
pub use compact::register as add_compact;
pub use elementwise::{Axpy, Binary, MismatchedLengths, register as add_elementwise};
pub use fft::register as add_fft;
pub use fill::{Fill, Sequence, register_fill as add_fill, register_sequence as add_sequence};
pub use histogram::register as add_histogram;
pub use image::register as add_image;
pub use linalg::register as add_linalg;
pub use map::{Map, register as add_map};
pub use memory::{AsyncRoundTrip, CopyRange, FillView, RoundTrip, register as add_memory};
pub use random::register as add_random;
pub use reduce::register as add_reduce;
pub use scan::register as add_scan;
pub use sort::register as add_sort;
pub use transpose::register as add_transpose;
pub use user::register as add_user;

use kiln_core::{Backend, Buffer, Result};

use crate::{Expected, Failure, Sample, Tolerance};

/// Whether `l op r` holds, for the comparison operators of the generated
/// expressions ("<", "<=", ">", ">=", "==", and "!=" for any other).
fn holds<T: PartialOrd>(op: &str, l: T, r: T) -> bool {
    match op {
        "<" => l < r,
        "<=" => l <= r,
        ">" => l > r,
        ">=" => l >= r,
        "==" => l == r,
        _ => l != r,
    }
}

/// `Err` unless `buffer` still holds exactly `data`: inputs must come out of
/// a pattern unchanged, and refused calls must touch nothing.
fn unchanged<B: Backend, T: Sample>(what: &str, buffer: &Buffer<B, T>, data: &[T]) -> Result<(), Failure> {
    let got = buffer.to_vec()?;
    crate::compare(what, &Expected::new(data.to_vec(), Tolerance::Bits), &got).map_err(Failure::Mismatch)
}

/// Add the matmul cases to `group`: every strategy and dtype, laid-out
/// batches, precision modes and refusals (`matmul.rs`), then the products
/// rounded to their 16-bit inputs' type (`matmul_rounded.rs`), and the
/// scaled products of 8-bit floats (`matmul_scaled.rs`).
pub fn add_matmul<B: kiln_core::Backend>(c: &mut crate::Cases<B>, group: &'static str) {
    matmul::register(c, group);
    matmul_rounded::register(c, group);
    matmul_scaled::register(c, group);
}
