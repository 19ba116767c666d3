//! The backend contract: associated types, and the traits of the active roles.
//!
//! Backends deal in untyped storage and byte ranges; the typed, checked API in
//! this crate ([`Device`](crate::Device), [`Buffer`](crate::Buffer), ...) is
//! built on top. Methods that trust their caller with ranges, lifetimes or
//! kernel behaviour are `unsafe fn`, each with its `# Safety` bullets.

use std::fmt::Debug;
use std::time::Duration;

use crate::{
    BackendKind, CachePolicy, CacheStats, DeviceInfo, Error, FftCall, FftLayout, Gemm, GraphStep, Language,
    LaunchConfig, MemoryInfo, Priority, Program, RawArg, RawGraph, Result, SolverCall, SolverLayout, VendorFft,
    VendorGemm, VendorSolver,
};

/// A backend: a set of associated types, in the manner of wgpu-hal's `Api`.
pub trait Backend: 'static + Sized + Send + Sync + Debug {
    /// Which backend this is (for messages and run-time choice; kernels
    /// choose their plans from [`DeviceInfo`]'s limits and features instead).
    const KIND: BackendKind;
    /// The language of the kernel sources this backend compiles: the one
    /// [`RawDevice::compile`] looks up with [`Program::source_for`].
    const LANGUAGE: Language;
    /// An opened device.
    type Device: RawDevice<B = Self>;
    /// An ordered queue of work.
    type Stream: RawStream<B = Self>;
    /// Untyped device storage, freed in stream order when dropped.
    type Buffer: RawBuffer;
    /// Host memory the device can copy to and from asynchronously (page-locked on CUDA).
    type HostBuffer: RawHostBuffer;
    /// A point in a stream.
    type Event: RawEvent;
    /// A compiled entry point.
    type Kernel: RawKernel;

    /// The devices this backend sees; `Err(BackendUnavailable)` when it cannot
    /// run on this machine (no driver, no adapter), saying why.
    fn devices() -> Result<Vec<DeviceInfo>>;

    /// Open device `ordinal`.
    fn open(ordinal: usize) -> Result<Self::Device>;
}

