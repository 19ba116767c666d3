//! [`Array<T>`]: n-d arrays on a device of any backend, the run-time
//! tier's form of [`typed::kernels::array::Array`](kiln_kernels::array::Array)
//! (CuPy's `ndarray`, PyCUDA's `GPUArray`).
//!
//! Everything the typed array does is here with a [`Stream`] of the
//! run-time tier in place of the typed one: views without copies, lazy
//! expressions run as one generated kernel ([`ArrayExpr`]), reductions that
//! fuse their producer, in-place operators, kiln's patterns (`dot`,
//! `matmul`, `sort`, `cumsum`) and Philox random values. An expression
//! reading arrays of two backends is an `Err` naming both when it runs; a
//! scalar takes the backend of the arrays it meets.
//!
//! # Examples
//! ```
//! use kiln::array::{where_, Array};
//! use ndarray::array;
//! # fn main() -> kiln::Result<()> {
//! let s = kiln::Device::open(kiln::BackendKind::Cpu, 0)?.stream(); // or Device::best()
//! let a = Array::from_ndarray(&s, &array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]])?;
//! let row = Array::from_ndarray(&s, &array![10.0f32, 20.0, 30.0])?;
//! let z = (&a * 2.0 + &row).eval()?; // one kernel; the row repeats down
//! assert_eq!(z.to_vec()?, [12.0, 24.0, 36.0, 18.0, 30.0, 42.0]);
//! assert_eq!(a.max()?, 6.0);
//! assert_eq!(a.argmin_axis(1)?.to_vec()?, [0, 0]);
//! let mut b = a.t().to_contiguous()?;
//! b *= 10.0;
//! assert_eq!(b.to_string(), "[[10, 40],\n [20, 50],\n [30, 60]]");
//! assert_eq!(where_(a.gt(2.5), 1.0, 0.0).sum()?, 4.0);
//! # Ok(()) }
//! ```

mod compute;
mod expr;
mod fft;
mod linalg;

use std::fmt;

use kiln_core::{Element, Error, Result};
use kiln_kernels::Number;
use kiln_kernels::array::Array as Typed;
use ndarray::{ArrayBase, ArrayD, Data, Dimension, SliceInfoElem};

pub use crate::runtime::Array;
use crate::runtime::{Buffer, BufferView, Device, Stream, Tier, dispatch};
pub use expr::{ArrayExpr, IntoExpr, Mask, promote, where_};
pub use kiln_kernels::array::{Fold, Layout, MAX_DIMS, Promote, broadcast_shapes};

/// `$body` on the typed array of `$array`, with its result wrapped back
/// into the run-time tier.
macro_rules! wrapped {
    ($array:expr, $a:ident => $body:expr) => {
        dispatch!($array, Array, $a => $body.map(B::wrap_array))
    };
}
pub(crate) use wrapped;

impl<T: Element> Array<T> {
    /// The run-time array of a typed one.
    pub fn from_typed<B: Tier>(array: Typed<B, T>) -> Self {
        B::wrap_array(array)
    }

    /// The typed array, if this one is of backend `B`.
    pub fn typed<B: Tier>(&self) -> Option<&Typed<B, T>> {
        B::array(self)
    }

    /// `buffer` seen as `shape` in row-major order; `Err` when the lengths differ.
    pub fn from_buffer(buffer: Buffer<T>, shape: &[usize]) -> Result<Self> {
        dispatch!(buffer, Buffer, b => Typed::from_buffer(b, shape).map(B::wrap_array))
    }

    /// A device copy of `data`, shaped `shape` (row-major), on `stream`.
    pub fn from_vec(stream: &Stream, shape: &[usize], data: &[T]) -> Result<Self> {
        dispatch!(stream, Stream, s => Typed::from_vec(s, shape, data).map(B::wrap_array))
    }

    /// A device copy of an ndarray array of any memory order, with its shape.
    pub fn from_ndarray<S: Data<Elem = T>, D: Dimension>(stream: &Stream, a: &ArrayBase<S, D>) -> Result<Self> {
        dispatch!(stream, Stream, s => Typed::from_ndarray(s, a).map(B::wrap_array))
    }

    /// An array of `shape` holding `value` everywhere.
    pub fn full(stream: &Stream, shape: &[usize], value: T) -> Result<Self> {
        dispatch!(stream, Stream, s => Typed::full(s, shape, value).map(B::wrap_array))
    }

    /// The extent of each dimension.
    pub fn shape(&self) -> &[usize] {
        dispatch!(self, Array, a => a.shape())
    }

    /// The step between neighbours along each dimension, in elements.
    pub fn strides(&self) -> &[isize] {
        dispatch!(self, Array, a => a.strides())
    }

    /// Shape, strides and offset.
    pub fn layout(&self) -> &Layout {
        dispatch!(self, Array, a => a.layout())
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.layout().len()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the elements are in row-major order one after another.
    pub fn is_standard_layout(&self) -> bool {
        self.layout().is_standard()
    }

    /// The whole buffer the array sees (shared with its views).
    pub fn buffer(&self) -> BufferView<'_, T> {
        dispatch!(self, Array, a => BufferView::from_typed::<B>(kiln_core::View::view(a.buffer())))
    }

    /// The stream the array's work runs on.
    pub fn stream(&self) -> Stream {
        dispatch!(self, Array, a => B::wrap_stream(a.stream().clone()))
    }

