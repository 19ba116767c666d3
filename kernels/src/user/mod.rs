//! User kernels written once in Rust with the [`expr`](crate::expr) IR,
//! generated for CUDA (NVRTC), WGSL and the CPU.
//!
//! - [`Elementwise`]: a body of assignments per element (PyCUDA's and
//!   CuPy's `ElementwiseKernel`).

mod elementwise;
mod signature;

pub use elementwise::{Elementwise, ElementwiseKernel};
