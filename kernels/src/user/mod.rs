//! User kernels written once in Rust with the [`expr`](crate::expr) IR,
//! generated for CUDA (NVRTC), WGSL and the CPU.
//!
//! - [`Elementwise`]: a body of assignments per element (PyCUDA's and
//!   CuPy's `ElementwiseKernel`).
//! - [`Reduction`]: a map per element folded by a combining expression,
//!   over everything or along an axis (`ReductionKernel`).

mod elementwise;
mod reduction;
mod signature;

pub use elementwise::{Elementwise, ElementwiseKernel};
pub use reduction::{Reduction, ReductionKernel};