/// An opened device.
pub trait RawDevice: Send + Sync + Sized + 'static {
    /// The backend.
    type B: Backend<Device = Self>;

    /// Identity, limits and features.
    fn info(&self) -> &DeviceInfo;

    /// Free and total memory now.
    fn memory(&self) -> Result<MemoryInfo>;

    /// Give memory the allocator keeps for reuse back to the driver until
    /// it holds at most `keep` bytes besides live allocations (CUDA's
    /// `cuMemPoolTrimTo`). The default, for allocators that keep nothing
    /// back, does nothing.
    fn trim_memory(&self, keep: u64) -> Result<()> {
        let _ = keep;
        Ok(())
    }

    /// Bound the memory the allocator keeps for reuse by `policy` from now
    /// on (see [`CachePolicy`]), freeing what passes the new bound. The
    /// default, for allocators that keep nothing back, does nothing.
    fn set_cache_policy(&self, policy: CachePolicy) -> Result<()> {
        let _ = policy;
        Ok(())
    }

    /// The allocator's memory in use and kept for reuse, with the policy's
    /// bound on the latter. The default, for allocators that keep nothing
    /// back, is all zeros.
    fn cache_stats(&self) -> Result<CacheStats> {
        Ok(CacheStats::default())
    }

    /// A new stream; the priority is clamped to what the device supports.
    fn create_stream(&self, priority: Priority) -> Result<<Self::B as Backend>::Stream>;

    /// A new event, not yet recorded.
    fn create_event(&self) -> Result<<Self::B as Backend>::Event>;

    /// Host memory of `bytes` bytes the device can copy asynchronously, zeroed.
    fn alloc_host(&self, bytes: usize) -> Result<<Self::B as Backend>::HostBuffer>;

    /// Compile `program`'s source in [`Backend::LANGUAGE`]; `Unsupported`
    /// when it has none (the error of [`Program::source_for`]).
    fn compile(&self, program: &Program) -> Result<<Self::B as Backend>::Kernel>;

    /// Block until all work on every stream of this device is done; reports
    /// errors kept from earlier asynchronous work (frees in `Drop`, faults).
    fn synchronize(&self) -> Result<()>;

    /// The vendor library's matrix product this device offers (cuBLAS on
    /// CUDA), if any: its name and the dtypes it multiplies. `None`, the
    /// default, means "not offered"; [`gemm`](RawDevice::gemm) then refuses.
    fn vendor_gemm(&self) -> Option<VendorGemm> {
        None
    }

    /// Enqueue `call` on `stream` with the vendor library: `c = a . b`,
    /// row-major. `Err(Unsupported)` where [`vendor_gemm`](RawDevice::vendor_gemm)
    /// offers none for the call's dtypes (the default refuses every call).
    ///
    /// # Safety
    /// - `stream` and every buffer of `call` belong to this device.
    /// - `call` has passed [`Gemm::check`]: m, n and k are at least 1, each
    ///   matrix lies inside its buffer, and `c` overlaps neither `a` nor `b`.
    /// - Until the product has run on `stream` (an event recorded after it has
    ///   completed), no other work writes `a`, `b` or `c`, reads `c`, or
    ///   frees any of the three buffers (a buffer is freed on its own stream,
    ///   which must therefore be ordered after `stream`).
    unsafe fn gemm(&self, stream: &<Self::B as Backend>::Stream, call: &Gemm<'_, Self::B>) -> Result<()> {
        let _ = stream;
        Err(Error::unsupported(<Self::B as Backend>::KIND, call.to_string(), "the backend offers no vendor GEMM"))
    }

    /// The vendor library's FFT this device offers (cuFFT on CUDA), if any:
    /// its name and the precisions it transforms. `None`, the default, means
    /// "not offered"; [`fft`](RawDevice::fft) then refuses.
    fn vendor_fft(&self) -> Option<VendorFft> {
        None
    }

    /// The bytes of scratch memory the vendor FFT needs for one call of
    /// `layout` ([`FftCall::work`]); the default, 0, for devices that need
    /// none. Errors are those of preparing the transform (cuFFT makes its
    /// plan here, once per layout).
    fn fft_work_size(&self, layout: &FftLayout) -> Result<usize> {
        let _ = layout;
        Ok(0)
    }

    /// Enqueue `call` on `stream` with the vendor library, not scaled.
    /// `Err(Unsupported)` where [`vendor_fft`](RawDevice::vendor_fft) offers
    /// none for the call's precision (the default refuses every call).
    ///
    /// # Safety
    /// - `stream` and both buffers of `call` belong to this device.
    /// - `call` has passed [`FftCall::check`], each side lies inside its
    ///   buffer, and the output overlaps the input not at all or exactly
    ///   (an in-place complex transform: same offset and layout).
    /// - `call.work`, where given, holds [`fft_work_size`](RawDevice::fft_work_size)
    ///   bytes of the layout inside its buffer, overlaps neither side, and is
    ///   not used by other work (nor freed) until the transform has run.
    /// - Until the transform has run on `stream`, no other work writes the
    ///   input or the output, reads the output, or frees either buffer.
    unsafe fn fft(&self, stream: &<Self::B as Backend>::Stream, call: &FftCall<'_, Self::B>) -> Result<()> {
        let _ = stream;
        Err(Error::unsupported(<Self::B as Backend>::KIND, call.to_string(), "the backend offers no vendor FFT"))
    }

    /// The vendor library's dense solvers this device offers (cuSOLVER on
    /// CUDA), if any: its name and precisions. `None`, the default, means
    /// "not offered"; [`solver`](RawDevice::solver) then refuses.
    fn vendor_solver(&self) -> Option<VendorSolver> {
        None
    }

    /// The bytes of scratch memory one call of `layout` needs
    /// ([`SolverCall::work`]); the default, 0.
    fn solver_work_size(&self, layout: &SolverLayout) -> Result<usize> {
        let _ = layout;
        Ok(0)
    }

    /// Enqueue `call` on `stream` with the vendor library.
    /// `Err(Unsupported)` where [`vendor_solver`](RawDevice::vendor_solver)
    /// offers none for the call's precision (the default refuses every call).
    ///
    /// # Safety
    /// - `stream` and every buffer of `call` belong to this device.
    /// - `call` has passed [`SolverCall::check`], each operand holds the
    ///   elements [`SolverLayout::spans`] gives it from its offset inside its
    ///   buffer, no two operands overlap, and `call.work`, where given, holds
    ///   [`solver_work_size`](RawDevice::solver_work_size) bytes.
    /// - Until the call has run on `stream`, no other work touches its
    ///   operands or frees their buffers.
    unsafe fn solver(&self, stream: &<Self::B as Backend>::Stream, call: &SolverCall<'_, Self::B>) -> Result<()> {
        let _ = stream;
        Err(Error::unsupported(<Self::B as Backend>::KIND, call.to_string(), "the backend offers no vendor solver"))
    }

    /// The backend's own executable form of a captured graph (CUDA: the
    /// steps captured into a `CUgraphExec`), launched as one unit; `None`,
    /// the default, where the backend has none, and a launch of the graph
    /// enqueues its steps one by one.
    ///
    /// `steps` come in an order that respects their dependencies; each runs
    /// on its lane (`0..lanes`), after the lane's earlier steps and, for a
    /// [`Join`](crate::GraphOp::Join), after the lane's step that set the mark.
    ///
    /// # Safety
    /// - Every buffer and kernel of `steps` belongs to this device, and each
    ///   step has passed the checks its [`RawStream`] method's `# Safety` asks for.
    /// - A [`Join`](crate::GraphOp::Join) names a mark set by an earlier step,
    ///   and every lane's last step is an ancestor of lane 0's last step.
    unsafe fn instantiate_graph(
        &self,
        steps: &[GraphStep<'_, Self::B>],
        lanes: usize,
    ) -> Result<Option<Box<dyn RawGraph<Self::B>>>> {
        let _ = (steps, lanes);
        Ok(None)
    }
}

