//! Typed device buffers and views of them.

use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use ndarray::{Array, Dimension, StrideShape};

use crate::{Backend, Device, Element, Error, RawBuffer, Result, Stream};

/// A device array of `len` elements of `T`.
///
/// A buffer remembers the stream it was allocated on: its convenience methods
/// ([`to_vec`](Self::to_vec), [`fill`](Self::fill), ...) run there, and it is
/// freed there, in stream order, when dropped.
///
/// Any stream of its device may use it. kiln keeps its memory alive while any
/// of them may still be using it (a drop waits for the uses recorded on other
/// streams) and orders its first use elsewhere after its allocation. Ordering
/// the *data* is the user's: a stream that reads what another wrote must
/// first [`wait`](Stream::wait) for an event recorded after the write. The
/// [`Stream`] docs spell out both sides.
///
/// ```
/// use kiln_core::{Device, Priority};
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let other = dev.create_stream(Priority::Normal)?;
/// let src = dev.upload(&[1.0f32, 2.0, 3.0])?;         // written on the default stream
/// other.wait(&dev.stream().record_event()?)?;         // the user orders the data...
/// let mut dst = other.alloc::<f32>(3)?;
/// other.copy(&src, &mut dst)?;
/// drop(src);                                          // ...kiln keeps src alive for the copy
/// assert_eq!(dst.to_vec()?, vec![1.0, 2.0, 3.0]);
/// # Ok(()) }
/// ```
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let mut buf = dev.upload(&[1u32, 2, 3, 4])?;
/// buf.slice_mut(1..3)?.fill(9)?;
/// assert_eq!(buf.to_vec()?, vec![1, 9, 9, 4]);
/// # Ok(()) }
/// ```
pub struct Buffer<B: Backend, T: Element> {
    storage: Arc<Storage<B>>,
    len: usize,
    stream: Stream<B>,
    _t: PhantomData<T>,
}

/// A buffer's memory: shared by the [`Buffer`] and the [`Graph`](crate::Graph)s
/// that captured work on it, and released (its bytes leaving the device's
/// memory count) when the last of them is dropped.
pub struct Storage<B: Backend> {
    raw: B::Buffer,
    device: Device<B>,
    /// The bytes it counts toward its device's memory count.
    counted: u64,
}

impl<B: Backend> Storage<B> {
    /// The backend's storage.
    pub fn raw(&self) -> &B::Buffer {
        &self.raw
    }

    /// The device the memory belongs to.
    pub fn device(&self) -> &Device<B> {
        &self.device
    }
}

impl<B: Backend> Drop for Storage<B> {
    fn drop(&mut self) {
        self.device.counter().release(self.counted);
    }
}

impl<B: Backend> std::fmt::Debug for Storage<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Storage({:?} on {})", self.raw, self.device.name())
    }
}

impl<B: Backend, T: Element> std::fmt::Debug for Buffer<B, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Buffer<{}, {}>[{}] on {}", B::KIND, T::DTYPE, self.len, self.device().name())
    }
}

impl<B: Backend, T: Element> Buffer<B, T> {
    /// Wrap raw storage of at least `len * size_of::<T>()` bytes.
    ///
    /// # Safety
    /// - `raw` was allocated on `stream`'s device and holds at least `len` elements of `T`.
    ///
    /// Its bytes count toward the device's [`memory_stats`](crate::Device::memory_stats)
    /// (whatever the limit: the memory is allocated already) until it is dropped.
    pub unsafe fn from_raw(raw: B::Buffer, len: usize, stream: Stream<B>) -> Self {
        let bytes = raw.len() as u64;
        stream.device().counter().add(bytes);
        // SAFETY: the caller's contract, and the bytes are counted.
        unsafe { Self::from_counted(raw, len, stream, bytes) }
    }

