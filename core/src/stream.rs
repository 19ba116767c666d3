//! Streams: ordered queues of copies, fills and launches on one device.
//!
//! Which orderings kiln keeps and which it leaves to the user is written on
//! [`Stream`], where rustdoc shows it: kiln keeps memory alive and allocation
//! before first use; the user orders data between streams with events.

use std::sync::Arc;

use crate::graph::record::{GemmShape, Op, OwnedArg, Queue};
use crate::{
    Args, Backend, Buffer, BufferView, DType, Device, Element, Error, Event, FftCall, FftDirection, FftLayout, Gemm,
    GemmOperand, GemmScales, HostBuffer, Kernel, LaunchConfig, MatmulShape, MemoryCounts, RawArg, RawBuffer, RawDevice,
    RawStream, Result, View, ViewMut,
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
/// # Ordering: what kiln guarantees
///
/// - **Lifetime.** A buffer's memory is not released or reused while any
///   stream may still use it. A buffer is freed on the stream it was
///   allocated on, after the work enqueued there before the drop; its uses on
///   other streams are recorded, and the free also waits for them. Dropping a
///   buffer right after enqueuing work that uses it is always safe.
/// - **Allocation before first use.** The first use of a buffer on another
///   stream is ordered after its allocation: a buffer from
///   [`alloc`](Self::alloc) on one stream can be passed to work on any stream
///   of its device without an event.
/// - **Host buffers.** A [`HostBuffer`]'s accessors wait for the asynchronous
///   copies that use it, and it is not freed while one may be running.
/// - **Program order** within one stream, and everything enqueued before a
///   blocking call on its stream ([`copy_to_host`](Self::copy_to_host),
///   [`Buffer::to_vec`], [`synchronize`](Self::synchronize)) is done when it returns.
///
/// ```
/// use kiln_core::{Device, Priority};
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let (a, b) = (dev.create_stream(Priority::Normal)?, dev.create_stream(Priority::Normal)?);
/// let mut scratch = a.alloc::<f32>(1024)?;   // allocated on a...
/// b.fill(&mut scratch, 2.0)?;                // ...first used on b: no event needed
/// drop(scratch);                             // freed only once b is done with it
/// # Ok(()) }
/// ```
///
/// # Ordering: what stays the user's
///
/// **Data between streams**, as in CUDA and CuPy: work on stream `b` that
/// reads what stream `a` wrote (or overwrites what `a` still reads) must
/// wait for an event recorded on `a` after that work, through
/// [`b.wait(&event)`](Self::wait). Without it the two run in either order or
/// at once, and the values read are unspecified: every bit pattern is a valid
/// element, so this gives wrong numbers, never undefined behaviour.
///
/// What "at once" means depends on the backend. On CUDA and wgpu the
/// device runs the two at once and the values are a mix. On the CPU, where
/// work is Rust code on host memory and a mix would be a data race, each
/// operation (a copy, a fill, a kernel, one step of a graph's replay)
/// holds the buffers it uses while it runs, shared to read and exclusive to
/// write: the two run one after the other, each whole, in either order. A
/// thread outside rayon's pools waits for a buffer that another thread's
/// operation holds; a thread inside a rayon pool (where waiting could
/// deadlock the pool) gets an `Err` saying that the buffer is in use, with
/// nothing done.
///
/// ```
/// use kiln_core::{Device, Priority};
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let (a, b) = (dev.create_stream(Priority::Normal)?, dev.create_stream(Priority::Normal)?);
/// let mut x = a.alloc::<u32>(4)?;
/// a.fill(&mut x, 7)?;                        // written on a
/// let written = a.record_event()?;
/// b.wait(&written)?;                         // the user's part: b's later work sees a's fill
/// let mut y = b.alloc::<u32>(4)?;
/// b.copy(&x, &mut y)?;                       // read on b
/// assert_eq!(y.to_vec()?, vec![7; 4]);
/// # Ok(()) }
/// ```
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
    queue: Arc<Queue<B>>,
}

impl<B: Backend> Clone for Stream<B> {
    fn clone(&self) -> Self {
        Stream { device: self.device.clone(), queue: self.queue.clone() }
    }
}

impl<B: Backend> std::fmt::Debug for Stream<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Stream({}, {:?})", self.device.name(), self.queue.raw.priority())
    }
}

impl<B: Backend> Stream<B> {
    pub(crate) fn from_parts(device: Device<B>, queue: Arc<Queue<B>>) -> Self {
        Stream { device, queue }
    }

    /// The backend stream and its capture state.
    pub(crate) fn queue(&self) -> &Arc<Queue<B>> {
        &self.queue
    }

    /// The device this stream runs on.
    pub fn device(&self) -> &Device<B> {
        &self.device
    }

    /// The backend's stream.
    pub fn raw(&self) -> &B::Stream {
        &self.queue.raw
    }

