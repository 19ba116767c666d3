//! Streams: ordered queues of copies, fills and launches on one device.

use std::sync::Arc;

use crate::{
    Args, Backend, Buffer, BufferView, Device, Element, Error, Event, HostBuffer, Kernel, LaunchConfig, RawStream,
    Result, View, ViewMut,
};

/// A stream's scheduling priority, portable across backends.
///
/// CUDA maps these onto its priority range (lower number = higher priority
/// there) and clamps to what the device offers; backends without priorities
/// accept every value and treat them alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub enum Priority {
    /// Background work.
    Low,
    /// The default.
    #[default]
    Normal,
    /// Latency-critical work, scheduled ahead of the others when the device allows.
    High,
}

/// An ordered queue of work on one device.
///
/// Everything enqueued on one stream runs in order; streams are ordered
/// against each other only by events ([`record`](Self::record) on one,
/// [`wait`](Self::wait) on another). Methods that block the calling thread
/// say so; the others return once the work is enqueued. Cloning a `Stream`
/// gives another handle to the same queue.
///
/// # Examples
/// ```
/// use kiln_core::{Device, Priority};
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let (s1, s2) = (dev.create_stream(Priority::High)?, dev.create_stream(Priority::Normal)?);
/// let mut a = s1.alloc::<f32>(4)?;
/// s1.fill(&mut a, 1.5)?;
/// let done = s1.record_event()?;
/// s2.wait(&done)?;                       // s2's later work sees a filled
/// let mut b = s2.alloc::<f32>(4)?;
/// s2.copy(&a, &mut b)?;
/// assert_eq!(b.to_vec()?, vec![1.5; 4]);
/// # Ok(()) }
/// ```
pub struct Stream<B: Backend> {
    device: Device<B>,
    raw: Arc<B::Stream>,
}

impl<B: Backend> Clone for Stream<B> {
    fn clone(&self) -> Self {
        Stream { device: self.device.clone(), raw: self.raw.clone() }
    }
}

impl<B: Backend> std::fmt::Debug for Stream<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stream({}, {:?})", self.device.name(), self.raw.priority())
    }
}

impl<B: Backend> Stream<B> {
    pub(crate) fn from_parts(device: Device<B>, raw: Arc<B::Stream>) -> Self {
        Stream { device, raw }
    }

    /// The device this stream runs on.
    pub fn device(&self) -> &Device<B> {
        &self.device
    }

    /// The backend's stream.
    pub fn raw(&self) -> &B::Stream {
        &self.raw
    }

    /// The priority after clamping to the device's range.
    pub fn priority(&self) -> Priority {
        self.raw.priority()
    }

    fn same_device(&self, other: &Device<B>, what: &str) -> Result<()> {
        if self.device.same(other) {
            Ok(())
        } else {
            Err(Error::DeviceMismatch {
                what: what.to_string(),
                first: self.device.name().to_string(),
                second: other.name().to_string(),
            })
        }
    }

    fn bytes_of<T: Element>(len: usize, what: &str) -> Result<usize> {
        len.checked_mul(size_of::<T>())
            .ok_or_else(|| Error::invalid(what, format!("{len} elements of {} overflow the address space", T::DTYPE)))
    }

    /// Allocate `len` elements on this stream; the contents are unspecified
    /// until written (every bit pattern is a valid `T`).
    pub fn alloc<T: Element>(&self, len: usize) -> Result<Buffer<B, T>> {
        let bytes = Self::bytes_of::<T>(len, "Stream::alloc")?;
        let max = self.device.info().limits.max_buffer_bytes;
        if bytes as u64 > max {
            return Err(Error::OutOfMemory {
                device: self.device.name().to_string(),
                what: format!(
                    "device buffer of {len} {} (the largest buffer this device allows is {max} bytes)",
                    T::DTYPE
                ),
                requested: bytes as u64,
                free: None,
            });
        }
        self.device.check_usable()?;
        let raw = self.raw.alloc(bytes)?;
        // SAFETY: `raw` was just allocated on this stream's device with `len` elements' worth of bytes.
        Ok(unsafe { Buffer::from_raw(raw, len, self.clone()) })
    }

    /// Allocate `len` elements set to zero.
    pub fn alloc_zeroed<T: Element>(&self, len: usize) -> Result<Buffer<B, T>> {
        let mut buf = self.alloc(len)?;
        self.fill(&mut buf, T::zeroed())?;
        Ok(buf)
    }

