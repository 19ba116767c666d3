//! kiln-cuda: kiln's CUDA backend, on cudarc's driver and NVRTC bindings.
//!
//! It implements kiln-core's backend traits for [`Cuda`]: devices, device and
//! page-locked host memory, non-blocking streams with priorities, events,
//! kernels compiled at run time by NVRTC with an on-disk cache, cuBLAS as
//! the devices' vendor GEMM (feature `cublas`, default on) and cuFFT as
//! their vendor FFT (feature `cufft`, default on). Users
//! write against kiln-core's typed API (`Device<Cuda>`, `Buffer`, `Stream`,
//! ...); the types here are what that API holds underneath.
//!
//! # Design choices
//!
//! - **Loaded at run time.** cudarc loads libcuda and libnvrtc when first
//!   used (`fallback-dynamic-loading`), so one binary builds anywhere and runs
//!   where a driver is. cudarc panics on a missing library, so every entry
//!   point checks for it first: without a driver, [`Cuda::devices`] and
//!   `open` answer `BackendUnavailable("no CUDA driver: libcuda.so not
//!   found")`; without NVRTC, compiling answers `Unsupported`.
//! - **Explicit data order, tracked lifetimes.** cudarc's automatic
//!   per-buffer event tracking is off: the order of data between streams is
//!   the user's, through events. What kiln tracks itself is memory: a buffer
//!   is allocated and freed on its stream (`cuMemAllocAsync`/`cuMemFreeAsync`,
//!   pool memory kept for reuse) and its uses on other streams are recorded,
//!   so its memory is never reused while one may still run (see [Memory
//!   across streams](#memory-across-streams)); dropping a buffer never waits
//!   for the device. Streams are `CU_STREAM_NON_BLOCKING`. Copies from
//!   ordinary (pageable) host memory block until the data has arrived, as
//!   `cudaMemcpy` does, so an uploaded buffer is ready for every stream;
//!   copies that overlap other work go through page-locked `HostBuffer`s.
//! - **Errors with provenance.** Driver codes are sorted into kiln's error
//!   kinds in one file (`error.rs`). A kernel fault (illegal address,
//!   misaligned access, trap) is reported as `DeviceFault` naming the kernel
//!   launched last on the stream where it surfaced; the device is then
//!   unusable and every later call says `DeviceLost` with the first fault.
//!   Errors met in `Drop` are kept and reported at the next explicit
//!   synchronize (`Stream::synchronize`, `Device::synchronize`), never by a
//!   later copy: `upload` and `to_vec` report their own outcome only.
//! - **Compile once.** NVRTC targets the device's own architecture and
//!   produces a CUBIN (PTX only where NVRTC does not know the device). The
//!   disk cache ([`CacheStatus`]) is keyed by source, options, architecture
//!   and NVRTC version, written atomically and checksummed; kiln-core's
//!   `Device::kernel` adds the in-memory cache on top.
//! - **A lean launch.** Argument counts and sizes are checked against the
//!   kernel's parameters as the driver reports them (`cuFuncGetParamInfo`),
//!   so a missing or mis-sized argument is an error rather than memory
//!   corruption; the check and the argument array use no heap memory.
//! - **Lower layers in one file.** Every call into cudarc's `sys` and
//!   `result` layers is in `ffi.rs` (cuBLAS's in `blas.rs`, cuFFT's in
//!   `fft.rs`), each with its `SAFETY` note; the rest uses cudarc's safe
//!   types.
//!
//! # Memory across streams
//!
//! Any stream of a device may use any buffer of that device: kernel
//! arguments, copies and fills take buffers (and views of them) without
//! asking which stream allocated them. What kiln guarantees, with safe calls
//! only:
//!
//! - **Memory outlives every use.** A buffer's memory is not released, nor
//!   handed out again by the pool, before every operation enqueued on any
//!   stream that uses the buffer (or a view of it) has completed, however
//!   early the buffer is dropped. A use on the buffer's own stream is covered
//!   by stream order, as the free is enqueued there. A use on another stream
//!   records an event (one per buffer and stream, re-recorded at each use);
//!   the drop makes the buffer's stream wait for those events before
//!   `cuMemFreeAsync` (without memory pools, the host waits before `cuMemFree`).
//! - **A buffer exists before it is used.** The first use of a buffer on
//!   another stream is ordered after its allocation, which
//!   `cuMemAllocAsync` makes on the allocating stream only (skipped when that
//!   stream is known to have completed it, e.g. by a synchronize, as every
//!   `upload` does).
//! - **One stream costs nothing.** A buffer used on its own stream costs one
//!   pointer compare per operation: no lock, no event, no allocation.
//!
//! What stays the user's job is the order of the *data*: when stream B reads
//! what stream A writes (or overwrites what A reads), B must wait for an event
//! A recorded after that work (`B.wait(&event)`, or a synchronize of A). kiln
//! keeps the memory valid, so an unordered access reads stale or partial
//! values of that buffer, never memory belonging to another one.
//!
//! Raw device addresses taken out of kiln ([`CudaBuffer::device_ptr`], cudarc
//! interop through [`CudaStream::driver_stream`]) are outside this tracking:
//! work enqueued with them must end before the buffer is dropped.
//!
//! # CUDA concepts and kiln's names
//!
//! | CUDA | kiln | here |
//! |---|---|---|
//! | `CUdevice` + primary `CUcontext` | `Device<Cuda>` | [`CudaDevice`] |
//! | `CUstream` (non-blocking, with priority) | `Stream` | [`CudaStream`] |
//! | `CUevent` | `Event` | [`CudaEvent`] |
//! | `cuMemAllocAsync` / `cuMemFreeAsync` | `Buffer<T>` (and its views) | [`CudaBuffer`] |
//! | `cuMemHostAlloc` (page-locked) | `HostBuffer<T>` | [`CudaHostBuffer`] |
//! | `CUmodule` / `CUfunction` | `Kernel` | [`CudaKernel`] |
//! | `nvrtcCompileProgram` | `Program` + `Device::kernel` | `compile.rs`, `cache.rs` |
//! | `cuLaunchKernel` | `Stream::launch` with `Args` and `LaunchConfig` | `launch.rs` |
//! | `cuMemcpy*Async` / `cuMemset*Async` | `Stream::copy*`, `Stream::fill` | [`CudaStream`] |
//! | `cuStreamWaitEvent` | `Stream::wait` | [`CudaStream`] |
//! | `cublasHandle_t` (one per device), `cublasSgemm`/`Dgemm`/`GemmEx` | `RawDevice::gemm` (kiln-kernels' `MatmulStrategy::Vendor`) | `blas.rs` (feature `cublas`) |
//! | `cufftHandle` (one plan per layout, a work area per call), `cufftExecC2C`/`R2C`/`C2R`/`Z2Z`/`D2Z`/`Z2D` | `RawDevice::fft` (`Stream::vendor_fft`, kiln-kernels' `fft`) | `fft.rs` (feature `cufft`) |
//! | stream priority (lower = first) | `Priority::{Low, Normal, High}` | [`clamp_priority`] |
//! | `CUDA_ERROR_ILLEGAL_ADDRESS`, ... | `Error::DeviceFault`, then `Error::DeviceLost` | `error.rs`, `state.rs` |
//!
//! # Examples
//!
//! The same code runs on the CPU reference backend, which is what runs here
//! when there is no GPU:
//! ```
//! use kiln_core::{Backend, Device};
//!
//! fn round_trip<B: Backend>(dev: &Device<B>) -> kiln_core::Result<Vec<u32>> {
//!     let buf = dev.upload(&[1u32, 2, 3])?;
//!     buf.to_vec()
//! }
//!
//! # fn main() -> kiln_core::Result<()> {
//! match Device::<kiln_cuda::Cuda>::open(0) {
//!     Ok(gpu) => assert_eq!(round_trip(&gpu)?, vec![1, 2, 3]),
//!     Err(e) => println!("no CUDA here ({e}); the CPU does it"),
//! }
//! assert_eq!(round_trip(&Device::<kiln_cpu::Cpu>::open(0)?)?, vec![1, 2, 3]);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod blas;
#[cfg(feature = "cublas")]
mod blas_lt;
mod cache;
mod compile;
mod device;
mod error;
mod event;
mod ffi;
mod fft;
mod graph;
mod info;
mod kernel;
mod launch;
mod memory;
pub mod nccl;
mod pool_policy;
mod solver;
mod state;
mod stream;