    /// The priority after clamping to the device's range.
    pub fn priority(&self) -> Priority {
        self.queue.raw.priority()
    }

    /// Whether `other` is a handle to the same queue.
    pub(crate) fn same_queue(&self, other: &Stream<B>) -> bool {
        Arc::ptr_eq(&self.queue, &other.queue)
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
    ///
    /// The bytes count toward the device's [`memory_stats`](Device::memory_stats)
    /// until the buffer is dropped; past the device's
    /// [limit](Device::set_memory_limit) the allocation is `OutOfMemory`
    /// naming the request, the bytes in use, reserved and free, and the limit.
    pub fn alloc<T: Element>(&self, len: usize) -> Result<Buffer<B, T>> {
        let bytes = Self::bytes_of::<T>(len, "Stream::alloc")?;
        let what = || format!("device buffer of {len} {}", T::DTYPE);
        let max = self.device.info().limits.max_buffer_bytes;
        if bytes as u64 > max {
            return Err(Error::OutOfMemory {
                device: self.device.name().to_string(),
                what: format!("{} (the largest buffer this device allows is {max} bytes)", what()),
                requested: bytes as u64,
                counts: MemoryCounts::free(None),
            });
        }
        self.device.check_usable()?;
        let counter = self.device.counter();
        if let Err((used, limit)) = counter.try_reserve(bytes as u64) {
            let memory = self.device.memory().ok();
            return Err(Error::OutOfMemory {
                device: self.device.name().to_string(),
                what: format!("{} (past the limit set on the device)", what()),
                requested: bytes as u64,
                counts: Box::new(MemoryCounts {
                    free: memory.map(|m| m.free),
                    used: Some(used),
                    reserved: memory.and_then(|m| m.reserved),
                    limit: Some(limit),
                }),
            });
        }
        let raw = match self.queue.raw.alloc(bytes) {
            Ok(raw) => raw,
            Err(e) => {
                counter.release(bytes as u64);
                return Err(match e {
                    Error::OutOfMemory { device, what, requested, counts } => {
                        let memory = self.device.memory().ok();
                        let counts = Box::new(MemoryCounts {
                            free: counts.free.or(memory.map(|m| m.free)),
                            used: Some(counter.used()),
                            reserved: counts.reserved.or(memory.and_then(|m| m.reserved)),
                            limit: counter.limit(),
                        });
                        Error::OutOfMemory { device, what, requested, counts }
                    }
                    e => e,
                });
            }
        };
        // SAFETY: `raw` was just allocated on this stream's device with
        // `len` elements' worth of bytes, counted above.
        Ok(unsafe { Buffer::from_counted(raw, len, self.clone(), bytes as u64) })
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
        let bytes: &[u8] = bytemuck::cast_slice(src);
        if let Some(lane) = self.lane() {
            // The graph copies the data from device memory of its own, written now.
            let staging = self.alloc::<u8>(bytes.len())?;
            // SAFETY: `staging` was just allocated on this stream's device with `bytes.len()` bytes.
            unsafe { self.queue.raw.write(staging.raw(), 0, bytes)? };
            let op = Op::Copy {
                src: staging.storage().clone(),
                src_offset: 0,
                dst: buf.storage().clone(),
                dst_offset: offset * size_of::<T>(),
                bytes: bytes.len(),
            };
            lane.push("Stream::copy_to_device", op)?;
            lane.lock().staged = true;
            return Ok(());
        }
        // SAFETY: same device checked; the range lies inside `buf` by construction of the view.
        unsafe { self.queue.raw.write(buf.raw(), offset * size_of::<T>(), bytes) }
    }

    /// Copy a device range into host memory of the same length. Blocks until
    /// the data has arrived, so everything enqueued earlier on this stream has
    /// run (an empty range returns at once).
    pub fn copy_to_host<T: Element>(&self, src: &impl View<B, T>, dst: &mut [T]) -> Result<()> {
        let (buf, offset, len) = src.view().parts();
        check_len("Stream::copy_to_host (device source vs host destination)", dst.len(), len)?;
        self.same_device(buf.device(), "Stream::copy_to_host")?;
        self.refuse_in_capture("Stream::copy_to_host", BLOCKING)?;
        self.device.check_usable()?;
        if len == 0 {
            // Nothing to wait for; errors kept from earlier work stay for the next synchronize.
            return Ok(());
        }
        // SAFETY: same device checked; the range lies inside `buf` by construction of the view.
        unsafe { self.queue.raw.read(buf.raw(), offset * size_of::<T>(), bytemuck::cast_slice_mut(dst)) }
            .inspect_err(|e| self.device.note_failure(e))
    }

    /// Whether `call`, an asynchronous copy of `len` elements between a
    /// buffer of `device` and a host buffer of `host`, has anything to copy:
    /// `Err` where either is not this stream's device, where the stream is
    /// capturing, or where the device is no longer usable.
    fn host_async_copy(&self, call: &str, device: &Device<B>, host: &Device<B>, len: usize) -> Result<bool> {
        self.same_device(device, call)?;
        self.same_device(host, call)?;
        self.refuse_in_capture(call, HOST_ASYNC)?;
        if len == 0 {
            return Ok(false);
        }
        self.device.check_usable()?;
        Ok(true)
    }

    /// Enqueue a copy from a host buffer to a device range of the same length;
    /// returns at once. The host buffer's own accessors wait for the copy.
    pub fn copy_to_device_async<T: Element>(&self, src: &HostBuffer<B, T>, dst: &mut impl ViewMut<B, T>) -> Result<()> {
        let (buf, offset, len) = dst.view_mut().into_parts();
        check_len("Stream::copy_to_device_async (host source vs device destination)", len, src.len())?;
        if !self.host_async_copy("Stream::copy_to_device_async", buf.device(), src.device(), len)? {
            return Ok(());
        }
        // Host writes to `src` must wait for earlier device writes into it.
        src.wait_for_device_writes()?;
        let bytes = len * size_of::<T>();
        src.track_device_read(self, || {
            // SAFETY: same device checked; ranges inside both buffers; `track_device_read`
            // has the event before this runs and records it (or synchronizes
            // this stream) right after, and the host buffer's accessors and
            // drop wait for it.
            unsafe { self.queue.raw.write_async(buf.raw(), offset * size_of::<T>(), src.raw(), 0, bytes) }
        })
    }

    /// Enqueue a copy from a device range to a host buffer of the same length;
    /// returns at once. The host buffer's accessors wait for the copy.
    pub fn copy_to_host_async<T: Element>(&self, src: &impl View<B, T>, dst: &mut HostBuffer<B, T>) -> Result<()> {
        let (buf, offset, len) = src.view().parts();
        check_len("Stream::copy_to_host_async (device source vs host destination)", dst.len(), len)?;
        if !self.host_async_copy("Stream::copy_to_host_async", buf.device(), dst.device(), len)? {
            return Ok(());
        }
        dst.wait_for_device_reads()?;
        let bytes = len * size_of::<T>();
        dst.track_device_write(self, || {
            // SAFETY: same device checked; ranges inside both buffers; `track_device_write`
            // has the event before this runs and records it (or synchronizes
            // this stream) right after, and the host buffer's accessors and
            // drop wait for it.
            unsafe { self.queue.raw.read_async(buf.raw(), offset * size_of::<T>(), dst.raw(), 0, bytes) }
        })
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
        if let Some(lane) = self.lane() {
            let op = Op::Copy {
                src: s.storage().clone(),
                src_offset: so * size,
                dst: d.storage().clone(),
                dst_offset: d_off * size,
                bytes: sl * size,
            };
            return lane.push("Stream::copy", op);
        }
        // SAFETY: same device checked; ranges inside their buffers; the borrow
        // rules keep `dst` (exclusive) apart from `src` (shared).
        unsafe { self.queue.raw.copy(s.raw(), so * size, d.raw(), d_off * size, sl * size) }
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
        if let Some(lane) = self.lane() {
            let mut pattern = [0u8; 16];
            pattern[..size].copy_from_slice(bytemuck::bytes_of(&value));
            let op =
                Op::Fill { dst: buf.storage().clone(), offset: offset * size, bytes: len * size, pattern, width: size };
            return lane.push("Stream::fill", op);
        }
        // SAFETY: same device checked; the range is inside `buf`; `size` is 1, 2, 4, 8 or 16 and divides offset and length.
        unsafe { self.queue.raw.fill(buf.raw(), offset * size, len * size, bytemuck::bytes_of(&value)) }
    }

    /// Enqueue a launch of `kernel` over `config` with `args`.
    ///
    /// The shape is checked against the device's limits first (the error names
    /// the limit); a launch with zero threads does nothing and succeeds. All
    /// buffers must live on this stream's device, and every buffer argument's
    /// byte range must lie inside its storage (the error names the argument).
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
        if let Some(s) = args.storages().iter().flatten().find(|s| !self.device.same(s.device())) {
            self.same_device(s.device(), &format!("launch of kernel `{}`", kernel.name()))?;
        }
        config.validate(&self.device.info().limits, kernel.name())?;
        check_ranges(kernel.name(), args.raw())?;
        if config.is_empty() {
            return Ok(());
        }
        self.device.check_usable()?;
        if let Some(lane) = self.lane() {
            let args = OwnedArg::list(kernel.name(), args.raw(), args.storages())?;
            return lane.push("Stream::launch", Op::Launch { kernel: kernel.clone(), config, args });
        }
        // SAFETY: devices, shape and argument ranges checked above; the
        // kernel's behaviour is the caller's promise.
        unsafe { self.queue.raw.launch(kernel.raw(), &config, args.raw()) }.inspect_err(|e| self.device.note_failure(e))
    }

