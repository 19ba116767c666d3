//! `Array<B, T>`: an n-d array on a device (CuPy's `ndarray`, PyCUDA's
//! `GPUArray`): a shared buffer seen through a [`Layout`] (shape, strides
//! in elements, offset), made from and turned into `ndarray` arrays.
//!
//! Views share the buffer and copy nothing: [`slice`](Array::slice) with
//! ndarray's `s![]` (steps, negative steps, indices, new axes),
//! [`permuted_axes`](Array::permuted_axes), [`t`](Array::t),
//! [`broadcast_to`](Array::broadcast_to), [`insert_axis`](Array::insert_axis),
//! [`remove_axis`](Array::remove_axis), and [`reshape`](Array::reshape)
//! where the layout allows (a copy otherwise, as NumPy).
//! [`to_contiguous`](Array::to_contiguous) copies any view into row-major
//! order with one generated kernel.
//!
//! # Examples
//! ```
//! use kiln_core::Device;
//! use kiln_cpu::Cpu;
//! use kiln_kernels::array::Array;
//! use ndarray::{array, s};
//! # fn main() -> kiln_core::Result<()> {
//! let s = Device::<Cpu>::open(0)?.stream();
//! let a = Array::from_ndarray(&s, &array![[1, 2, 3], [4, 5, 6]])?;
//! let v = a.slice(s![.., ..;-2])?.t(); // columns 2 and 0, transposed
//! assert_eq!(v.shape(), [2, 2]);
//! assert_eq!(v.to_ndarray()?, array![[3, 6], [1, 4]].into_dyn());
//! assert_eq!(v.to_string(), "[[3, 6],\n [1, 4]]");
//! # Ok(()) }
//! ```

mod arg;
mod assign;
mod create;
mod fft;
mod fuse;
mod gather;
mod layout;
mod lazy;
mod linalg;
mod matmul;
mod operations;
mod promote;
mod random;
mod reduce;
mod routes;
mod sort;

use std::fmt;
use std::sync::Arc;

use kiln_core::{Backend, Buffer, Element, Error, Result, Stream};
use ndarray::{ArrayBase, ArrayD, Data, Dimension, IxDyn, SliceInfoElem};

pub use gather::MAX_DIMS;
pub use layout::{Layout, broadcast_shapes};
pub use lazy::{ArrayExpr, IntoExpr, Mask, where_};
pub use promote::{Promote, promote};
pub use reduce::Fold;

/// An n-d array of `T` on a device of backend `B`. Cloning an array (and
/// taking a view) shares its buffer; the buffer lives while any array
/// seeing it does. Work runs on the stream the buffer was made on.
///
/// # A failed in-place operator
///
/// The operators `+= -= *= /= %=` cannot return an error, so one that
/// fails (shapes that do not broadcast, arrays of another device) leaves
/// the array's values as they were and holds the error in this array
/// alone:
///
/// - [`check`](Self::check) reports it, every time, until
///   [`take_error`](Self::take_error) hands it over and clears it;
/// - while it is held, later in-place updates of this array do nothing
///   (operators) or return it ([`assign`](Self::assign)), so the values
///   are those from before the first failure, never a partial sequence;
/// - reading is unaffected: [`to_vec`](Self::to_vec), views and expressions
///   see those old values;
/// - clones and views, made before or after, do not hold the error.
///
/// Check after a sequence of operators, as after writes to a
/// `BufWriter`:
///
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::array::Array;
/// # fn main() -> kiln_core::Result<()> {
/// let s = Device::<Cpu>::open(0)?.stream();
/// let mut c = Array::from_vec(&s, &[2, 2], &[1.0f32, 2.0, 3.0, 4.0])?;
/// c += &Array::from_vec(&s, &[3], &[1.0f32, 2.0, 3.0])?; // [3] and [2, 2] do not broadcast
/// c *= 10.0; // skipped: an error is held
/// let e = c.check().unwrap_err().to_string();
/// assert!(e.contains("[3]") && e.contains("[2, 2]"), "{e}");
/// assert_eq!(c.to_vec()?, [1.0, 2.0, 3.0, 4.0]); // the old values
/// assert!(c.clone().check().is_ok()); // the error stays with `c`
/// assert!(c.take_error().is_some() && c.check().is_ok());
/// c *= 10.0; // runs again
/// assert_eq!(c.to_vec()?, [10.0, 20.0, 30.0, 40.0]);
/// # Ok(()) }
/// ```
pub struct Array<B: Backend, T: Element> {
    buffer: Arc<Buffer<B, T>>,
    layout: Layout,
    /// Why an in-place operator on this array failed (see
    /// [`assign`](Array::assign)); never copied to clones and views.
    fault: Option<Error>,
}

