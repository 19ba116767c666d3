//! Counter-based random numbers: Philox4x32-10 streams of uniform and
//! standard normal values (see [`kiln_kernels::random`] for the values).
//!
//! A [`Philox`] is a seed and the counter of its next block; it holds no
//! device state, so the same one serves every backend and the two tiers.
//! The same seed and counter give the same bits on CUDA, wgpu and the CPU,
//! and the same bits here as [`Philox::fill_uniform`] and
//! [`Philox::fill_normal`] on the typed tier.
//!
//! # Examples
//! ```
//! use kiln::kernels::random::{fill_normal, fill_uniform, Philox};
//! # fn main() -> kiln::Result<()> {
//! let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
//! let s = dev.stream();
//! let mut rng = Philox::new(42);
//! let mut u = s.alloc::<f32>(6)?;
//! fill_uniform(&s, &mut rng, &mut u)?; // blocks 0 and 1, four f32 values each
//! assert_eq!(rng.counter(), 2);
//! assert!(u.to_vec()?.iter().all(|x| (0.0..1.0).contains(x)));
//! let mut z = s.alloc::<f64>(4)?;
//! fill_normal(&s, &mut rng, &mut z)?; // blocks 2 and 3, two f64 values each
//! assert_eq!(rng.counter(), 4);
//! // The same seed and counter give the same values, on any backend.
//! let mut again = s.alloc::<f32>(6)?;
//! fill_uniform(&s, &mut Philox::new(42), &mut again)?;
//! assert_eq!(again.to_vec()?, u.to_vec()?);
//! # Ok(()) }
//! ```

use crate::runtime::Stream;

pub use kiln_kernels::random::{Normal, Philox, Uniform, philox4x32_10};

kiln_kernels::entry_points!(crate::kernels::forward::forward, random);