    /// Enqueue the device's vendor matrix product (cuBLAS on CUDA):
    /// `c = a . b` for each of `shape.batch` products, `a` of `m x k`
    /// elements of `I`, `b` of `k x n`, `c` of `m x n` elements of `O`,
    /// laid out as `shape` says, each view spanning exactly its operand
    /// ([`MatmulShape::spans`]), in the arithmetic `shape.precision` allows.
    /// `Unsupported` where the device offers no product of these types
    /// ([`RawDevice::vendor_gemm`]); an empty sum (`k` zero) writes zeros
    /// into a dense `c`, and nothing is written when `c` is empty.
    pub fn vendor_gemm<I: Element, O: Element>(
        &self,
        a: &impl View<B, I>,
        b: &impl View<B, I>,
        c: &mut impl ViewMut<B, O>,
        shape: &MatmulShape,
    ) -> Result<()> {
        let call = || format!("vendor gemm {shape} of {} matrices into {}", I::DTYPE, O::DTYPE);
        let supported = self.device.raw().vendor_gemm().filter(|v| v.supports(I::DTYPE, O::DTYPE));
        let Some(_) = supported else {
            return Err(Error::unsupported(B::KIND, call(), format!("{} offers no such product", self.device.name())));
        };
        self.gemm_call(&call(), (a.view(), b.view()), c, shape, None)
    }