/// An ordered queue of work on one device.
pub trait RawStream: Send + Sync + Sized + 'static {
    /// The backend.
    type B: Backend<Stream = Self>;

    /// The stream's priority after clamping.
    fn priority(&self) -> Priority;

    /// Allocate `bytes` bytes of device storage, ordered on this stream; its
    /// contents are unspecified until written. It is freed on this stream when dropped.
    fn alloc(&self, bytes: usize) -> Result<<Self::B as Backend>::Buffer>;

    /// Copy `src` into `dst` at `dst_offset`. `src` is no longer read once this returns.
    ///
    /// # Safety
    /// - `dst` belongs to this stream's device.
    /// - `dst_offset + src.len() <= dst.len()`.
    unsafe fn write(&self, dst: &<Self::B as Backend>::Buffer, dst_offset: usize, src: &[u8]) -> Result<()>;

    /// Copy `dst.len()` bytes from `src` at `src_offset` into `dst`; blocks
    /// until they are there (all earlier work on the stream is done).
    ///
    /// # Safety
    /// - `src` belongs to this stream's device.
    /// - `src_offset + dst.len() <= src.len()`.
    unsafe fn read(&self, src: &<Self::B as Backend>::Buffer, src_offset: usize, dst: &mut [u8]) -> Result<()>;

    /// Enqueue a copy of `bytes` bytes from host buffer `src` to `dst`; returns
    /// before the copy is done.
    ///
    /// # Safety
    /// - `dst` belongs to this stream's device and `src` to the same device.
    /// - `src_offset + bytes <= src.len()` and `dst_offset + bytes <= dst.len()`.
    /// - `src` is neither written on the host nor freed until the copy is done
    ///   (an event recorded after it has completed).
    unsafe fn write_async(
        &self,
        dst: &<Self::B as Backend>::Buffer,
        dst_offset: usize,
        src: &<Self::B as Backend>::HostBuffer,
        src_offset: usize,
        bytes: usize,
    ) -> Result<()>;

    /// Enqueue a copy of `bytes` bytes from `src` to host buffer `dst`; returns
    /// before the copy is done.
    ///
    /// # Safety
    /// - `src` belongs to this stream's device and `dst` to the same device.
    /// - `src_offset + bytes <= src.len()` and `dst_offset + bytes <= dst.len()`.
    /// - `dst` is neither read nor written on the host, nor freed, until the
    ///   copy is done (an event recorded after it has completed).
    unsafe fn read_async(
        &self,
        src: &<Self::B as Backend>::Buffer,
        src_offset: usize,
        dst: &<Self::B as Backend>::HostBuffer,
        dst_offset: usize,
        bytes: usize,
    ) -> Result<()>;

    /// Enqueue a device-to-device copy of `bytes` bytes.
    ///
    /// # Safety
    /// - Both buffers belong to this stream's device.
    /// - `src_offset + bytes <= src.len()` and `dst_offset + bytes <= dst.len()`.
    /// - If `src` and `dst` are the same buffer the ranges do not overlap.
    unsafe fn copy(
        &self,
        src: &<Self::B as Backend>::Buffer,
        src_offset: usize,
        dst: &<Self::B as Backend>::Buffer,
        dst_offset: usize,
        bytes: usize,
    ) -> Result<()>;

    /// Enqueue a copy of `bytes` bytes from `src`, a buffer of another
    /// device of this backend, into `dst` of this stream's device, where the
    /// backend copies between its devices itself (CUDA: peer access, or the
    /// driver's staging); `Ok(false)` where it does not, and the typed layer
    /// stages the copy through host memory.
    ///
    /// # Safety
    /// - `dst` belongs to this stream's device; `src` to another device of this backend.
    /// - `src_offset + bytes <= src.len()` and `dst_offset + bytes <= dst.len()`.
    unsafe fn copy_peer(
        &self,
        src: &<Self::B as Backend>::Buffer,
        src_offset: usize,
        dst: &<Self::B as Backend>::Buffer,
        dst_offset: usize,
        bytes: usize,
    ) -> Result<bool> {
        let _ = (src, src_offset, dst, dst_offset, bytes);
        Ok(false)
    }

    /// Make later work on this stream wait until `event`, recorded on a
    /// stream of another device of this backend, has completed, where the
    /// backend can (CUDA); `Ok(false)` where it cannot, and the typed layer
    /// waits for the event on the host instead.
    fn wait_peer(&self, event: &<Self::B as Backend>::Event) -> Result<bool> {
        let _ = event;
        Ok(false)
    }

    /// Enqueue a fill of `bytes` bytes of `dst` with a repeated `pattern`.
    ///
    /// # Safety
    /// - `dst` belongs to this stream's device and `offset + bytes <= dst.len()`.
    /// - `pattern.len()` is 1, 2, 4, 8 or 16, and divides both `offset` and `bytes`.
    unsafe fn fill(
        &self,
        dst: &<Self::B as Backend>::Buffer,
        offset: usize,
        bytes: usize,
        pattern: &[u8],
    ) -> Result<()>;

    /// Enqueue a kernel launch.
    ///
    /// # Safety
    /// - `kernel` was compiled on this stream's device, and every buffer in `args` belongs to it.
    /// - `config` has passed [`LaunchConfig::validate`] against the device's limits and is not empty.
    /// - The kernel reads and writes only inside the byte ranges of its buffer
    ///   arguments, writes only those marked writable, and takes `args` in its
    ///   parameter order and types.
    /// - No writable range overlaps another argument's range.
    unsafe fn launch(
        &self,
        kernel: &<Self::B as Backend>::Kernel,
        config: &LaunchConfig,
        args: &[RawArg<'_, Self::B>],
    ) -> Result<()>;

    /// Record `event` at the current end of this stream.
    fn record(&self, event: &<Self::B as Backend>::Event) -> Result<()>;

    /// Make later work on this stream wait until `event` has completed.
    fn wait(&self, event: &<Self::B as Backend>::Event) -> Result<()>;

    /// Block until everything enqueued so far is done; reports errors kept
    /// from earlier asynchronous work.
    fn synchronize(&self) -> Result<()>;
}

