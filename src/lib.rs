//! kiln: GPU compute in Rust. One trait layer, CUDA first, wgpu and a CPU
//! reference, with parallel patterns verified on every backend.
//!
//! This crate is the facade: it re-exports the typed API of
//! [`kiln_core`], the backends compiled in, the [`kernels`], and offers
//! [`Device`], a device whose backend is chosen at run time
//! ([`Device::best`], `KILN_BACKEND=cpu|cuda|wgpu`).
//!
//! Generic code is written against [`DeviceOf<B>`] (the typed device of
//! backend `B`); a [`DeviceVisitor`] hands a run-time-chosen [`Device`] to it.
//!
//! # Examples
//! ```
//! use kiln::{Backend, Device, DeviceOf, DeviceVisitor};
//!
//! struct RoundTrip;
//! impl DeviceVisitor for RoundTrip {
//!     type Output = kiln::Result<Vec<f32>>;
//!     fn visit<B: Backend>(self, dev: &DeviceOf<B>) -> Self::Output {
//!         dev.upload(&[1.0f32, 2.0, 3.0])?.to_vec()
//!     }
//! }
//!
//! # fn main() -> kiln::Result<()> {
//! let dev = Device::open(kiln::BackendKind::Cpu, 0)?;
//! assert_eq!(dev.visit(RoundTrip)??, vec![1.0, 2.0, 3.0]);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod bench;
pub mod registry;
#[path = "kernels/mod.rs"]
pub mod rt_kernels;
pub mod runtime;

pub use kiln_core as core;
pub use kiln_core::dynamic::{AnyDevice, BackendEntry, DeviceVisitor};
pub use kiln_core::{
    bf16, f16, Args, Backend, BackendKind, Buffer, BufferView, BufferViewMut, DType, DeviceInfo, DeviceKind, Dim3,
    Element, Error, Event, Features, HostArgs, HostBuffer, Kernel, LaunchConfig, Limits, MemoryInfo, Priority, Program,
    Result, Stream, View, ViewMut,
};
pub use kiln_cpu::Cpu;
pub use kiln_cuda::Cuda;
pub use kiln_kernels as kernels;
pub use kiln_wgpu::Wgpu;
pub use registry::{probe, Backends, Device};

/// The typed device of backend `B` (`kiln_core::Device<B>`).
pub type DeviceOf<B> = kiln_core::Device<B>;

// The README's example is compiled and run with the doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