    /// Enqueue the device's vendor scaled product (cuBLASLt's 8-bit float
    /// products on CUDA): `c = scale_a scale_b (a . b)` for each of
    /// `shape.batch` products, `a` of `m x k` elements of `IA`, `b` of
    /// `k x n` elements of `IB`, `c` of `m x n` elements of `O`, as
    /// [`vendor_gemm`](Self::vendor_gemm) lays them out; `scale_a` and
    /// `scale_b` are one `f32` each, read by the device when the product
    /// runs. `Unsupported` where the device offers no such product
    /// ([`VendorGemm::supports_scaled`](crate::VendorGemm::supports_scaled)).
    ///
    /// # Examples
    /// The CPU offers no vendor GEMM (kiln-kernels' `matmul_scaled`
    /// computes its scaled products itself):
    /// ```
    /// use kiln_core::{Device, Error, F8E4M3, MatmulShape};
    /// use kiln_cpu::Cpu;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let a = s.upload(&[F8E4M3::from_f32(1.0); 16])?;
    /// let (scale_a, scale_b) = (s.upload(&[1.0f32])?, s.upload(&[1.0f32])?);
    /// let mut c = s.alloc::<f32>(1)?;
    /// let shape = MatmulShape::new(1, 1, 16).transpose_b();
    /// let refused = s.vendor_scaled_gemm(&a, &a, &mut c, &shape, &scale_a, &scale_b);
    /// assert!(matches!(refused, Err(Error::Unsupported { .. })));
    /// # Ok(()) }
    /// ```
    pub fn vendor_scaled_gemm<IA: Element, IB: Element, O: Element>(
        &self,
        a: &impl View<B, IA>,
        b: &impl View<B, IB>,
        c: &mut impl ViewMut<B, O>,
        shape: &MatmulShape,
        scale_a: &impl View<B, f32>,
        scale_b: &impl View<B, f32>,
    ) -> Result<()> {
        let call = || format!("vendor scaled gemm {shape} of {} by {} into {}", IA::DTYPE, IB::DTYPE, O::DTYPE);
        let supported = self.device.raw().vendor_gemm().filter(|v| v.supports_scaled(IA::DTYPE, IB::DTYPE, O::DTYPE));
        let Some(_) = supported else {
            return Err(Error::unsupported(B::KIND, call(), format!("{} offers no such product", self.device.name())));
        };
        let (scale_a, scale_b) = (scale_a.view(), scale_b.view());
        for (name, scale) in [("scale_a", &scale_a), ("scale_b", &scale_b)] {
            check_len(&format!("{}: {name}", call()), 1, scale.len())?;
            self.same_device(scale.buffer().device(), &format!("{}: {name}", call()))?;
        }
        let scales = Scales { input_b: IB::DTYPE, a: scale_a, b: scale_b };
        self.gemm_call(&call(), (a.view(), b.view()), c, shape, Some(scales))
    }