/// A clone shares the buffer and the layout, not a held error: that
/// belongs to the array whose operator failed.
impl<B: Backend, T: Element> Clone for Array<B, T> {
    fn clone(&self) -> Self {
        self.view(self.layout.clone())
    }
}

impl<B: Backend, T: Element> fmt::Debug for Array<B, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Array").field("dtype", &T::DTYPE).field("layout", &self.layout).finish()
    }
}

impl<B: Backend, T: Element> Array<B, T> {
    /// `buffer` seen as `shape` in row-major order; `Err` when the lengths differ.
    pub fn from_buffer(buffer: Buffer<B, T>, shape: &[usize]) -> Result<Self> {
        let n = layout::checked_len(shape, "Array::from_buffer")?;
        if n != buffer.len() {
            return Err(Error::LengthMismatch {
                what: format!("Array::from_buffer of shape {shape:?}"),
                expected: n,
                actual: buffer.len(),
            });
        }
        Ok(Array { buffer: Arc::new(buffer), layout: Layout::standard(shape)?, fault: None })
    }

    /// A device copy of `data`, shaped `shape` (row-major).
    pub fn from_vec(stream: &Stream<B>, shape: &[usize], data: &[T]) -> Result<Self> {
        let want = layout::checked_len(shape, "Array::from_vec")?;
        if want != data.len() {
            return Err(Error::LengthMismatch {
                what: format!("Array::from_vec of shape {shape:?}"),
                expected: want,
                actual: data.len(),
            });
        }
        Self::from_buffer(stream.upload(data)?, shape)
    }

    /// A device copy of an ndarray array of any memory order, with its shape.
    pub fn from_ndarray<S: Data<Elem = T>, D: Dimension>(stream: &Stream<B>, a: &ArrayBase<S, D>) -> Result<Self> {
        let buffer = match a.as_slice() {
            Some(s) => stream.upload(s)?,
            None => stream.upload(&a.iter().copied().collect::<Vec<T>>())?,
        };
        Self::from_buffer(buffer, a.shape())
    }

    /// The buffer seen through `layout`, holding no error.
    fn view(&self, layout: Layout) -> Self {
        Array { buffer: self.buffer.clone(), layout, fault: None }
    }

    /// The extent of each dimension.
    pub fn shape(&self) -> &[usize] {
        self.layout.shape()
    }

    /// The step between neighbours along each dimension, in elements.
    pub fn strides(&self) -> &[isize] {
        self.layout.strides()
    }

