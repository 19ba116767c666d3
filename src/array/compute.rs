//! What an [`Array`] computes on the run-time tier: reductions fusing their
//! producer, argmin/argmax, kiln's patterns (`dot`, `cumsum`, `matmul`,
//! `sort`), in-place updates and Philox random values; each forwards to
//! the typed array on its backend.

use std::ops;

use kiln_core::{Element, Result};
use kiln_kernels::Number;
use kiln_kernels::array::{Array as Typed, Fold};
use kiln_kernels::matmul::{MatmulElement, Precision};
use kiln_kernels::random::{Normal, Philox, Uniform};
use kiln_kernels::sort::{SortKey, SortOrder};

use super::expr::{lower_into, on_typed};
use super::{Array, ArrayExpr, IntoExpr, wrapped};
use crate::runtime::{ExprArm, Stream, Tier, dispatch, mismatch};

/// Methods on [`ArrayExpr`], and on [`Array`] through its expression.
macro_rules! reductions {
    ($bound:path; $($(#[$doc:meta])* $name:ident($($arg:ident: $ty:ty),*) -> $out:ty => $map:expr;)*) => {
        impl<T: $bound> ArrayExpr<T> {
            $($(#[$doc])* pub fn $name(&self $(, $arg: $ty)*) -> Result<$out> {
                on_typed!(self.inner(), e => e.$name($($arg),*).map($map))
            })*
        }
        impl<T: $bound> Array<T> {
            $($(#[$doc])* pub fn $name(&self $(, $arg: $ty)*) -> Result<$out> {
                self.expr().$name($($arg),*)
            })*
        }
    };
}

reductions! { Element;
    /// Fold every element with `fold` (the expression computed in the same
    /// pass); blocks until the value is on the host.
    fold(fold: Fold) -> T => |v| v;
    /// Fold along `axes` (each once), giving an array of the other axes' shape.
    fold_axes(fold: Fold, axes: &[usize]) -> Array<T> => B::wrap_array;
    /// The sum of every element.
    sum() -> T => |v| v;
    /// The mean of every element (floats).
    mean() -> T => |v| v;
    /// The smallest element, NaN ignored (an `Err` for no elements).
    min() -> T => |v| v;
    /// The largest element, NaN ignored (an `Err` for no elements).
    max() -> T => |v| v;
    /// The product of every element.
    prod() -> T => |v| v;
    /// The row-major position of the first largest element (NaN passed over).
    argmax() -> usize => |v| v;
    /// The row-major position of the first smallest element (NaN passed over).
    argmin() -> usize => |v| v;
    /// Positions of the first largest element along `axis`, as `u32`.
    argmax_axis(axis: usize) -> Array<u32> => B::wrap_array;
    /// Positions of the first smallest element along `axis`, as `u32`.
    argmin_axis(axis: usize) -> Array<u32> => B::wrap_array;
}

reductions! { Number;
    /// The variance of every element (floats; NumPy's, `ddof` 0), two passes.
    var() -> T => |v| v;
    /// The standard deviation of every element (floats).
    std() -> T => |v| v;
    /// The variance along `axes` (floats), two passes.
    var_axes(axes: &[usize]) -> Array<T> => B::wrap_array;
    /// The standard deviation along `axes` (floats).
    std_axes(axes: &[usize]) -> Array<T> => B::wrap_array;
}

impl<T: Number> Array<T> {
    /// The inner product of two 1-d arrays of one length (kiln's `dot`);
    /// blocks. `Err` naming both devices where they differ.
    pub fn dot(&self, other: &Array<T>) -> Result<T> {
        dispatch!(self, Array, a => a.dot(same::<B, T>("Array::dot", a, other)?))
    }

    /// The running sum in row-major order (kiln's inclusive scan), 1-d, as
    /// NumPy's `cumsum` without an axis.
    pub fn cumsum(&self) -> Result<Array<T>> {
        wrapped!(self, a => a.cumsum())
    }
}

impl<T: MatmulElement> Array<T> {
    /// The matrix product with NumPy's `matmul` semantics (stacks of
    /// matrices in the last two axes, leading axes broadcast, 1-d operands
    /// promoted), computed exactly; of the accumulator type.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> kiln::Result<()> {
    /// let s = kiln::Device::open(kiln::BackendKind::Cpu, 0)?.stream();
    /// let a = kiln::Array::from_vec(&s, &[2, 2, 2], &[1.0f32, 0., 0., 1., 2., 0., 0., 2.])?;
    /// let v = kiln::Array::from_vec(&s, &[2], &[3.0f32, 4.0])?;
    /// assert_eq!(a.matmul(&v)?.to_vec()?, [3.0, 4.0, 6.0, 8.0]); // shape [2, 2]
    /// # Ok(()) }
    /// ```
    pub fn matmul(&self, other: &Array<T>) -> Result<Array<T::Acc>> {
        self.matmul_with(other, Precision::Exact)
    }

    /// [`matmul`](Self::matmul) in the arithmetic `precision` allows (TF32
    /// or bf16 for f32 products on CUDA's vendor path; exact elsewhere).
    pub fn matmul_with(&self, other: &Array<T>, precision: Precision) -> Result<Array<T::Acc>> {
        dispatch!(self, Array, a => a
            .matmul_with(same::<B, T>("Array::matmul", a, other)?, precision)
            .map(B::wrap_array))
    }
}

impl<T: SortKey> Array<T> {
    /// The elements sorted along the last axis (kiln's radix sort, stable;
    /// a 1-d array whole), in a new array of this shape.
    pub fn sort(&self, order: SortOrder) -> Result<Array<T>> {
        wrapped!(self, a => a.sort(order))
    }

    /// The elements sorted along `axis`, each lane on its own (NumPy's
    /// `sort(a, axis)`), in a new array of this shape.
    ///
    /// # Examples
    /// ```
    /// use kiln::array::Array;
    /// use kiln::kernels::sort::SortOrder;
    /// # fn main() -> kiln::Result<()> {
    /// let s = kiln::Device::open(kiln::BackendKind::Cpu, 0)?.stream();
    /// let a = Array::from_vec(&s, &[2, 3], &[3i32, 1, 2, 0, 5, -1])?;
    /// assert_eq!(a.sort_axis(0, SortOrder::Ascending)?.to_vec()?, [0, 1, -1, 3, 5, 2]);
    /// # Ok(()) }
    /// ```
    pub fn sort_axis(&self, axis: usize, order: SortOrder) -> Result<Array<T>> {
        wrapped!(self, a => a.sort_axis(axis, order))
    }
}

impl<T: Uniform> Array<T> {
    /// A new array of `shape` holding `rng`'s next uniform values (the same
    /// bits on every backend; see [`Philox`]); `rng` moves past them.
    ///
    /// # Examples
    /// ```
    /// use kiln::array::Array;
    /// use kiln::kernels::random::Philox;
    /// # fn main() -> kiln::Result<()> {
    /// let s = kiln::Device::open(kiln::BackendKind::Cpu, 0)?.stream();
    /// let mut rng = Philox::new(42);
    /// let u = Array::<f32>::uniform(&s, &mut rng, &[256, 4])?;
    /// assert!(u.min()? >= 0.0 && u.max()? < 1.0);
    /// assert_eq!(rng.counter(), 256); // four f32 values per block
    /// # Ok(()) }
    /// ```
    pub fn uniform(stream: &Stream, rng: &mut Philox, shape: &[usize]) -> Result<Self> {
        dispatch!(stream, Stream, s => rng.uniform::<B, T>(s, shape).map(B::wrap_array))
    }
}

impl<T: Normal> Array<T> {
    /// A new array of `shape` holding `rng`'s next standard normal values
    /// (the same bits on every backend; see [`Philox::fill_normal`]); `rng`
    /// moves past them.
    pub fn normal(stream: &Stream, rng: &mut Philox, shape: &[usize]) -> Result<Self> {
        dispatch!(stream, Stream, s => rng.normal::<B, T>(s, shape).map(B::wrap_array))
    }
}

/// `other`'s typed array, of `a`'s backend, or the error naming both.
pub(super) fn same<'o, B: Tier, T: Element>(
    what: &str,
    a: &Typed<B, T>,
    other: &'o Array<T>,
) -> Result<&'o Typed<B, T>> {
    other.typed::<B>().ok_or_else(|| {
        let theirs = dispatch!(other, Array, o => crate::runtime::describe(o.stream().device()));
        mismatch(what, crate::runtime::describe(a.stream().device()), theirs)
    })
}

