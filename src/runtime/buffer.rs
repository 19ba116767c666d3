//! [`Buffer`] and its views on the run-time tier.

use std::ops::RangeBounds;

use kiln_core::{BackendKind, Element, Result};
use ndarray::{Array, Dimension, StrideShape};

use super::{Buffer, BufferView, BufferViewMut, Device, Stream, Tier, describe, dispatch, mismatch};

impl<T: Element> Buffer<T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        dispatch!(self, Buffer, b => b.len())
    }

    /// Whether the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Size in bytes.
    pub fn size_bytes(&self) -> usize {
        dispatch!(self, Buffer, b => b.size_bytes())
    }

    /// The backend.
    pub fn kind(&self) -> BackendKind {
        self.device().kind()
    }

    /// The device the buffer lives on.
    pub fn device(&self) -> Device {
        dispatch!(self, Buffer, b => B::wrap_device(b.device().clone()))
    }

    /// The stream the buffer was allocated on, where its convenience
    /// methods run and where it is freed.
    pub fn stream(&self) -> Stream {
        dispatch!(self, Buffer, b => B::wrap_stream(b.stream().clone()))
    }

    /// The typed buffer, if this one is of backend `B`.
    pub fn typed<B: Tier>(&self) -> Option<&kiln_core::Buffer<B, T>> {
        B::buffer(self)
    }

    /// The typed buffer, writable, if this one is of backend `B`.
    pub fn typed_mut<B: Tier>(&mut self) -> Option<&mut kiln_core::Buffer<B, T>> {
        B::buffer_mut(self)
    }

    /// A view of `range` (in elements).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> kiln::Result<()> {
    /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
    /// let mut buf = dev.upload(&[1u32, 2, 3, 4])?;
    /// buf.slice_mut(1..3)?.fill(9)?;
    /// assert_eq!(buf.slice(2..)?.to_vec()?, [9, 4]);
    /// assert!(buf.slice(3..9).is_err());
    /// # Ok(()) }
    /// ```
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<BufferView<'_, T>> {
        dispatch!(self, Buffer, b => b.slice(range).map(BufferView::from_typed::<B>))
    }

    /// A writable view of `range` (in elements).
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<BufferViewMut<'_, T>> {
        dispatch!(self, Buffer, b => b.slice_mut(range).map(BufferViewMut::from_typed::<B>))
    }

    /// Copy the contents into a new `Vec`; blocks until the buffer's stream
    /// has run everything enqueued before.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        dispatch!(self, Buffer, b => b.to_vec())
    }

    /// Copy the contents into `dst`, which must have the same length; blocks.
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        dispatch!(self, Buffer, b => b.copy_to_host(dst))
    }

    /// Copy the contents into an ndarray array of `shape` (row-major); blocks.
    pub fn to_array<D: Dimension, Sh: Into<StrideShape<D>>>(&self, shape: Sh) -> Result<Array<T, D>> {
        dispatch!(self, Buffer, b => b.to_array(shape))
    }

    /// Overwrite the contents from `src`, which must have the same length.
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        dispatch!(self, Buffer, b => b.copy_from_host(src))
    }

    /// Overwrite the contents from another buffer or view of the same
    /// device and length, on this buffer's stream.
    pub fn copy_from(&mut self, src: &impl View<T>) -> Result<()> {
        let src = src.view();
        dispatch!(self, Buffer, b => match B::view(src) {
            Ok(v) => b.copy_from(&v),
            Err(other) => Err(mismatch("Buffer::copy_from", describe(b.device()), other.describe())),
        })
    }

    /// Set every element to `value`, on this buffer's stream.
    pub fn fill(&mut self, value: T) -> Result<()> {
        dispatch!(self, Buffer, b => b.fill(value))
    }
}

impl<'a, T: Element> BufferView<'a, T> {
    /// The run-time view of a typed one.
    pub fn from_typed<B: Tier>(view: kiln_core::BufferView<'a, B, T>) -> Self {
        B::wrap_view(view)
    }

    /// Number of elements in the view.
    pub fn len(&self) -> usize {
        dispatch!(self, BufferView, v => v.len())
    }

    /// Whether the view is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Offset of the view in its buffer, in elements.
    pub fn offset(&self) -> usize {
        dispatch!(self, BufferView, v => v.offset())
    }

