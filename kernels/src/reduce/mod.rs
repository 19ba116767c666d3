//! Reductions: sum, product, min, max and dot over a whole array; argmin and
//! argmax; and folds along either axis of a row-major 2D array (NumPy's
//! `sum`, `min`, `argmin`, `sum(axis=...)`, Thrust's `reduce`).
//!
//! # Semantics, the same on every backend
//! - **Types**: `i32`, `u32`, `f32`, `f64`, `f16` and `bf16`. The 16-bit
//!   floats accumulate in `f32`: each element is widened exactly, sums,
//!   products and dot products are computed as `f32` ones of the same
//!   values would be, and the result is rounded once to the input's type
//!   (so a sum past its range is infinite). Their min, max, argmin and
//!   argmax are exact. They run as a widening pass and the `f32` kernels.
//! - **Integers** (`i32`, `u32`): sums, products and dot products wrap; the
//!   results are exact modulo 2^32.
//! - **NaN**: a sum, product or dot product with a NaN input is NaN (IEEE).
//!   `Min` and `Max` propagate NaN, as NumPy's and CuPy's `min`/`max` do.
//!   [`argmin`]/[`argmax`] give the index of the first NaN if there is one,
//!   else the first index of the extreme value (the smallest index on ties).
//! - **Infinities** follow IEEE: `inf + -inf` and `0 * inf` are NaN.
//! - **Signed zeros** compare equal: the minimum of `[0.0, -0.0]` may be
//!   either zero (argmin gives index 0, the first of the tie).
//! - **Empty input**: the sum is 0, the product 1, the dot product 0;
//!   `Min`, `Max`, argmin and argmax of nothing are `Err(InvalidArgument)`,
//!   as NumPy raises.
//! - **Float rounding**: each backend adds in its own order (GPUs in a tree
//!   of partial sums, the CPU in f64 for `f32` and with compensation for
//!   `f64`), so float sums agree to within a few `eps * log2(n) * sum(|x|)`,
//!   not bit for bit. A sum whose partial sums overflow may give `inf` on a
//!   GPU where the CPU's f64 accumulation stays finite.
//!
//! # How (CUDA)
//! One pass over the input with 16-byte loads, UNROLL of them in flight per
//! thread, in a grid of 4 blocks per SM; warp shuffles fold each block into
//! one partial, and a one-block launch folds the partials. Memory-bound at
//! `size_of::<T>()` bytes read per element (two arrays for dot). WGSL uses
//! the same two passes with workgroup-memory trees; the CPU folds with rayon.
//!
//! # Examples
//! ```
//! use kiln_core::Device;
//! use kiln_cpu::Cpu;
//! use kiln_kernels::reduce::{reduce, ReduceOp};
//! # fn main() -> kiln_core::Result<()> {
//! let dev = Device::<Cpu>::open(0)?;
//! let s = dev.stream();
//! let x = s.upload(&[3.0f32, -1.0, 4.0, 1.5])?;
//! assert_eq!(reduce(&s, ReduceOp::Sum, &x)?, 7.5);
//! assert_eq!(reduce(&s, ReduceOp::Min, &x)?, -1.0);
//! assert!(reduce(&s, ReduceOp::Max, &s.upload(&[1.0f32, f32::NAN])?)?.is_nan());
//! # Ok(()) }
//! ```

mod arg;
mod axis;
mod cpu;
mod half;
mod launch;
mod plan;
mod program;

use kiln_core::{Backend, DType, Error, Result, Stream, View, ViewMut};

use crate::Number;
use crate::widen::{check_widened, is_half};

pub use arg::{ArgOp, arg_reduce_into, argmax, argmin};
pub use axis::reduce_axis;
pub(crate) use cpu::{Compensated, is_nan};
use launch::fold_into;
use plan::first_pass_blocks;
pub(crate) use plan::resident_blocks;
use program::reduce_cuda;
pub(crate) use program::wgsl_is_nan;

/// A fold over many elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum (wrapping for integers); 0 for no elements.
    Sum,
    /// The product (wrapping for integers); 1 for no elements.
    Product,
    /// The smallest element; NaN if any element is NaN.
    Min,
    /// The largest element; NaN if any element is NaN.
    Max,
}

crate::code::codes!(ReduceOp, "reduction", "operation");

impl ReduceOp {
    /// Every operation.
    pub const ALL: [ReduceOp; 4] = [ReduceOp::Sum, ReduceOp::Product, ReduceOp::Min, ReduceOp::Max];

