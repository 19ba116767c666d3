//! Every pattern of [`kiln_kernels`], on the run-time tier.
//!
//! Each function here has the name, the arguments and the checks of its
//! typed counterpart in [`crate::typed::kernels`], with a [`Stream`](crate::Stream)
//! and buffers or views of the run-time tier in place of the typed ones,
//! and forwards to it on the stream's backend. Buffers of another backend
//! or device than the stream's are an `Err` naming both.
//!
//! # Examples
//! ```
//! use kiln::kernels::elementwise::{binary, BinaryOp};
//! use kiln::kernels::sort::{sort, SortOrder};
//! # fn main() -> kiln::Result<()> {
//! let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
//! let s = dev.stream();
//! let a = s.upload(&[3.0f32, 1.0, 2.0])?;
//! let b = s.upload(&[10.0f32, 20.0, 30.0])?;
//! let mut c = s.alloc::<f32>(3)?;
//! binary(&s, BinaryOp::Add, &a, &b, &mut c)?;
//! sort(&s, &mut c, SortOrder::Descending)?;
//! assert_eq!(c.to_vec()?, [32.0, 21.0, 13.0]);
//! # Ok(()) }
//! ```

pub mod compact;
pub mod elementwise;
pub mod fft;
pub mod fill;
mod forward;
pub mod histogram;
pub mod image;
pub mod linalg;
pub mod map;
pub mod matmul;
pub mod random;
pub mod reduce;
pub mod scan;
pub mod sort;
pub mod thrust;
pub mod transpose;
pub mod user;

pub use kiln_kernels::Number;

pub(crate) use crate::runtime::dispatch;
pub(crate) use crate::runtime::{typed_view as on, typed_view_mut as on_mut};