    /// A narrower view; `range` is relative to this view.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<BufferView<'a, T>> {
        dispatch!(self, BufferView, v => v.slice(range).map(BufferView::from_typed::<B>))
    }

    /// Copy the viewed elements into a new `Vec`; blocks.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        dispatch!(self, BufferView, v => v.to_vec())
    }

    /// The device the view's buffer lives on.
    pub fn device(&self) -> Device {
        dispatch!(self, BufferView, v => B::wrap_device(v.buffer().device().clone()))
    }

    /// "cpu:0 name", for errors.
    pub(crate) fn describe(&self) -> String {
        dispatch!(self, BufferView, v => describe(v.buffer().device()))
    }
}

impl<'a, T: Element> BufferViewMut<'a, T> {
    /// The run-time view of a typed one.
    pub fn from_typed<B: Tier>(view: kiln_core::BufferViewMut<'a, B, T>) -> Self {
        B::wrap_view_mut(view)
    }

    /// Number of elements in the view.
    pub fn len(&self) -> usize {
        dispatch!(self, BufferViewMut, v => v.len())
    }

    /// Whether the view is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Offset of the view in its buffer, in elements.
    pub fn offset(&self) -> usize {
        dispatch!(self, BufferViewMut, v => v.offset())
    }

    /// A narrower writable view; `range` is relative to this view.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<BufferViewMut<'_, T>> {
        dispatch!(self, BufferViewMut, v => v.slice_mut(range).map(BufferViewMut::from_typed::<B>))
    }

    /// Set every viewed element to `value`, on the buffer's stream.
    pub fn fill(&mut self, value: T) -> Result<()> {
        dispatch!(self, BufferViewMut, v => v.fill(value))
    }

    /// Overwrite the viewed elements from `src`, which must have the same length.
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        dispatch!(self, BufferViewMut, v => v.copy_from_host(src))
    }

    /// "cpu:0 name", for errors.
    pub(crate) fn describe(&self) -> String {
        dispatch!(self, BufferViewMut, v => {
            let view = kiln_core::View::view(v);
            describe(view.buffer().device())
        })
    }
}

/// Anything that reads as a range of a buffer on the run-time tier:
/// [`Buffer`], [`BufferView`], [`BufferViewMut`].
pub trait View<T: Element> {
    /// The range as a read-only view.
    fn view(&self) -> BufferView<'_, T>;
}

/// Anything that writes as a range of a buffer on the run-time tier:
/// [`Buffer`], [`BufferViewMut`].
pub trait ViewMut<T: Element>: View<T> {
    /// The range as a writable view.
    fn view_mut(&mut self) -> BufferViewMut<'_, T>;
}

impl<T: Element> View<T> for Buffer<T> {
    fn view(&self) -> BufferView<'_, T> {
        dispatch!(self, Buffer, b => BufferView::from_typed::<B>(b.view()))
    }
}
impl<T: Element> ViewMut<T> for Buffer<T> {
    fn view_mut(&mut self) -> BufferViewMut<'_, T> {
        dispatch!(self, Buffer, b => BufferViewMut::from_typed::<B>(b.view_mut()))
    }
}
impl<T: Element> View<T> for BufferView<'_, T> {
    fn view(&self) -> BufferView<'_, T> {
        *self
    }
}
impl<T: Element> View<T> for BufferViewMut<'_, T> {
    fn view(&self) -> BufferView<'_, T> {
        dispatch!(self, BufferViewMut, v => BufferView::from_typed::<B>(kiln_core::View::view(v)))
    }
}
impl<T: Element> ViewMut<T> for BufferViewMut<'_, T> {
    fn view_mut(&mut self) -> BufferViewMut<'_, T> {
        dispatch!(self, BufferViewMut, v => BufferViewMut::from_typed::<B>(kiln_core::ViewMut::view_mut(v)))
    }
}

/// The typed view of `view` for a call on `stream`, or the error naming both devices.
pub(crate) fn typed_view<'a, B: Tier, T: Element>(
    what: &str,
    stream: &kiln_core::Stream<B>,
    view: BufferView<'a, T>,
) -> Result<kiln_core::BufferView<'a, B, T>> {
    B::view(view).map_err(|other| mismatch(what, describe(stream.device()), other.describe()))
}

/// The typed writable view of `view` for a call on `stream`, or the error naming both devices.
pub(crate) fn typed_view_mut<'a, B: Tier, T: Element>(
    what: &str,
    stream: &kiln_core::Stream<B>,
    view: BufferViewMut<'a, T>,
) -> Result<kiln_core::BufferViewMut<'a, B, T>> {
    B::view_mut(view).map_err(|other| mismatch(what, describe(stream.device()), other.describe()))
}