    /// Lower-case name ("sum").
    pub const fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Product => "product",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
        }
    }

    /// Whether the fold of no elements is defined (sum and product have an identity).
    pub const fn has_identity(self) -> bool {
        matches!(self, ReduceOp::Sum | ReduceOp::Product)
    }

    /// The value folding starts from: 0, 1, and for min and max the largest
    /// and smallest values of `T` (infinities for floats).
    ///
    /// # Examples
    /// ```
    /// use kiln_kernels::reduce::ReduceOp;
    /// assert_eq!(ReduceOp::Product.identity::<i32>(), 1);
    /// assert_eq!(ReduceOp::Min.identity::<f32>(), f32::INFINITY);
    /// assert_eq!(ReduceOp::Max.identity::<u32>(), 0);
    /// ```
    pub fn identity<T: Number>(self) -> T {
        cpu::identity_of(self)
    }

    /// `a` folded with `b` (what the kernels compute pairwise).
    ///
    /// # Examples
    /// ```
    /// use kiln_kernels::reduce::ReduceOp;
    /// assert_eq!(ReduceOp::Sum.apply(i32::MAX, 1), i32::MIN);
    /// assert!(ReduceOp::Min.apply(1.0f64, f64::NAN).is_nan());
    /// ```
    pub fn apply<T: Number>(self, a: T, b: T) -> T {
        cpu::fold_pair(self, a, b)
    }

    /// The WGSL fold of `a` and `b` (`is_nan` from [`wgsl_is_nan`]).
    fn wgsl(self) -> &'static str {
        match self {
            ReduceOp::Sum => "a + b",
            ReduceOp::Product => "a * b",
            ReduceOp::Min => "select(b, a, is_nan(a) || a < b)",
            ReduceOp::Max => "select(b, a, is_nan(a) || a > b)",
        }
    }

    fn host<T: Number>(self) -> kiln_core::HostFn {
        match self {
            ReduceOp::Sum => cpu::fold::<T, 0>,
            ReduceOp::Product => cpu::fold::<T, 1>,
            ReduceOp::Min => cpu::fold::<T, 2>,
            ReduceOp::Max => cpu::fold::<T, 3>,
        }
    }
}

impl std::fmt::Display for ReduceOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `Err(Unsupported)` unless `T` is one of the types the reductions, scans
/// and compactions are written for: `i32`, `u32`, `f32`, `f64`.
pub(crate) fn check_numeric<B: Backend, T: Number>(what: &str) -> Result<()> {
    match T::DTYPE {
        DType::I32 | DType::U32 | DType::F32 | DType::F64 => Ok(()),
        d => Err(Error::unsupported(B::KIND, format!("{what} on {d}"), "defined for i32, u32, f32 and f64")),
    }
}

/// [`check_numeric`], and the 16-bit floats too: the types the reductions
/// take (the 16-bit ones through `half.rs`).
fn check_reducible<B: Backend, T: Number>(what: &str) -> Result<()> {
    if is_half(T::DTYPE) { Ok(()) } else { check_numeric::<B, T>(what) }
}

/// `Err(InvalidArgument)` for a fold of nothing that has no value.
fn check_empty(op: ReduceOp, n: usize, what: &str) -> Result<()> {
    if n == 0 && !op.has_identity() {
        return Err(Error::invalid(
            what,
            format!("the {op} of an empty array is undefined (the fold has no identity element)"),
        ));
    }
    Ok(())
}

fn check_out_len(what: &str, len: usize) -> Result<()> {
    if len == 1 {
        Ok(())
    } else {
        Err(Error::LengthMismatch { what: format!("{what}: output (one element)"), expected: 1, actual: len })
    }
}

/// Copy the one element of `out` to the host; blocks until it is there.
fn read_one<B: Backend, T: Number>(stream: &Stream<B>, out: &impl View<B, T>) -> Result<T> {
    let mut v = [T::default()];
    stream.copy_to_host(out, &mut v)?;
    Ok(v[0])
}

/// The fold of every element of `x` by `op`, on `stream`, left in `out`
/// (a view of one element) for later work on the device; returns at once.
///
/// An empty `x` gives the identity (0 for sum, 1 for product) and is
/// `Err(InvalidArgument)` for min and max.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::reduce::{reduce_into, ReduceOp};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[2u32, 3, 7])?;
/// let mut out = s.upload(&[0u32; 3])?;
/// reduce_into(&s, ReduceOp::Product, &x, &mut out.slice_mut(1..2)?)?;
/// assert_eq!(out.to_vec()?, vec![0, 42, 0]);
/// # Ok(()) }
/// ```
pub fn reduce_into<B: Backend, T: Number>(
    stream: &Stream<B>,
    op: ReduceOp,
    x: &impl View<B, T>,
    out: &mut impl ViewMut<B, T>,
) -> Result<()> {
    let what = format!("reduce {op}");
    check_reducible::<B, T>(&what)?;
    let n = x.view().len();
    check_out_len(&what, out.view().len())?;
    check_empty(op, n, &what)?;
    check_widened(stream, T::DTYPE, &what)?;
    if n == 0 {
        return stream.fill(out, op.identity::<T>());
    }
    if is_half(T::DTYPE) {
        return half::fold_into(stream, op, x.view(), out.view_mut());
    }
    fold_into(stream, op, x.view(), out.view_mut())
}

