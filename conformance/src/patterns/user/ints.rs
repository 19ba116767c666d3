//! The inputs every integer user-kernel case draws: `x` and `y`, a raw
//! array of up to 63 elements and a scalar, random, on the host (widened
//! to i64 for the reference) and on the device.

use kiln_core::{Args, Backend, Buffer, DType, Device};
use rand::Rng;

use super::Env;
use crate::patterns::unchanged;
use crate::{Ctx, Failure, Sample};

/// Random integer inputs of a user-kernel case, bound as `x`, `y`, `r`
/// (raw) and the scalar, in that order.
pub(super) struct Ints<B: Backend, T: Sample> {
    /// `x` on the host.
    pub(super) x: Vec<T>,
    /// `y` on the host.
    pub(super) y: Vec<T>,
    /// The raw array on the host.
    raw: Vec<T>,
    /// The scalar.
    pub(super) a: T,
    /// `x`, `y` and the raw array in i64.
    wide: [Vec<i64>; 3],
    /// `x`, `y` and the raw array on the device.
    buffers: [Buffer<B, T>; 3],
}

impl<B: Backend, T: Sample + Into<i64>> Ints<B, T> {
    /// `n` random elements each of `x` and `y`, a raw array of a random
    /// length below 64 and a random scalar, uploaded to `device`.
    pub(super) fn new(device: &Device<B>, ctx: &mut Ctx, n: usize) -> Result<Self, Failure> {
        let x: Vec<T> = crate::random_vec(&mut ctx.rng, n);
        let y: Vec<T> = crate::random_vec(&mut ctx.rng, n);
        let raw_len = ctx.rng.random_range(0..64usize);
        let raw: Vec<T> = crate::random_vec(&mut ctx.rng, raw_len);
        let a: T = crate::random_vec(&mut ctx.rng, 1)[0];
        let wide = |v: &[T]| v.iter().map(|&t| t.into()).collect::<Vec<i64>>();
        let buffers = [device.upload(&x)?, device.upload(&y)?, device.upload(&raw)?];
        Ok(Ints { wide: [wide(&x), wide(&y), wide(&raw)], x, y, raw, a, buffers })
    }

    /// The reference evaluator over these inputs.
    pub(super) fn env(&self) -> Env<'_> {
        let [x, y, raw] = &self.wide;
        Env { signed: T::DTYPE == DType::I32, x, y, raw, a: self.a.into() }
    }

    /// The kernel arguments `x`, `y`, `r` and the scalar.
    pub(super) fn args(&self) -> Args<'_, B> {
        let [xb, yb, rb] = &self.buffers;
        Args::new().arg(xb).arg(yb).arg(rb).scalar(self.a)
    }

    /// `Err` unless the kernels left `x` and the raw array as uploaded.
    pub(super) fn unchanged(&self) -> Result<(), Failure> {
        unchanged("input x", &self.buffers[0], &self.x)?;
        unchanged("raw input r", &self.buffers[2], &self.raw)
    }
}
