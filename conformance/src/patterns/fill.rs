//! fill and sequence.

use kiln_core::{Backend, Device};
use kiln_kernels::Number;

use crate::{Arith, Cases, Ctx, ElementPattern, Expected, Failure, NumberPattern, Sample, Tolerance, poisoned};

/// `fill(dst, value)` with a random value (NaN, -0.0 and subnormals included):
/// every element must hold exactly `value`.
#[derive(Debug, Clone, Copy)]
pub struct Fill;

impl ElementPattern for Fill {
    fn run<B: Backend, T: Sample>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let value = T::random(&mut ctx.rng);
        let want = vec![value; ctx.n];
        let mut out = poisoned(device, &want)?;
        kiln_kernels::fill::fill(&device.stream(), &mut out, value)?;
        ctx.compare("output", &Expected::new(want, Tolerance::Exact), &out.to_vec()?)
    }
}

/// `sequence(dst, start, step)`: `dst[i] = start + i * step`, wrapping for
/// integers; for floats `i` converted to `T`, then a product and a sum, each
/// rounded: the same bits on every backend (f16 within an ulp: the host's
/// half-precision sum is an f32 sum rounded again).
#[derive(Debug, Clone, Copy)]
pub struct Sequence;

impl NumberPattern for Sequence {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let (start, step) = (T::random_scalar(&mut ctx.rng), T::random_scalar(&mut ctx.rng));
        let want: Vec<T> = (0..ctx.n).map(|i| T::plus(start, T::times(T::index(i), step))).collect();
        let mut out = poisoned(device, &want)?;
        kiln_kernels::fill::sequence(&device.stream(), &mut out, start, step)?;
        let tolerance = if T::DTYPE == kiln_core::DType::F16 { Tolerance::Ulps(1) } else { Tolerance::Exact };
        let expected = Expected::new(want, tolerance);
        ctx.compare(&format!("output (start {start:?}, step {step:?})"), &expected, &out.to_vec()?)
    }
}

/// Add the fill cases to `group`: [`Fill`] on every sampled type.
pub fn register_fill<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    c.elements(group, "fill", Fill);
}

/// Add the sequence cases to `group`: [`Sequence`] on every number type.
pub fn register_sequence<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    c.numbers(group, "sequence", Sequence);
}