impl<T: Element> Array<T> {
    /// Set every element to `value` (an expression, array or scalar
    /// broadcast to this shape), computed by one generated kernel;
    /// copy-on-write, as the typed [`assign`](kiln_kernels::array::Array::assign).
    /// `Err`, with the array unchanged, where `value` does not broadcast to
    /// this shape, reads arrays of another backend, cannot run, or the
    /// array holds the error of a failed operator (that error, still held).
    ///
    /// The operators `a += x`, `a -= x`, `a *= x`, `a /= x`, `a %= x` are
    /// `assign` of `&a + x` and so on. One that fails keeps the array's old
    /// values, readable as ever, and holds the error in this array alone
    /// (not its clones or views): [`check`](Self::check) reports it until
    /// [`take_error`](Self::take_error) clears it, and meanwhile later
    /// operators on the array do nothing, so the values stay those from
    /// before the first failure.
    pub fn assign(&mut self, value: impl IntoExpr<T>) -> Result<()> {
        let value = value.into_expr();
        dispatch!(self, Array, a => a.assign(lower_into::<B, T>(value)))
    }
}

macro_rules! assign_operators {
    ($($trait:ident $method:ident),*) => {$(
        impl<T: Element, R: IntoExpr<T>> ops::$trait<R> for Array<T> {
            fn $method(&mut self, other: R) {
                let other = other.into_expr();
                dispatch!(self, Array, a => ops::$trait::$method(a, lower_into::<B, T>(other)))
            }
        }
    )*};
}

assign_operators!(AddAssign add_assign, SubAssign sub_assign, MulAssign mul_assign, DivAssign div_assign,
    RemAssign rem_assign);