pub use blas::{cublas_handles, CublasHandles};
pub use cache::CacheStatus;
pub use device::CudaDevice;
pub use event::CudaEvent;
pub use fft::{cufft_plans, CufftPlans};
pub use kernel::CudaKernel;
pub use memory::{CudaBuffer, CudaHostBuffer};
pub use stream::{clamp_priority, CudaStream};

use kiln_core::{Backend, BackendKind, DeviceInfo, Language, Result};

/// The CUDA backend.
///
/// # Examples
/// ```
/// use kiln_core::{Backend, Error};
/// use kiln_cuda::Cuda;
/// match Cuda::devices() {
///     Ok(devices) => assert!(!devices.is_empty()),
///     Err(Error::BackendUnavailable { reason, .. }) => println!("{reason}"),
///     Err(e) => panic!("{e}"),
/// }
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Cuda;

impl Backend for Cuda {
    const KIND: BackendKind = BackendKind::Cuda;
    const LANGUAGE: Language = Language::Cuda;
    type Device = CudaDevice;
    type Stream = CudaStream;
    type Buffer = CudaBuffer;
    type HostBuffer = CudaHostBuffer;
    type Event = CudaEvent;
    type Kernel = CudaKernel;

    fn devices() -> Result<Vec<DeviceInfo>> {
        info::list()
    }

    fn open(ordinal: usize) -> Result<CudaDevice> {
        CudaDevice::open(ordinal)
    }
}