    /// Allocate a buffer holding a copy of `data`.
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<Buffer<B, T>> {
        let mut buf = self.alloc(data.len())?;
        self.copy_to_device(data, &mut buf)?;
        Ok(buf)
    }

    /// Copy host memory into a device range of the same length. `src` can be
    /// reused as soon as this returns; the copy may still be in flight on the
    /// device side (use [`HostBuffer`] and [`copy_to_device_async`](Self::copy_to_device_async)
    /// for copies that overlap with other work).
    pub fn copy_to_device<T: Element>(&self, src: &[T], dst: &mut impl ViewMut<B, T>) -> Result<()> {
        let (buf, offset, len) = dst.view_mut().into_parts();
        check_len("Stream::copy_to_device (host source vs device destination)", len, src.len())?;
        self.same_device(buf.device(), "Stream::copy_to_device")?;
        if len == 0 {
            return Ok(());
        }
        self.device.check_usable()?;
        // SAFETY: same device checked; the range lies inside `buf` by construction of the view.
        unsafe { self.raw.write(buf.raw(), offset * size_of::<T>(), bytemuck::cast_slice(src)) }
    }

    /// Copy a device range into host memory of the same length. Blocks until
    /// the data has arrived, so everything enqueued earlier on this stream has run.
    pub fn copy_to_host<T: Element>(&self, src: &impl View<B, T>, dst: &mut [T]) -> Result<()> {
        let (buf, offset, len) = src.view().parts();
        check_len("Stream::copy_to_host (device source vs host destination)", dst.len(), len)?;
        self.same_device(buf.device(), "Stream::copy_to_host")?;
        self.device.check_usable()?;
        if len == 0 {
            return self.synchronize();
        }
        // SAFETY: same device checked; the range lies inside `buf` by construction of the view.
        unsafe { self.raw.read(buf.raw(), offset * size_of::<T>(), bytemuck::cast_slice_mut(dst)) }
            .inspect_err(|e| self.device.note_failure(e))
    }

    /// Enqueue a copy from a host buffer to a device range of the same length;
    /// returns at once. The host buffer's own accessors wait for the copy.
    pub fn copy_to_device_async<T: Element>(&self, src: &HostBuffer<B, T>, dst: &mut impl ViewMut<B, T>) -> Result<()> {
        let (buf, offset, len) = dst.view_mut().into_parts();
        check_len("Stream::copy_to_device_async (host source vs device destination)", len, src.len())?;
        self.same_device(buf.device(), "Stream::copy_to_device_async")?;
        self.same_device(src.device(), "Stream::copy_to_device_async")?;
        if len == 0 {
            return Ok(());
        }
        self.device.check_usable()?;
        // Host writes to `src` must wait for earlier device writes into it.
        src.wait_for_device_writes()?;
        let bytes = len * size_of::<T>();
        // SAFETY: same device checked; ranges inside both buffers; the host
        // buffer's accessors and drop wait on the event recorded below.
        unsafe { self.raw.write_async(buf.raw(), offset * size_of::<T>(), src.raw(), 0, bytes)? };
        src.track_device_read(self)
    }

    /// Enqueue a copy from a device range to a host buffer of the same length;
    /// returns at once. The host buffer's accessors wait for the copy.
    pub fn copy_to_host_async<T: Element>(&self, src: &impl View<B, T>, dst: &mut HostBuffer<B, T>) -> Result<()> {
        let (buf, offset, len) = src.view().parts();
        check_len("Stream::copy_to_host_async (device source vs host destination)", dst.len(), len)?;
        self.same_device(buf.device(), "Stream::copy_to_host_async")?;
        self.same_device(dst.device(), "Stream::copy_to_host_async")?;
        if len == 0 {
            return Ok(());
        }
        self.device.check_usable()?;
        dst.wait_for_device_reads()?;
        let bytes = len * size_of::<T>();
        // SAFETY: same device checked; ranges inside both buffers; the host
        // buffer's accessors and drop wait on the event recorded below.
        unsafe { self.raw.read_async(buf.raw(), offset * size_of::<T>(), dst.raw(), 0, bytes)? };
        dst.track_device_write(self)
    }