    /// The checks and enqueue [`vendor_gemm`](Self::vendor_gemm) and
    /// [`vendor_scaled_gemm`](Self::vendor_scaled_gemm) share, once the
    /// device has said it computes the product.
    fn gemm_call<IA: Element, IB: Element, O: Element>(
        &self,
        call: &str,
        (a, b): (BufferView<'_, B, IA>, BufferView<'_, B, IB>),
        c: &mut impl ViewMut<B, O>,
        shape: &MatmulShape,
        scales: Option<Scales<'_, B>>,
    ) -> Result<()> {
        shape.check_layouts().map_err(|reason| Error::invalid(call, reason))?;
        let c_len = c.view_mut().len();
        let spans = shape.spans().ok_or_else(|| Error::invalid(call, "the sizes overflow"))?;
        for ((name, got), want) in [("a", a.len()), ("b", b.len()), ("c", c_len)].into_iter().zip(spans) {
            check_len(&format!("{call}: matrix {name}"), want, got)?;
        }
        for (name, owner) in [("a", a.buffer().device()), ("b", b.buffer().device())] {
            self.same_device(owner, &format!("{call}: matrix {name}"))?;
        }
        if c_len == 0 {
            return Ok(());
        }
        if shape.k == 0 {
            let (m, n) = (shape.m, shape.n);
            let dense = (m == 1 || shape.c.ld == n) && (shape.batch == 1 || shape.c.stride == m * n);
            if !dense {
                return Err(Error::invalid(call, "an empty sum (k = 0) writes zeros into a dense c only"));
            }
            return self.fill(c, O::zeroed());
        }
        let (cb, c_off, _) = c.view_mut().into_parts();
        self.same_device(cb.device(), &format!("{call}: matrix c"))?;
        let (ia, ib, oc) = (a.offset() * size_of::<IA>(), b.offset() * size_of::<IB>(), c_off * size_of::<O>());
        let scale_at = |v: &BufferView<'_, B, f32>| v.offset() * size_of::<f32>();
        let gemm = Gemm {
            a: GemmOperand { buffer: a.buffer().raw(), offset: ia },
            b: GemmOperand { buffer: b.buffer().raw(), offset: ib },
            c: GemmOperand { buffer: cb.raw(), offset: oc },
            shape: *shape,
            input: IA::DTYPE,
            output: O::DTYPE,
            scaled: scales.as_ref().map(|s| GemmScales {
                input_b: s.input_b,
                scale_a: GemmOperand { buffer: s.a.buffer().raw(), offset: scale_at(&s.a) },
                scale_b: GemmOperand { buffer: s.b.buffer().raw(), offset: scale_at(&s.b) },
            }),
        };
        gemm.check()?;
        self.device.check_usable()?;
        if let Some(lane) = self.lane() {
            let input_b = scales.as_ref().map(|s| s.input_b);
            let shape = GemmShape { shape: *shape, input: IA::DTYPE, output: O::DTYPE, input_b };
            let held = |v: &BufferView<'_, B, f32>| (v.buffer().storage().clone(), scale_at(v));
            let op = Op::Gemm {
                a: (a.buffer().storage().clone(), ia),
                b: (b.buffer().storage().clone(), ib),
                c: (cb.storage().clone(), oc),
                shape,
                scales: scales.as_ref().map(|s| [held(&s.a), held(&s.b)]),
            };
            return lane.push("Stream::vendor_gemm", op);
        }
        // SAFETY: the stream and the buffers are this device's (checked
        // above) and the call has passed `check`; `c` is borrowed mutably and
        // `a`, `b` and the scales shared until the product is enqueued, and
        // after that they are covered as kiln's own kernels' operands are:
        // work on this stream runs after the product, and the typed API's
        // rule for buffers (work on other streams, their frees included, is
        // ordered by the user's events) does the rest.
        unsafe { self.device.raw().gemm(&self.queue.raw, &gemm) }.inspect_err(|e| self.device.note_failure(e))
    }

    /// Enqueue the device's vendor FFT (cuFFT on CUDA): `layout`'s
    /// transforms of `input` (elements of `I`) into `output` (elements of
    /// `O`) in `direction`, not scaled. `I` and `O` are the layout's types
    /// ([`FftLayout::dtypes`]), and each view holds at least the elements
    /// its side spans ([`FftLayout::spans`]), counted from the view's start.
    /// `Unsupported` where the device offers no FFT of the layout's
    /// precision ([`RawDevice::vendor_fft`]), and while the stream is
    /// captured into a graph (vendor FFTs are not recorded).
    ///
    /// # Examples
    /// The CPU offers no vendor FFT (kiln-kernels' `fft` computes its
    /// transforms itself):
    /// ```
    /// use kiln_core::{Complex32, Device, DType, Error, FftDirection, FftKind, FftLayout, FftSide};
    /// use kiln_cpu::Cpu;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let x = s.upload(&[Complex32::new(1.0, 0.0); 8])?;
    /// let mut y = s.alloc::<Complex32>(8)?;
    /// let side = FftSide { stride: 1, dist: 8, embed: [8, 1, 1] };
    /// let layout = FftLayout {
    ///     kind: FftKind::C2C, precision: DType::F32, rank: 1, dims: [8, 1, 1], batch: 1, input: side, output: side,
    /// };
    /// let refused = s.vendor_fft(&x, &mut y, &layout, FftDirection::Forward);
    /// assert!(matches!(refused, Err(Error::Unsupported { .. })));
    /// # Ok(()) }
    /// ```
    pub fn vendor_fft<I: Element, O: Element>(
        &self,
        input: &impl View<B, I>,
        output: &mut impl ViewMut<B, O>,
        layout: &FftLayout,
        direction: FftDirection,
    ) -> Result<()> {
        let input = input.view();
        let (ob, o_off, o_len) = output.view_mut().into_parts();
        let sides = [
            FftOperand {
                buffer: input.buffer().raw(),
                device: input.buffer().device(),
                offset: input.offset(),
                len: input.len(),
                dtype: I::DTYPE,
            },
            FftOperand { buffer: ob.raw(), device: ob.device(), offset: o_off, len: o_len, dtype: O::DTYPE },
        ];
        self.fft_call(sides, layout, direction)
    }

