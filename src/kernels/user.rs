//! User kernels written once in Rust (see [`kiln_kernels::user`]), run on
//! the run-time tier: the kernels are built as in the typed tier, and
//! these functions launch them on a [`Stream`] of any backend.
//!
//! # Examples
//! ```
//! use kiln::kernels::user::{expr::var, launch, reduce, Elementwise, Reduction};
//! use kiln::{Args, DType};
//! # fn main() -> kiln::Result<()> {
//! let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
//! let s = dev.stream();
//! let axpy = Elementwise::new("axpy")
//!     .scalar("a", DType::F32)
//!     .input("x", DType::F32)
//!     .input("y", DType::F32)
//!     .output("z", DType::F32)
//!     .set("z", var("a") * var("x") + var("y"))
//!     .build()?;
//! let (x, y) = (s.upload(&[1.0f32, 2.0])?, s.upload(&[10.0f32, 20.0])?);
//! let mut z = s.alloc::<f32>(2)?;
//! launch(&s, &axpy, Args::new().arg(3.0f32).arg(&x).arg(&y).arg(&mut z))?;
//! assert_eq!(z.to_vec()?, [13.0, 26.0]);
//!
//! let sum = Reduction::new("sum", DType::F32).input("z", DType::F32)
//!     .map(var("z")).reduce(var("a") + var("b")).identity(0).build()?;
//! assert_eq!(reduce::<f32>(&s, &sum, Args::new().arg(&z))?, 39.0);
//! # Ok(()) }
//! ```

use kiln_core::{Element, Result};

use super::{dispatch, on_mut};
use crate::runtime::{Args, Stream, ViewMut};

pub use kiln_kernels::expr;
pub use kiln_kernels::scan::ScanKind;
pub use kiln_kernels::user::{
    Elementwise, ElementwiseKernel, Reduction, ReductionKernel, Scan, ScanKernel, UserKernel,
};

/// Run `kernel` on `stream` over `args`, given in declaration order (see
/// [`ElementwiseKernel::launch`]).
pub fn launch(stream: &Stream, kernel: &ElementwiseKernel, args: Args<'_>) -> Result<()> {
    let what = || format!("user kernel `{}`", kernel.name());
    dispatch!(stream, Stream, s => kernel.launch(s, args.into_typed::<B>(what, s)?))
}

/// Fold every element into `out` (one element), on the device; returns at
/// once (see [`ReductionKernel::reduce_into`]).
pub fn reduce_into<T: Element>(
    stream: &Stream,
    kernel: &ReductionKernel,
    args: Args<'_>,
    out: &mut impl ViewMut<T>,
) -> Result<()> {
    let what = || format!("user kernel `{}`", kernel.name());
    let out = out.view_mut();
    dispatch!(stream, Stream, s => kernel.reduce_into(
        s,
        args.into_typed::<B>(what, s)?,
        &mut on_mut(&format!("user kernel `{}`: output", kernel.name()), s, out)?,
    ))
}

/// Fold every element and return the result on the host; blocks (see
/// [`ReductionKernel::reduce`]).
pub fn reduce<T: Element>(stream: &Stream, kernel: &ReductionKernel, args: Args<'_>) -> Result<T> {
    let what = || format!("user kernel `{}`", kernel.name());
    dispatch!(stream, Stream, s => kernel.reduce::<B, T>(s, args.into_typed::<B>(what, s)?))
}

/// Fold along `axis` of the inputs seen as row-major `rows x cols` arrays
/// into `out` (see [`ReductionKernel::reduce_axis`]).
pub fn reduce_axis<T: Element>(
    stream: &Stream,
    kernel: &ReductionKernel,
    args: Args<'_>,
    rows: usize,
    cols: usize,
    axis: usize,
    out: &mut impl ViewMut<T>,
) -> Result<()> {
    let what = || format!("user kernel `{}`", kernel.name());
    let out = out.view_mut();
    dispatch!(stream, Stream, s => kernel.reduce_axis(
        s,
        args.into_typed::<B>(what, s)?,
        rows,
        cols,
        axis,
        &mut on_mut(&format!("user kernel `{}`: output", kernel.name()), s, out)?,
    ))
}

/// Scan every element into `out`, inclusive or exclusive (see [`ScanKernel::scan`]).
pub fn scan<T: Element>(
    stream: &Stream,
    kernel: &ScanKernel,
    kind: ScanKind,
    args: Args<'_>,
    out: &mut impl ViewMut<T>,
) -> Result<()> {
    let what = || format!("user kernel `{}`", kernel.name());
    let out = out.view_mut();
    dispatch!(stream, Stream, s => kernel.scan(
        s,
        kind,
        args.into_typed::<B>(what, s)?,
        &mut on_mut(&format!("user kernel `{}`: output", kernel.name()), s, out)?,
    ))
}
