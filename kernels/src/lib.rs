//! kiln-kernels: the classic parallel patterns, each written for every backend.
//!
//! Every pattern is a folder: `mod.rs` holds the safe API, generic over the
//! backend and taking the [`Stream`](kiln_core::Stream) to run on;
//! `kernel.cu` the CUDA source (NVRTC), `kernel.wgsl` the WGSL source, and
//! `cpu.rs` the CPU implementation; the larger patterns add `program.rs`
//! (program assembly), `plan.rs` (algorithm and launch geometry) and
//! `launch.rs` (launches and their SAFETY notes). The argument conventions
//! every source follows are in this crate's README (the kernel ABI).
//!
//! Plans are chosen from the device's capabilities
//! ([`Features`](kiln_core::Features): forward progress between blocks,
//! index width, vector width, f64/f16/bf16) and its limits, never from the
//! backend's name; lengths are passed with
//! [`Args::length`](kiln_core::Args::length) at the device's index width.
//!
//! The safe functions check lengths and devices, compile each kernel once per
//! device (the device's kernel cache), and return `Err` for what a backend or
//! dtype cannot do (`Sqrt` on integers, f64 on an adapter without it).
//!
//! # Examples
//! ```
//! use kiln_core::Device;
//! use kiln_cpu::Cpu;
//! use kiln_kernels::elementwise::{binary, BinaryOp};
//! # fn main() -> kiln_core::Result<()> {
//! let dev = Device::<Cpu>::open(0)?;
//! let s = dev.stream();
//! let a = s.upload(&[1.0f32, 2.0, 3.0])?;
//! let b = s.upload(&[4.0f32, 5.0, 6.0])?;
//! let mut c = s.alloc::<f32>(3)?;
//! binary(&s, BinaryOp::Add, &a, &b, &mut c)?;
//! assert_eq!(c.to_vec()?, vec![5.0, 7.0, 9.0]);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod array;
mod chain;
mod code;
pub mod compact;
pub mod elementwise;
mod entries;
pub mod expr;
pub mod fft;
pub mod fill;
pub mod histogram;
pub mod image;
mod launch;
pub mod linalg;
pub mod map;
pub mod matmul;
mod memo;
mod num;
mod prefetch;
pub mod random;
pub mod reduce;
pub mod scan;
pub mod sort;
mod stream_store;
pub mod thrust;
pub mod transpose;
pub mod user;
mod widen;

pub use num::Number;