    /// [`vendor_fft`](Self::vendor_fft) in place: `data` is both the input
    /// and the output, laid out alike (a complex-to-complex layout whose two
    /// sides are equal).
    pub fn vendor_fft_in_place<T: Element>(
        &self,
        data: &mut impl ViewMut<B, T>,
        layout: &FftLayout,
        direction: FftDirection,
    ) -> Result<()> {
        let (b, off, len) = data.view_mut().into_parts();
        if layout.input != layout.output {
            return Err(Error::invalid(format!("vendor fft {layout} in place"), "the input and output layouts differ"));
        }
        let side = FftOperand { buffer: b.raw(), device: b.device(), offset: off, len, dtype: T::DTYPE };
        self.fft_call([side, side], layout, direction)
    }

    /// The checks and enqueue of [`vendor_fft`](Self::vendor_fft) and
    /// [`vendor_fft_in_place`](Self::vendor_fft_in_place): each side as
    /// an [`FftOperand`].
    fn fft_call(&self, sides: [FftOperand<'_, B>; 2], layout: &FftLayout, direction: FftDirection) -> Result<()> {
        let call = || format!("vendor fft {layout} ({})", direction.name());
        let supported = self.device.raw().vendor_fft().filter(|v| v.supports(layout.precision));
        let Some(_) = supported else {
            return Err(Error::unsupported(B::KIND, call(), format!("{} offers no such FFT", self.device.name())));
        };
        layout.check()?;
        let (din, dout) = layout.dtypes();
        let spans = layout.spans().ok_or_else(|| Error::invalid(call(), "the layout overflows"))?;
        for ((name, side), (want, span)) in
            ["input", "output"].into_iter().zip(&sides).zip([(din, spans.0), (dout, spans.1)])
        {
            if side.dtype != want {
                return Err(Error::invalid(
                    call(),
                    format!("the {name} holds {}, the layout wants {want}", side.dtype),
                ));
            }
            if side.len < span {
                let len = side.len;
                return Err(Error::invalid(
                    call(),
                    format!("the {name} holds {len} elements; the layout spans {span}"),
                ));
            }
            self.same_device(side.device, &format!("{}: {name}", call()))?;
        }
        if self.lane().is_some() {
            return Err(Error::unsupported(B::KIND, call(), "a vendor FFT is not recorded into graphs"));
        }
        self.device.check_usable()?;
        let [a, b] = sides.map(|side| GemmOperand { buffer: side.buffer, offset: side.offset * side.dtype.size() });
        // The library's scratch: a buffer of this stream like any other,
        // counted in the memory stats and held to their limit, and freed
        // behind the transform when it drops at the end of this call.
        let bytes = self.device.raw().fft_work_size(layout).inspect_err(|e| self.device.note_failure(e))?;
        let work = match bytes {
            0 => None,
            bytes => Some(self.alloc::<u8>(bytes).map_err(|e| match e {
                Error::OutOfMemory { device, requested, counts, .. } => Error::OutOfMemory {
                    device,
                    what: format!("the vendor FFT's work area for {}", call()),
                    requested,
                    counts,
                },
                e => e,
            })?),
        };
        let work = work.as_ref().map(|w| GemmOperand { buffer: w.raw(), offset: 0 });
        let fft = FftCall { input: a, output: b, layout: *layout, direction, work };
        fft.check()?;
        // SAFETY: the stream and the buffers are this device's, each side lies
        // inside its view (checked above), and the two sides are one range
        // laid out alike or disjoint (the borrow rules: the output is borrowed
        // mutably, the input shared). The work area is a fresh buffer of the
        // size asked for, used by nothing else. Work on this stream runs after
        // the transform, and the typed API's rule for buffers covers other streams.
        unsafe { self.device.raw().fft(&self.queue.raw, &fft) }.inspect_err(|e| self.device.note_failure(e))
    }

    /// Record `event` at the current end of this stream.
    pub fn record(&self, event: &Event<B>) -> Result<()> {
        self.same_device(event.device(), "Stream::record")?;
        if let Some(lane) = self.lane() {
            return self.record_in_capture(&lane, event);
        }
        event.set_mark(None);
        self.queue.raw.record(event.raw())
    }

    /// A new event recorded at the current end of this stream.
    pub fn record_event(&self) -> Result<Event<B>> {
        let event = self.device.create_event()?;
        self.record(&event)?;
        Ok(event)
    }

    /// Make work enqueued later on this stream wait until `event` completes
    /// (a cross-stream dependency). Does not block the calling thread.
    ///
    /// An event of another device of this backend orders work across
    /// devices: on CUDA on the device, as for one device; where the backend
    /// cannot, the calling thread waits for the event before returning.
    pub fn wait(&self, event: &Event<B>) -> Result<()> {
        if self.wait_in_capture(event)? {
            return Ok(());
        }
        if self.device.same(event.device()) {
            return self.queue.raw.wait(event.raw());
        }
        self.device.check_usable()?;
        if !self.queue.raw.wait_peer(event.raw())? {
            event.synchronize()?;
        }
        Ok(())
    }

    /// Enqueue a copy from a device range of any device of this backend
    /// (`src`) into a range of this stream's device (`dst`) of the same
    /// length: CuPy's `copy` between devices. On CUDA the driver copies
    /// device to device (peer to peer where the devices allow it) and this
    /// returns at once; on other backends the copy is staged through host
    /// memory: `src` is read on its buffer's stream (waiting for the work
    /// enqueued there), then written on this stream.
    ///
    /// As between streams, the user orders the copy after the work that
    /// writes `src` on another stream (an event of that stream, passed to
    /// [`wait`](Self::wait) here first).
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// # fn main() -> kiln_core::Result<()> {
    /// // Two opened handles are two devices to kiln (each counts its own memory).
    /// let (a, b) = (Device::<Cpu>::open(0)?, Device::<Cpu>::open(0)?);
    /// let x = a.upload(&[1u32, 2, 3])?;
    /// let s = b.stream();
    /// let mut y = s.alloc::<u32>(3)?;
    /// assert!(s.copy(&x, &mut y).is_err(), "copy stays on one device");
    /// s.copy_from_peer(&x, &mut y)?;
    /// assert_eq!(y.to_vec()?, vec![1, 2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn copy_from_peer<T: Element>(&self, src: &impl View<B, T>, dst: &mut impl ViewMut<B, T>) -> Result<()> {
        let what = "Stream::copy_from_peer";
        let (s, so, sl) = src.view().parts();
        if self.device.same(s.device()) {
            return self.copy(src, dst);
        }
        self.refuse_in_capture(what, "a graph runs on one device: copy between devices outside the capture")?;
        {
            let (d, d_off, dl) = dst.view_mut().into_parts();
            check_len("Stream::copy_from_peer (source on another device vs destination)", dl, sl)?;
            self.same_device(d.device(), what)?;
            if sl == 0 {
                return Ok(());
            }
            self.device.check_usable()?;
            s.device().check_usable()?;
            let size = size_of::<T>();
            // SAFETY: `d` is on this stream's device (checked), `s` on another
            // device of this backend; both ranges are inside their buffers.
            if unsafe { self.queue.raw.copy_peer(s.raw(), so * size, d.raw(), d_off * size, sl * size)? } {
                return Ok(());
            }
        }
        let mut staged = vec![T::default(); sl];
        s.stream().copy_to_host(&s.slice(so..so + sl)?, &mut staged)?;
        self.copy_to_device(&staged, dst)
    }

