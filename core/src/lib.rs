//! kiln-core: the trait layer and the typed API of kiln.
//!
//! kiln runs the same host code on CUDA, wgpu and the CPU. This crate holds
//! what they share and depends on none of them:
//!
//! - the backend contract ([`Backend`] with its associated types, and the
//!   traits of the active roles [`RawDevice`], [`RawStream`], [`RawEvent`], ...),
//!   which deals in untyped storage and byte ranges and whose trusting methods
//!   are `unsafe fn` with written `# Safety` contracts; optional capabilities
//!   (a vendor library's matrix product, [`RawDevice::gemm`]) are trait methods
//!   whose defaults say "not offered";
//! - the typed, checked API users write against: [`Device`], [`Buffer`] and its
//!   views, [`HostBuffer`], [`Stream`], [`Event`], [`Kernel`] built from a
//!   [`Program`] (one source per [`Language`]; each backend names the one it
//!   compiles), [`LaunchConfig`] validated against the device's [`Limits`];
//! - what a device can do, as data kernels choose their plans from
//!   ([`DeviceInfo`]'s [`Limits`] and [`Features`]: forward progress between
//!   blocks, index width, vector width, f64, f16, bf16), never its backend's
//!   name; and the kernel ABI's length convention in one place
//!   ([`IndexWidth`], [`Args::length`]);
//! - the one list of backends, [`backend_list!`], from which [`BackendKind`]
//!   here and the `kiln` crate's run-time tier and registry are generated;
//! - one error type, [`Error`], whose messages name what, where and why;
//! - [`DeviceVisitor`], generic code over [`Backend`] that `kiln::Device`
//!   (the run-time tier's device, an enum with one arm per backend) runs
//!   with its concrete backend type.
//!
//! Design choices: static dispatch everywhere inside the workspace; explicit
//! stream order (a buffer is freed on the stream it was allocated on, and
//! streams are ordered only by events the user records and waits on); calls
//! that block the host say so in their docs; no panics in library paths.
//!
//! # Examples
//! ```
//! use kiln_core::{Args, Device, LaunchConfig, Program};
//! use kiln_cpu::Cpu;
//!
//! fn add_host(args: &mut kiln_core::HostArgs<'_>) -> kiln_core::Result<()> {
//!     let (a, b) = (args.input::<f32>(0)?, args.input::<f32>(1)?);
//!     for ((c, a), b) in args.output::<f32>(2)?.iter_mut().zip(a).zip(b) {
//!         *c = a + b;
//!     }
//!     Ok(())
//! }
//!
//! # fn main() -> kiln_core::Result<()> {
//! let dev = Device::<Cpu>::open(0)?;
//! let kernel = dev.kernel(&Program::new("add").host(add_host))?;
//! let a = dev.upload(&[1.0f32, 2.0, 3.0])?;
//! let b = dev.upload(&[10.0f32, 20.0, 30.0])?;
//! let mut c = dev.alloc::<f32>(3)?;
//! let args = Args::new().arg(&a).arg(&b).arg(&mut c).arg(3u32);
//! // SAFETY: `add_host` stays inside its arguments and writes only `c`.
//! unsafe { dev.stream().launch(&kernel, LaunchConfig::for_elements(3, 256), args)? };
//! assert_eq!(c.to_vec()?, vec![11.0, 22.0, 33.0]);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod args;
mod backend;
mod backends;
mod buffer;
mod cache;
mod device;
mod element;
mod error;
mod event;
mod fft;
mod gemm;
mod graph;
mod host;
mod host_call;
mod host_pool;
mod info;
mod kernel;
mod language;
mod launch;
mod matmul_shape;
mod pool;
mod program;
mod solver;
mod stream;
#[cfg(test)]
mod testing;
mod visitor;

pub use args::{Args, HostArg, HostArgs, KernelArg, Parts, RawArg, Scalar};
pub use backend::{Backend, RawBuffer, RawDevice, RawEvent, RawHostBuffer, RawKernel, RawStream};
pub use buffer::{Buffer, BufferView, BufferViewMut, Storage, View, ViewMut};
pub use cache::{size_class, BlockCache, CachePolicy, CacheStats};
pub use device::Device;
pub use element::{ComplexPart, DType, Element};
pub use error::{Error, MemoryCounts, Result};
pub use event::Event;
pub use fft::{FftCall, FftDirection, FftKind, FftLayout, FftSide, VendorFft};
pub use float8::{F8E4M3, F8E5M2};
pub use gemm::{Gemm, GemmOperand, GemmScales, VendorGemm};
pub use graph::{Graph, GraphOp, GraphStep, RawGraph};
pub use half::{bf16, f16};
pub use host::HostBuffer;
pub use host_call::{HostKernelFn, HostParam};
pub use host_pool::{HostMemoryStats, HOST_BLOCK_UNIT};
pub use info::{BackendKind, DeviceInfo, DeviceKind, Features, Limits, MatrixUnits, MemoryInfo};
pub use kernel::Kernel;
pub use language::{IndexWidth, Language};
pub use launch::{Dim3, LaunchConfig};
pub use matmul_shape::{MatmulShape, MatrixLayout, Precision};
pub use num_complex::{Complex, Complex32, Complex64};
pub use pool::{MemoryLimit, MemoryStats};
pub use program::{CompileOptions, HostClosure, HostFn, Program, Source};
pub use solver::{SolverCall, SolverLayout, SolverOp, SolverSpans, VendorSolver};
pub use stream::{Priority, SolverArgs, Stream};
pub use visitor::DeviceVisitor;