    /// Shape, strides and offset.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.layout.ndim()
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        self.layout.len()
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.layout.is_empty()
    }

    /// The buffer the array sees (shared with its views).
    pub fn buffer(&self) -> &Buffer<B, T> {
        &self.buffer
    }

    /// The stream the array's work runs on.
    pub fn stream(&self) -> &Stream<B> {
        self.buffer.stream()
    }

    /// Whether the elements are in row-major order one after another.
    pub fn is_standard_layout(&self) -> bool {
        self.layout.is_standard()
    }

    /// The view `info` selects (ndarray's `s![]`: ranges with steps,
    /// negative steps, indices, `NewAxis`); `Err` naming the axis for a
    /// bound or index out of range, or a zero step.
    pub fn slice<I: AsRef<[SliceInfoElem]>>(&self, info: I) -> Result<Self> {
        Ok(self.view(self.layout.slice(info.as_ref())?))
    }

    /// The axes in the order `axes` gives.
    pub fn permuted_axes(&self, axes: &[usize]) -> Result<Self> {
        Ok(self.view(self.layout.permuted(axes)?))
    }

    /// The axes reversed (a matrix transposed); a view.
    pub fn t(&self) -> Self {
        self.view(self.layout.transposed())
    }

    /// The array repeated along new or extent-1 dimensions to `shape`
    /// (NumPy's broadcasting); a view with stride 0 there.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let col = Array::from_vec(&s, &[2, 1], &[1.0f32, 2.0])?;
    /// let b = col.broadcast_to(&[2, 3])?;
    /// assert_eq!(b.strides(), [1, 0]);
    /// assert_eq!(b.to_vec()?, [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]);
    /// let e = col.broadcast_to(&[3, 3]).unwrap_err();
    /// assert!(e.to_string().contains("[2, 1]") && e.to_string().contains("[3, 3]"));
    /// # Ok(()) }
    /// ```
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Self> {
        Ok(self.view(self.layout.broadcast_to(shape)?))
    }

    /// A new axis of extent 1 before `axis`.
    pub fn insert_axis(&self, axis: usize) -> Result<Self> {
        Ok(self.view(self.layout.insert_axis(axis)?))
    }

    /// Axis `axis`, of extent 1, removed.
    pub fn remove_axis(&self, axis: usize) -> Result<Self> {
        Ok(self.view(self.layout.remove_axis(axis)?))
    }

    /// The elements in row-major order seen as `shape`: a view where the
    /// layout allows it (always for a row-major array), otherwise a copy
    /// made row-major first, as NumPy's `reshape`.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let a = Array::arange(&s, 0, 6, 1)?.reshape(&[2, 3])?; // a view
    /// assert_eq!(a.to_vec()?, [0, 1, 2, 3, 4, 5]);
    /// let t = a.t().reshape(&[6])?; // a transpose is not row-major: copied
    /// assert_eq!(t.to_vec()?, [0, 3, 1, 4, 2, 5]);
    /// assert!(a.reshape(&[4]).is_err()); // 6 elements do not make 4
    /// # Ok(()) }
    /// ```
    pub fn reshape(&self, shape: &[usize]) -> Result<Self> {
        match self.layout.reshaped(shape)? {
            Some(layout) => Ok(self.view(layout)),
            None => self.to_contiguous()?.reshape(shape),
        }
    }

    /// The elements in row-major order in a buffer of their own (shared
    /// when the array already is one, from element 0 to its end).
    pub fn to_contiguous(&self) -> Result<Self> {
        if self.layout.is_standard() && self.layout.offset() == 0 && self.len() == self.buffer.len() {
            return Ok(self.clone());
        }
        let buffer = gather::gather(self.stream(), &self.buffer, &self.layout)?;
        Self::from_buffer(buffer, self.shape())
    }

    /// The elements in row-major order, on the host; blocks. After a failed
    /// in-place operator these are the values from before it (the error is
    /// [`check`](Self::check)'s to report, not this read's).
    pub fn to_vec(&self) -> Result<Vec<T>> {
        if self.layout.is_standard() {
            return self.elements()?.to_vec();
        }
        self.to_contiguous()?.to_vec()
    }

    /// The range of the buffer holding a row-major array's elements.
    fn elements(&self) -> Result<kiln_core::BufferView<'_, B, T>> {
        let at = self.layout.offset();
        self.buffer.slice(at..at + self.len())
    }

    /// The elements converted to `U` (see [`ArrayExpr::astype`]).
    pub fn astype<U: Element>(&self) -> Result<Array<B, U>> {
        self.expr().astype()
    }

    /// An ndarray copy on the host, with this shape; blocks.
    pub fn to_ndarray(&self) -> Result<ArrayD<T>> {
        ArrayD::from_shape_vec(IxDyn(self.shape()), self.to_vec()?)
            .map_err(|e| Error::invalid("Array::to_ndarray", e.to_string()))
    }
}

/// The values as ndarray prints them (reading them back from the device);
/// an error reading them is printed in their place.
impl<B: Backend, T: Element + fmt::Display> fmt::Display for Array<B, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.to_ndarray() {
            Ok(a) => fmt::Display::fmt(&a, f),
            Err(e) => write!(f, "<array of shape {:?} unreadable: {e}>", self.shape()),
        }
    }
}