    /// Block until everything enqueued on this stream so far has run; reports
    /// errors kept from earlier asynchronous work.
    pub fn synchronize(&self) -> Result<()> {
        self.refuse_in_capture("Stream::synchronize", BLOCKING)?;
        self.queue.raw.synchronize().inspect_err(|e| self.device.note_failure(e))
    }
}

/// Why a blocking call is refused during a capture.
const BLOCKING: &str =
    "it waits for work that a capture records without running; end the capture (or read after replaying the graph)";

/// Why an asynchronous copy with a host buffer is refused during a capture.
const HOST_ASYNC: &str = "a graph does not hold host buffers: copy to or from device memory inside the capture, and between it and the host outside";

/// Every buffer argument's byte range must lie inside its storage. The views
/// that make arguments guarantee it; this keeps a backend from ever being
/// handed a range past the end of an allocation. No allocation or formatting
/// unless a range is bad: this is on the launch hot path.
fn check_ranges<B: Backend>(kernel: &str, args: &[RawArg<'_, B>]) -> Result<()> {
    for (index, arg) in args.iter().enumerate() {
        if let RawArg::Buffer { buffer, offset, len, .. } = arg {
            let size = buffer.len();
            if offset.checked_add(*len).is_none_or(|end| end > size) {
                return Err(Error::InvalidLaunch {
                    kernel: kernel.to_string(),
                    reason: format!(
                        "buffer argument {index} spans bytes {offset}..{}, past the end of its buffer of {size} bytes",
                        offset
                            .checked_add(*len)
                            .map_or_else(|| format!("{offset}+{len} (overflows)"), |e| e.to_string())
                    ),
                });
            }
        }
    }
    Ok(())
}

/// A scaled product's scales and b's element type, as the stream checked them.
struct Scales<'a, B: Backend> {
    input_b: DType,
    a: BufferView<'a, B, f32>,
    b: BufferView<'a, B, f32>,
}