/// Untyped device storage.
pub trait RawBuffer: Send + Sync + Debug + 'static {
    /// Size in bytes.
    fn len(&self) -> usize;
    /// Whether the size is zero.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Host memory for asynchronous copies.
pub trait RawHostBuffer: Send + Sync + 'static {
    /// Size in bytes.
    fn len(&self) -> usize;
    /// Whether the size is zero.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The bytes.
    ///
    /// # Safety
    /// - No asynchronous copy into this buffer is in flight.
    unsafe fn bytes(&self) -> &[u8];
    /// The bytes, writable.
    ///
    /// # Safety
    /// - No asynchronous copy from or into this buffer is in flight.
    unsafe fn bytes_mut(&mut self) -> &mut [u8];
}

/// A point in a stream.
pub trait RawEvent: Send + Sync + 'static {
    /// Whether the work before the event has completed (true if never recorded).
    fn query(&self) -> Result<bool>;
    /// Block until the work before the event has completed.
    fn synchronize(&self) -> Result<()>;
    /// Device time from `start` to this event; both must be recorded and complete.
    fn elapsed_since(&self, start: &Self) -> Result<Duration>;
}

/// A compiled entry point.
pub trait RawKernel: Send + Sync + 'static {
    /// The entry-point name.
    fn name(&self) -> &str;
}