/// The fold of every element of `x` by `op`, computed on `stream` and
/// returned to the host; blocks until the result is there.
///
/// See the [module documentation](self) for NaN, empty input and rounding.
///
/// # Examples
/// ```
/// use kiln_core::{Device, Error};
/// use kiln_cpu::Cpu;
/// use kiln_kernels::reduce::{reduce, ReduceOp};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// assert_eq!(reduce(&s, ReduceOp::Sum, &s.upload(&[i32::MAX, 1])?)?, i32::MIN); // wraps
/// let empty = s.alloc::<f64>(0)?;
/// assert_eq!(reduce(&s, ReduceOp::Product, &empty)?, 1.0);
/// assert!(matches!(reduce(&s, ReduceOp::Max, &empty), Err(Error::InvalidArgument { .. })));
/// // 16-bit floats accumulate in f32: 4096 + 1 + 1 rounds to 4098 once, at the end.
/// let halves = s.upload(&[kiln_core::f16::from_f32(4096.0), kiln_core::f16::ONE, kiln_core::f16::ONE])?;
/// assert_eq!(reduce(&s, ReduceOp::Sum, &halves)?, kiln_core::f16::from_f32(4098.0));
/// # Ok(()) }
/// ```
pub fn reduce<B: Backend, T: Number>(stream: &Stream<B>, op: ReduceOp, x: &impl View<B, T>) -> Result<T> {
    check_reducible::<B, T>(&format!("reduce {op}"))?;
    let n = x.view().len();
    check_empty(op, n, &format!("reduce {op}"))?;
    if n == 0 {
        return Ok(op.identity::<T>());
    }
    let mut out = stream.alloc::<T>(1)?;
    reduce_into(stream, op, x, &mut out)?;
    read_one(stream, &out)
}

/// `sum(x[i] * y[i])` on `stream`, left in `out` (a view of one element);
/// returns at once. `x` and `y` must have the same length; empty gives 0.
/// On GPUs each product and sum may fuse into one rounding.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let (x, y) = (s.upload(&[1.0f64, 2.0, 3.0])?, s.upload(&[4.0f64, 5.0, 6.0])?);
/// let mut out = s.alloc::<f64>(1)?;
/// kiln_kernels::reduce::dot_into(&s, &x, &y, &mut out)?;
/// assert_eq!(out.to_vec()?, vec![32.0]);
/// # Ok(()) }
/// ```
pub fn dot_into<B: Backend, T: Number>(
    stream: &Stream<B>,
    x: &impl View<B, T>,
    y: &impl View<B, T>,
    out: &mut impl ViewMut<B, T>,
) -> Result<()> {
    check_reducible::<B, T>("dot")?;
    let (x, y) = (x.view(), y.view());
    let n = x.len();
    if y.len() != n {
        return Err(Error::LengthMismatch { what: "dot: y vs x".into(), expected: n, actual: y.len() });
    }
    check_out_len("dot", out.view().len())?;
    check_widened(stream, T::DTYPE, "dot")?;
    if n == 0 {
        return stream.fill(out, T::from_index(0));
    }
    if is_half(T::DTYPE) {
        return half::dot_into(stream, x, y, out.view_mut());
    }
    launch::dot_into(stream, x, y, out.view_mut())
}

/// `sum(x[i] * y[i])`, computed on `stream` and returned to the host;
/// blocks until the result is there.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let (x, y) = (s.upload(&[1i32, -2, 3])?, s.upload(&[4i32, 5, 6])?);
/// assert_eq!(kiln_kernels::reduce::dot(&s, &x, &y)?, 12);
/// # Ok(()) }
/// ```
pub fn dot<B: Backend, T: Number>(stream: &Stream<B>, x: &impl View<B, T>, y: &impl View<B, T>) -> Result<T> {
    let mut out = stream.alloc::<T>(1)?;
    dot_into(stream, x, y, &mut out)?;
    read_one(stream, &out)
}