    /// Enqueue a device-to-device copy between ranges of the same length.
    pub fn copy<T: Element>(&self, src: &impl View<B, T>, dst: &mut impl ViewMut<B, T>) -> Result<()> {
        let (s, so, sl) = src.view().parts();
        let (d, d_off, dl) = dst.view_mut().into_parts();
        check_len("Stream::copy (device source vs device destination)", dl, sl)?;
        self.same_device(s.device(), "Stream::copy")?;
        self.same_device(d.device(), "Stream::copy")?;
        if sl == 0 {
            return Ok(());
        }
        self.device.check_usable()?;
        let size = size_of::<T>();
        // SAFETY: same device checked; ranges inside their buffers; the borrow
        // rules keep `dst` (exclusive) apart from `src` (shared).
        unsafe { self.raw.copy(s.raw(), so * size, d.raw(), d_off * size, sl * size) }
    }

    /// Enqueue setting every element of a device range to `value`.
    pub fn fill<T: Element>(&self, dst: &mut impl ViewMut<B, T>, value: T) -> Result<()> {
        let (buf, offset, len) = dst.view_mut().into_parts();
        self.same_device(buf.device(), "Stream::fill")?;
        if len == 0 {
            return Ok(());
        }
        self.device.check_usable()?;
        let size = size_of::<T>();
        // SAFETY: same device checked; the range is inside `buf`; `size` is 1, 2, 4 or 8 and divides offset and length.
        unsafe { self.raw.fill(buf.raw(), offset * size, len * size, bytemuck::bytes_of(&value)) }
    }

    /// Enqueue a launch of `kernel` over `config` with `args`.
    ///
    /// The shape is checked against the device's limits first (the error names
    /// the limit); a launch with zero threads does nothing and succeeds. All
    /// buffers must live on this stream's device.
    ///
    /// # Safety
    /// - The kernel reads and writes only inside the ranges of its buffer
    ///   arguments and writes only those passed writable (`&mut`).
    /// - `args` match the kernel's parameters in order and type (the CUDA
    ///   backend checks the count and sizes where the driver reports them).
    pub unsafe fn launch(&self, kernel: &Kernel<B>, config: LaunchConfig, args: Args<'_, B>) -> Result<()> {
        if kernel.device_id() != self.device.id() {
            return Err(Error::DeviceMismatch {
                what: format!("launch of kernel `{}`", kernel.name()),
                first: self.device.name().to_string(),
                second: "the device the kernel was compiled for".to_string(),
            });
        }
        // The message is built only on a mismatch: this is the launch hot path.
        if let Some(d) = args.devices().iter().find(|d| !self.device.same(d)) {
            self.same_device(d, &format!("launch of kernel `{}`", kernel.name()))?;
        }
        config.validate(&self.device.info().limits, kernel.name())?;
        if config.is_empty() {
            return Ok(());
        }
        self.device.check_usable()?;
        // SAFETY: devices and shape checked above; the kernel's behaviour is the caller's promise.
        unsafe { self.raw.launch(kernel.raw(), &config, args.raw()) }.inspect_err(|e| self.device.note_failure(e))
    }

    /// Record `event` at the current end of this stream.
    pub fn record(&self, event: &Event<B>) -> Result<()> {
        self.same_device(event.device(), "Stream::record")?;
        self.raw.record(event.raw())
    }

    /// A new event recorded at the current end of this stream.
    pub fn record_event(&self) -> Result<Event<B>> {
        let event = self.device.create_event()?;
        self.record(&event)?;
        Ok(event)
    }

    /// Make work enqueued later on this stream wait until `event` completes
    /// (a cross-stream dependency). Does not block the calling thread.
    pub fn wait(&self, event: &Event<B>) -> Result<()> {
        self.same_device(event.device(), "Stream::wait")?;
        self.raw.wait(event.raw())
    }

    /// Block until everything enqueued on this stream so far has run; reports
    /// errors kept from earlier asynchronous work.
    pub fn synchronize(&self) -> Result<()> {
        self.raw.synchronize().inspect_err(|e| self.device.note_failure(e))
    }
}

fn check_len(what: &str, expected: usize, actual: usize) -> Result<()> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::LengthMismatch { what: what.to_string(), expected, actual })
    }
}

impl<'a, B: Backend, T: Element> From<&'a Buffer<B, T>> for BufferView<'a, B, T> {
    fn from(b: &'a Buffer<B, T>) -> Self {
        b.view()
    }
}