    /// Wrap raw storage whose `counted` bytes are already in its device's count.
    ///
    /// # Safety
    /// As [`Buffer::from_raw`].
    pub(crate) unsafe fn from_counted(raw: B::Buffer, len: usize, stream: Stream<B>, counted: u64) -> Self {
        debug_assert!(len.checked_mul(size_of::<T>()).is_some_and(|bytes| raw.len() >= bytes));
        let storage = Arc::new(Storage { raw, device: stream.device().clone(), counted });
        Buffer { storage, len, stream, _t: PhantomData }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Size in bytes.
    pub fn size_bytes(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// The stream the buffer was allocated on.
    pub fn stream(&self) -> &Stream<B> {
        &self.stream
    }

    /// The device the buffer lives on.
    pub fn device(&self) -> &Device<B> {
        self.stream.device()
    }

    /// The backend's storage.
    pub fn raw(&self) -> &B::Buffer {
        &self.storage.raw
    }

    /// The memory, shared with the graphs that captured work on it.
    pub fn storage(&self) -> &Arc<Storage<B>> {
        &self.storage
    }

    /// A view of the whole buffer.
    pub fn view(&self) -> BufferView<'_, B, T> {
        BufferView { buffer: self, offset: 0, len: self.len }
    }

    /// A writable view of the whole buffer.
    pub fn view_mut(&mut self) -> BufferViewMut<'_, B, T> {
        let len = self.len;
        BufferViewMut { buffer: self, offset: 0, len }
    }

    /// A view of `range` (in elements).
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<BufferView<'_, B, T>> {
        self.view().slice(range)
    }

    /// A writable view of `range` (in elements).
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<BufferViewMut<'_, B, T>> {
        let (offset, len) = resolve(range, self.len, "Buffer::slice_mut")?;
        Ok(BufferViewMut { buffer: self, offset, len })
    }

    /// Copy the contents into a new `Vec`; blocks until the buffer's stream
    /// has finished everything enqueued before.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        self.view().to_vec()
    }

    /// Copy the contents into `dst`, which must have the same length; blocks.
    pub fn copy_to_host(&self, dst: &mut [T]) -> Result<()> {
        self.stream.copy_to_host(self, dst)
    }

    /// Copy the contents into an ndarray array of `shape` (row-major); blocks.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// # fn main() -> kiln_core::Result<()> {
    /// let dev = Device::<Cpu>::open(0)?;
    /// let buf = dev.upload(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;
    /// let a = buf.to_array((2, 3))?;
    /// assert_eq!(a[[1, 0]], 4.0);
    /// assert!(buf.to_array((4, 4)).is_err());
    /// # Ok(()) }
    /// ```
    pub fn to_array<D: Dimension, Sh: Into<StrideShape<D>>>(&self, shape: Sh) -> Result<Array<T, D>> {
        let shape: StrideShape<D> = shape.into();
        let want = shape.raw_dim().size();
        if want != self.len {
            return Err(Error::LengthMismatch {
                what: format!("Buffer::to_array of shape {:?}", shape.raw_dim().slice()),
                expected: want,
                actual: self.len,
            });
        }
        Array::from_shape_vec(shape, self.to_vec()?).map_err(|e| Error::invalid("Buffer::to_array", e.to_string()))
    }

    /// Overwrite the contents from `src`, which must have the same length.
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        let stream = self.stream.clone();
        stream.copy_to_device(src, self)
    }

    /// Overwrite the contents from another device buffer or view of the same
    /// length, on this buffer's stream.
    pub fn copy_from(&mut self, src: &impl View<B, T>) -> Result<()> {
        let stream = self.stream.clone();
        stream.copy(src, self)
    }

    /// Set every element to `value`, on this buffer's stream.
    pub fn fill(&mut self, value: T) -> Result<()> {
        let stream = self.stream.clone();
        stream.fill(self, value)
    }
}

/// Resolve a range against a length, or say why it does not fit.
fn resolve(range: impl RangeBounds<usize>, len: usize, what: &str) -> Result<(usize, usize)> {
    let start = match range.start_bound() {
        Bound::Included(&s) => s,
        Bound::Excluded(&s) => s.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.saturating_add(1),
        Bound::Excluded(&e) => e,
        Bound::Unbounded => len,
    };
    if start > end || end > len {
        return Err(Error::OutOfRange { what: what.to_string(), start, end, len });
    }
    Ok((start, end - start))
}

/// The accessors of both views' range: its length, emptiness and offset.
macro_rules! range_accessors {
    () => {
        /// Number of elements in the view.
        pub fn len(&self) -> usize {
            self.len
        }

        /// Whether the view is empty.
        pub fn is_empty(&self) -> bool {
            self.len == 0
        }

        /// Offset of the view in its buffer, in elements.
        pub fn offset(&self) -> usize {
            self.offset
        }
    };
}