    /// The device the array lives on.
    pub fn device(&self) -> Device {
        dispatch!(self, Array, a => B::wrap_device(a.stream().device().clone()))
    }

    /// The view `info` selects (ndarray's `s![]`); `Err` naming the axis
    /// for a bound or index out of range, or a zero step.
    pub fn slice<I: AsRef<[SliceInfoElem]>>(&self, info: I) -> Result<Self> {
        wrapped!(self, a => a.slice(info))
    }

    /// The axes in the order `axes` gives; a view.
    pub fn permuted_axes(&self, axes: &[usize]) -> Result<Self> {
        wrapped!(self, a => a.permuted_axes(axes))
    }

    /// The axes reversed (a matrix transposed); a view.
    pub fn t(&self) -> Self {
        dispatch!(self, Array, a => B::wrap_array(a.t()))
    }

    /// The array repeated along new or extent-1 dimensions to `shape`
    /// (NumPy's broadcasting); a view. `Err` naming both shapes otherwise.
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Self> {
        wrapped!(self, a => a.broadcast_to(shape))
    }

    /// A new axis of extent 1 before `axis`.
    pub fn insert_axis(&self, axis: usize) -> Result<Self> {
        wrapped!(self, a => a.insert_axis(axis))
    }

    /// Axis `axis`, of extent 1, removed.
    pub fn remove_axis(&self, axis: usize) -> Result<Self> {
        wrapped!(self, a => a.remove_axis(axis))
    }

    /// The elements in row-major order seen as `shape`: a view where the
    /// layout allows it, otherwise a copy (NumPy's `reshape`).
    pub fn reshape(&self, shape: &[usize]) -> Result<Self> {
        wrapped!(self, a => a.reshape(shape))
    }

    /// The elements in row-major order in a buffer of their own.
    pub fn to_contiguous(&self) -> Result<Self> {
        wrapped!(self, a => a.to_contiguous())
    }

    /// The elements in row-major order, on the host; blocks.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        dispatch!(self, Array, a => a.to_vec())
    }

    /// An ndarray copy on the host, with this shape; blocks.
    pub fn to_ndarray(&self) -> Result<ArrayD<T>> {
        dispatch!(self, Array, a => a.to_ndarray())
    }

    /// The elements converted to `U` (NumPy's `astype`; see
    /// [`ArrayExpr::astype`]).
    pub fn astype<U: Element>(&self) -> Result<Array<U>> {
        dispatch!(self, Array, a => a.astype::<U>().map(B::wrap_array))
    }

    /// `Ok` unless an in-place operator on this array failed: then the
    /// first such error, every time until [`take_error`](Self::take_error)
    /// clears it. The values are those from before that operator and read
    /// as ever; clones and views hold no error (see [`assign`](Self::assign)).
    pub fn check(&self) -> Result<()> {
        dispatch!(self, Array, a => a.check())
    }

    /// The error a failed in-place operator left in this array, if any,
    /// cleared: afterwards [`check`](Self::check) is `Ok` and operators
    /// update the array again.
    ///
    /// # Examples
    /// ```
    /// use kiln::array::Array;
    /// # fn main() -> kiln::Result<()> {
    /// let s = kiln::Device::open(kiln::BackendKind::Cpu, 0)?.stream();
    /// let mut c = Array::from_vec(&s, &[2, 2], &[1.0f32, 2.0, 3.0, 4.0])?;
    /// c += &Array::from_vec(&s, &[3], &[1.0f32, 2.0, 3.0])?; // does not broadcast
    /// assert!(c.check().unwrap_err().to_string().contains("[3]"));
    /// assert_eq!(c.to_vec()?, [1.0, 2.0, 3.0, 4.0]); // the old values
    /// assert!(c.take_error().is_some() && c.check().is_ok());
    /// # Ok(()) }
    /// ```
    pub fn take_error(&mut self) -> Option<Error> {
        dispatch!(self, Array, a => a.take_error())
    }
}

impl<T: Number> Array<T> {
    /// An array of zeros.
    pub fn zeros(stream: &Stream, shape: &[usize]) -> Result<Self> {
        dispatch!(stream, Stream, s => Typed::zeros(s, shape).map(B::wrap_array))
    }

    /// An array of ones.
    pub fn ones(stream: &Stream, shape: &[usize]) -> Result<Self> {
        dispatch!(stream, Stream, s => Typed::ones(s, shape).map(B::wrap_array))
    }

    /// `start, start + step, ...` below `stop` (above it for a negative
    /// step), NumPy's `arange`.
    pub fn arange(stream: &Stream, start: T, stop: T, step: T) -> Result<Self> {
        dispatch!(stream, Stream, s => Typed::arange(s, start, stop, step).map(B::wrap_array))
    }

    /// `num` values evenly from `start` to `stop`, both included.
    pub fn linspace(stream: &Stream, start: T, stop: T, num: usize) -> Result<Self> {
        dispatch!(stream, Stream, s => Typed::linspace(s, start, stop, num).map(B::wrap_array))
    }

    /// The `n x n` identity matrix.
    pub fn eye(stream: &Stream, n: usize) -> Result<Self> {
        dispatch!(stream, Stream, s => Typed::eye(s, n).map(B::wrap_array))
    }
}

/// The values as ndarray prints them (reading them back from the device).
impl<T: Element + fmt::Display> fmt::Display for Array<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        dispatch!(self, Array, a => fmt::Display::fmt(a, f))
    }
}
