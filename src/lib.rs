//! kiln: GPU compute in Rust. One trait layer, CUDA first, wgpu and a CPU
//! reference, with parallel patterns verified on every backend.
//!
//! kiln has two tiers over the same backends:
//!
//! - **The run-time tier**, at the top of this crate: [`Device`], [`Stream`],
//!   [`Buffer`], [`HostBuffer`], [`Event`], [`Kernel`] and the n-d
//!   [`Array`] (see [`mod@array`]) work on whichever
//!   backend was found while the program runs ([`Device::best`],
//!   `KILN_BACKEND=cpu|cuda|wgpu`), and every pattern of [`kernels`] takes
//!   them. No generic parameters; a value can sit in a plain struct field.
//! - **The typed tier**, in [`typed`]: `typed::Device<B>` and friends, generic
//!   over the backend `B` and free of any dispatch, for code that wants
//!   static dispatch; [`typed::kernels`] has the same patterns. A run-time
//!   value hands out its typed one (`dev.typed::<Cuda>()`), and
//!   [`Device::visit`] runs generic code ([`DeviceVisitor`]) on it.
//!
//! The backends are cargo features: `cuda` (NVRTC, cuBLAS) and `wgpu`
//! (Vulkan), both on by default; the CPU backend is always there. Without a
//! feature, opening that backend is an error saying it was not compiled in.
//! A third default feature, `cpu-gemm`, gives the CPU's f32 and f64 matrix
//! products the gemm and faer crates; without it they go through
//! matrixmultiply (already there through ndarray), slower on large
//! matrices. [`Device::best_with_report`] says which backends a program
//! passed over and why; [`ndarray`] is kiln's own, re-exported.
//!
//! # Examples
//! ```
//! use kiln::kernels::reduce::{reduce, ReduceOp};
//! use kiln::kernels::sort::{sort, SortOrder};
//!
//! # fn main() -> kiln::Result<()> {
//! // kiln::Device::best() takes CUDA, else a wgpu GPU, else the CPU.
//! let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
//! let s = dev.stream();
//! let mut x = s.upload(&[3.0f32, 1.0, 2.0])?;
//! sort(&s, &mut x, SortOrder::Ascending)?;
//! assert_eq!(x.to_vec()?, [1.0, 2.0, 3.0]);
//! assert_eq!(reduce(&s, ReduceOp::Sum, &x)?, 6.0);
//! # Ok(()) }
//! ```
//!
//! The same on the typed tier, generic over the backend:
//! ```
//! use kiln::typed::kernels::reduce::{reduce, ReduceOp};
//! use kiln::{Backend, Cpu};
//!
//! fn total<B: Backend>(dev: &kiln::typed::Device<B>) -> kiln::Result<f32> {
//!     let s = dev.stream();
//!     reduce(&s, ReduceOp::Sum, &s.upload(&[1.0f32, 2.0, 3.0])?)
//! }
//! # fn main() -> kiln::Result<()> {
//! assert_eq!(total(&kiln::typed::Device::<Cpu>::open(0)?)?, 6.0);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod array;
pub mod kernels;
pub mod registry;
mod runtime;

pub use kiln_core as core;
pub use kiln_core::DeviceVisitor;
pub use kiln_core::{
    Backend, BackendKind, CachePolicy, Complex, Complex32, Complex64, DType, DeviceInfo, DeviceKind, Dim3, Element,
    Error, F8E4M3, F8E5M2, Features, HostArgs, HostMemoryStats, IndexWidth, Language, LaunchConfig, Limits,
    MemoryCounts, MemoryInfo, MemoryLimit, MemoryStats, Precision, Priority, Program, Result, bf16, f16,
};
pub use kiln_cpu::Cpu;
#[cfg(feature = "cuda")]
pub use kiln_cuda::{Cuda, nccl};
#[cfg(feature = "wgpu")]
pub use kiln_wgpu::Wgpu;
/// The ndarray that [`Array::from_ndarray`] and [`Array::to_ndarray`] speak:
/// use `kiln::ndarray` rather than a dependency of your own, and the
/// versions always match.
pub use ndarray;
pub use registry::{BestReport, PassedOver, probe};
pub use runtime::{
    Args, Array, Buffer, BufferView, BufferViewMut, Device, Event, Graph, HostBuffer, Kernel, KernelArg, Stream, Tier,
    View, ViewMut,
};

/// The typed tier: devices, streams, buffers, events and kernels generic over
/// their backend `B`, with no run-time dispatch (the types of [`kiln_core`]),
/// and the patterns written for them ([`kiln_kernels`]).
///
/// # Examples
/// ```
/// use kiln::typed::{Device, Stream};
/// use kiln::Cpu;
/// # fn main() -> kiln::Result<()> {
/// let dev: Device<Cpu> = Device::open(0)?;
/// let s: Stream<Cpu> = dev.stream();
/// assert_eq!(s.upload(&[1u8, 2])?.to_vec()?, [1, 2]);
/// # Ok(()) }
/// ```
pub mod typed {
    pub use kiln_core::{
        Args, Buffer, BufferView, BufferViewMut, Device, Event, Graph, HostBuffer, Kernel, KernelArg, Stream, View,
        ViewMut,
    };
    pub use kiln_kernels as kernels;
}

// The README's example is compiled and run with the doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