/// A read-only range of a [`Buffer`].
pub struct BufferView<'a, B: Backend, T: Element> {
    buffer: &'a Buffer<B, T>,
    offset: usize,
    len: usize,
}

impl<B: Backend, T: Element> Clone for BufferView<'_, B, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<B: Backend, T: Element> Copy for BufferView<'_, B, T> {}

impl<'a, B: Backend, T: Element> BufferView<'a, B, T> {
    range_accessors!();

    /// The buffer viewed.
    pub fn buffer(&self) -> &'a Buffer<B, T> {
        self.buffer
    }

    /// The buffer, offset and length of this view.
    pub fn parts(&self) -> (&'a Buffer<B, T>, usize, usize) {
        (self.buffer, self.offset, self.len)
    }

    /// A narrower view; `range` is relative to this view.
    pub fn slice(&self, range: impl RangeBounds<usize>) -> Result<BufferView<'a, B, T>> {
        let (offset, len) = resolve(range, self.len, "BufferView::slice")?;
        Ok(BufferView { buffer: self.buffer, offset: self.offset + offset, len })
    }

    /// Copy the viewed elements into a new `Vec`; blocks.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = vec![T::default(); self.len];
        self.buffer.stream.copy_to_host(self, &mut out)?;
        Ok(out)
    }
}

/// A writable range of a [`Buffer`].
pub struct BufferViewMut<'a, B: Backend, T: Element> {
    buffer: &'a mut Buffer<B, T>,
    offset: usize,
    len: usize,
}

impl<'a, B: Backend, T: Element> BufferViewMut<'a, B, T> {
    range_accessors!();

    /// The buffer, offset and length of this view.
    pub fn into_parts(self) -> (&'a Buffer<B, T>, usize, usize) {
        (self.buffer, self.offset, self.len)
    }

    /// A narrower writable view; `range` is relative to this view.
    pub fn slice_mut(&mut self, range: impl RangeBounds<usize>) -> Result<BufferViewMut<'_, B, T>> {
        let (offset, len) = resolve(range, self.len, "BufferViewMut::slice_mut")?;
        Ok(BufferViewMut { buffer: self.buffer, offset: self.offset + offset, len })
    }

    /// Set every viewed element to `value`, on the buffer's stream.
    pub fn fill(&mut self, value: T) -> Result<()> {
        let stream = self.buffer.stream.clone();
        stream.fill(self, value)
    }

    /// Overwrite the viewed elements from `src`, which must have the same length.
    pub fn copy_from_host(&mut self, src: &[T]) -> Result<()> {
        let stream = self.buffer.stream.clone();
        stream.copy_to_device(src, self)
    }
}

/// Anything that reads as a range of a buffer: [`Buffer`], [`BufferView`], [`BufferViewMut`].
pub trait View<B: Backend, T: Element> {
    /// The range as a read-only view.
    fn view(&self) -> BufferView<'_, B, T>;
}

/// Anything that writes as a range of a buffer: [`Buffer`], [`BufferViewMut`].
pub trait ViewMut<B: Backend, T: Element>: View<B, T> {
    /// The range as a writable view.
    fn view_mut(&mut self) -> BufferViewMut<'_, B, T>;
}

impl<B: Backend, T: Element> View<B, T> for Buffer<B, T> {
    fn view(&self) -> BufferView<'_, B, T> {
        Buffer::view(self)
    }
}
impl<B: Backend, T: Element> ViewMut<B, T> for Buffer<B, T> {
    fn view_mut(&mut self) -> BufferViewMut<'_, B, T> {
        Buffer::view_mut(self)
    }
}
impl<B: Backend, T: Element> View<B, T> for BufferView<'_, B, T> {
    fn view(&self) -> BufferView<'_, B, T> {
        *self
    }
}
impl<B: Backend, T: Element> View<B, T> for BufferViewMut<'_, B, T> {
    fn view(&self) -> BufferView<'_, B, T> {
        BufferView { buffer: self.buffer, offset: self.offset, len: self.len }
    }
}
impl<B: Backend, T: Element> ViewMut<B, T> for BufferViewMut<'_, B, T> {
    fn view_mut(&mut self) -> BufferViewMut<'_, B, T> {
        BufferViewMut { buffer: self.buffer, offset: self.offset, len: self.len }
    }
}