/// One side of a vendor FFT call: a view's buffer, its device, its first
/// element and length (in elements of `dtype`).
struct FftOperand<'a, B: Backend> {
    buffer: &'a B::Buffer,
    device: &'a Device<B>,
    offset: usize,
    len: usize,
    dtype: DType,
}

impl<B: Backend> Clone for FftOperand<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: Backend> Copy for FftOperand<'_, B> {}

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

mod solver;

pub use solver::SolverArgs;

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use crate::testing::{self, Mock};
    use crate::{Args, DType, Error, LaunchConfig, Program, RawArg};

    #[test]
    fn launch_refuses_a_buffer_range_past_the_storage() {
        let (dev, counters) = testing::device();
        let kernel = dev.kernel(&Program::new("scale")).unwrap();
        let x = dev.alloc::<f32>(4).unwrap();
        let mut y = dev.alloc::<f32>(4).unwrap();
        let cases = [
            // (offset, len): one byte past the 16-byte storage, then an overflowing end.
            (4, 13, "buffer argument 1 spans bytes 4..17, past the end of its buffer of 16 bytes"),
            (8, usize::MAX, &*format!("bytes 8..8+{} (overflows), past the end of its buffer of 16 bytes", usize::MAX)),
        ];
        for (offset, len, message) in cases {
            let mut args = Args::<Mock>::new().arg(&x);
            args.push_raw(RawArg::Buffer { buffer: y.raw(), offset, len, dtype: DType::F32, writable: true });
            // SAFETY: the mock backend runs nothing.
            let err = unsafe { dev.stream().launch(&kernel, LaunchConfig::for_elements(4, 64), args) }.unwrap_err();
            assert!(matches!(&err, Error::InvalidLaunch { kernel, .. } if kernel == "scale"), "{err}");
            assert!(err.to_string().contains(message), "{err}");
        }
        assert_eq!(counters.launches.load(Ordering::SeqCst), 0);

        // The whole storage, and an empty range at its end, are fine.
        let args = Args::<Mock>::new().arg(&x).arg(&mut y);
        // SAFETY: as above.
        unsafe { dev.stream().launch(&kernel, LaunchConfig::for_elements(4, 64), args) }.unwrap();
        let mut args = Args::<Mock>::new();
        args.push_raw(RawArg::Buffer { buffer: x.raw(), offset: 16, len: 0, dtype: DType::F32, writable: false });
        // SAFETY: as above.
        unsafe { dev.stream().launch(&kernel, LaunchConfig::for_elements(4, 64), args) }.unwrap();
        assert_eq!(counters.launches.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn an_enormous_grid_runs_or_is_refused_never_skipped() {
        let (dev, counters) = testing::device();
        let kernel = dev.kernel(&Program::new("k")).unwrap();
        let launch = |config: LaunchConfig| {
            // SAFETY: the mock backend runs nothing.
            unsafe { dev.stream().launch(&kernel, config, Args::new()) }
        };
        // 2^32 x 2^32 threads: 2^64, which wraps to 0 in 64 bits. The block is too large.
        let err = launch(LaunchConfig::new((1 << 16, 1 << 16), (1 << 16, 1 << 16))).unwrap_err();
        assert!(err.to_string().contains("= 4294967296 threads; this device allows 1024"), "{err}");
        assert_eq!(counters.launches.load(Ordering::SeqCst), 0);
        // Every grid extent at the mock's limit of u32::MAX: about 2^106 threads, allowed, so it runs.
        launch(LaunchConfig::new((u32::MAX, u32::MAX, u32::MAX), 1024)).unwrap();
        assert_eq!(counters.launches.load(Ordering::SeqCst), 1);
        // A zero extent is the one launch that does nothing.
        launch(LaunchConfig::new((u32::MAX, 0), 1024)).unwrap();
        assert_eq!(counters.launches.load(Ordering::SeqCst), 1);
    }
}
