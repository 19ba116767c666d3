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

use kiln_core::Result;

use super::{dispatch, on_mut};
use crate::runtime::{Stream, ViewMut};

pub use kiln_kernels::random::{Normal, Philox, Uniform, philox4x32_10};

/// Fill `dst` with `rng`'s next uniform values of `T` on `stream`, and move
/// `rng` past them (see [`Philox::fill_uniform`]): `u32` words, or `f32`
/// and `f64` values in `[0, 1)`. Returns at once.
pub fn fill_uniform<T: Uniform>(stream: &Stream, rng: &mut Philox, dst: &mut impl ViewMut<T>) -> Result<()> {
    let dst = dst.view_mut();
    dispatch!(stream, Stream, s => rng.fill_uniform(s, &mut on_mut("fill_uniform: dst", s, dst)?))
}

/// Fill `dst` with `rng`'s next standard normal values of `T` (mean 0,
/// standard deviation 1) on `stream`, and move `rng` past them (see
/// [`Philox::fill_normal`]). Returns at once.
pub fn fill_normal<T: Normal>(stream: &Stream, rng: &mut Philox, dst: &mut impl ViewMut<T>) -> Result<()> {
    let dst = dst.view_mut();
    dispatch!(stream, Stream, s => rng.fill_normal(s, &mut on_mut("fill_normal: dst", s, dst)?))
}
