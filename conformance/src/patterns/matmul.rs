//! matmul with every strategy on every input dtype, at shapes derived from
//! the case's size (1 x n, n x 1, random factorisations; k from 0 to a few
//! hundred, primes among them): exact for integers (wrapping), and for
//! floats within a bound that grows with k, against an f64 reference.

use kiln_core::{Backend, DType, Device, Element, Error, bf16, f16};
use kiln_kernels::matmul::{MatmulElement, MatmulShape, MatmulStrategy, matmul_with};
use rand::Rng;

use super::transpose::{inverted, matrix_shape, same_bits};
use crate::{Cases, Ctx, Failure, Mismatch, Sample};

/// Multiply-adds a case may cost the sequential reference.
const BUDGET: usize = 1 << 22;

/// Input values and the reference for one input dtype.
trait Operand: MatmulElement {
    /// A random input value.
    fn sample(ctx: &mut Ctx) -> Self;
    /// The value as f64 (exact).
    fn as_f64(self) -> f64;
    /// Unit roundoff of the accumulator (0 for integers: exact).
    const ACC_EPSILON: f64;
    /// An accumulator value as f64 (exact).
    fn acc_f64(v: Self::Acc) -> f64;
    /// The exact (integer) or f64 reference of one element of `a . b`, and
    /// its error bound: `(k + 2) * epsilon * sum |a b|` for floats.
    fn expect(a: &[Self], b: &[Self], k: usize, n: usize, i: usize, j: usize) -> (Self::Acc, f64);
}

/// `sum a b` in double-double arithmetic (error-free products by FMA,
/// two-sum accumulation): far more accurate than any f32 or f64 kernel.
fn accurate_dot(terms: impl Iterator<Item = (f64, f64)>) -> (f64, f64) {
    let (mut hi, mut lo, mut abs) = (0.0f64, 0.0f64, 0.0f64);
    for (x, y) in terms {
        let p = x * y;
        let e = x.mul_add(y, -p);
        let s = hi + p;
        let v = s - hi;
        lo += (hi - (s - v)) + (p - v) + e;
        hi = s;
        abs += p.abs();
    }
    (hi + lo, abs)
}

macro_rules! float_operand {
    ($t:ty, $eps:expr, $sample:expr, $to:expr, $acc:ty) => {
        impl Operand for $t {
            fn sample(ctx: &mut Ctx) -> Self {
                $sample(ctx)
            }
            fn as_f64(self) -> f64 {
                $to(self)
            }
            const ACC_EPSILON: f64 = $eps;
            fn acc_f64(v: $acc) -> f64 {
                v as f64
            }
            fn expect(a: &[Self], b: &[Self], k: usize, n: usize, i: usize, j: usize) -> ($acc, f64) {
                let (sum, abs) = accurate_dot((0..k).map(|p| (a[i * k + p].as_f64(), b[p * n + j].as_f64())));
                (sum as $acc, (k as f64 + 2.0) * Self::ACC_EPSILON * abs)
            }
        }
    };
}

/// Moderate f32 values of mixed magnitude (2^-12..2^12), either sign.
fn moderate_f32(ctx: &mut Ctx) -> f32 {
    let m: f32 = ctx.rng.random_range(1.0..2.0);
    let v = m * 2f32.powi(ctx.rng.random_range(-12..=12));
    if ctx.rng.random() { v } else { -v }
}

float_operand!(f32, f32::EPSILON as f64, moderate_f32, |v: f32| v as f64, f32);
float_operand!(
    f64,
    f64::EPSILON,
    |ctx: &mut Ctx| moderate_f32(ctx) as f64 * (1.0 + ctx.rng.random_range(0.0..1.0) * 1e-9),
    |v: f64| v,
    f64
);
float_operand!(
    f16,
    f32::EPSILON as f64,
    |ctx: &mut Ctx| f16::from_f32(ctx.rng.random_range(-8.0f32..8.0)),
    |v: f16| v.to_f64(),
    f32
);
float_operand!(bf16, f32::EPSILON as f64, |ctx: &mut Ctx| bf16::from_f32(moderate_f32(ctx)), |v: bf16| v.to_f64(), f32);

macro_rules! int_operand {
    ($t:ty) => {
        impl Operand for $t {
            fn sample(ctx: &mut Ctx) -> Self {
                <$t as Sample>::random(&mut ctx.rng)
            }
            fn as_f64(self) -> f64 {
                self as f64
            }
            const ACC_EPSILON: f64 = 0.0;
            fn acc_f64(v: $t) -> f64 {
                v as f64
            }
            fn expect(a: &[Self], b: &[Self], k: usize, n: usize, i: usize, j: usize) -> ($t, f64) {
                let sum = (0..k).fold(0 as $t, |s, p| s.wrapping_add(a[i * k + p].wrapping_mul(b[p * n + j])));
                (sum, 0.0)
            }
        }
    };
}
int_operand!(i32);
int_operand!(u32);

/// A shape for `ctx.n` output elements and a k within the budget; k is 0
/// for about half of the single-element cases (an empty sum: c = 0).
fn shape(ctx: &mut Ctx) -> MatmulShape {
    let (m, n) = matrix_shape(ctx);
    if m * n == 1 && ctx.rng.random() {
        return MatmulShape::new(m, n, 0);
    }
    let most = (BUDGET / (m * n).max(1)).clamp(1, 300);
    MatmulShape::new(m, n, ctx.rng.random_range(1..=most))
}

/// `Err` naming the first element of `got` outside `expected +- bound`, with
/// its neighbours: the comparer for sums, whose rounding error is bounded
/// per element (NaN and the poison never pass).
pub(super) fn within_bounds<T: Element>(
    what: &str,
    expected: &[(T, f64)],
    got: &[T],
    to_f64: fn(T) -> f64,
) -> Result<(), Failure> {
    let bad_at = |i: usize| {
        let (want, bound) = expected[i];
        let (w, g) = (to_f64(want), to_f64(got[i]));
        !((g - w).abs() <= bound || bytemuck::bytes_of(&want) == bytemuck::bytes_of(&got[i]))
    };
    if expected.len() != got.len() {
        return Err(Failure::Contract(format!("{what}: {} elements expected, {} returned", expected.len(), got.len())));
    }
    let Some(index) = (0..got.len()).find(|&i| bad_at(i)) else {
        return Ok(());
    };
    let neighbours = (index.saturating_sub(3)..(index + 4).min(got.len()))
        .map(|i| {
            let mark = if bad_at(i) { "->" } else { "  " };
            format!("  {mark} [{i}] expected {:?} +- {:.3e}, got {:?}", expected[i].0, expected[i].1, got[i])
        })
        .collect::<Vec<_>>()
        .join("\n");
    Err(Failure::Mismatch(Mismatch {
        what: what.to_string(),
        index,
        expected: format!("{:?} +- {:.3e}", expected[index].0, expected[index].1),
        got: format!("{:?}", got[index]),
        bad: (0..got.len()).filter(|&i| bad_at(i)).count(),
        len: got.len(),
        neighbours,
    }))
}

fn run<B: Backend, T: Operand>(strategy: MatmulStrategy, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let shape = shape(ctx);
    let MatmulShape { m, n, k, .. } = shape;
    let a: Vec<T> = (0..m * k).map(|_| T::sample(ctx)).collect();
    let b: Vec<T> = (0..k * n).map(|_| T::sample(ctx)).collect();
    let want: Vec<(T::Acc, f64)> = (0..m * n).map(|e| T::expect(&a, &b, k, n, e / n.max(1), e % n.max(1))).collect();
    let values: Vec<T::Acc> = want.iter().map(|w| w.0).collect();
    let s = device.stream();
    let (ab, bb) = (device.upload(&a)?, device.upload(&b)?);
    let mut cb = device.upload(&inverted(&values))?;
    let used = matmul_with(&s, strategy, &ab, &bb, &mut cb, shape)?;
    if strategy != MatmulStrategy::Auto && used != strategy {
        return Err(Failure::Contract(format!("matmul_with({strategy}) reported running {used}")));
    }
    if used == MatmulStrategy::Auto {
        return Err(Failure::Contract("matmul reported Auto, not the strategy it ran".into()));
    }
    same_bits("input a", &a, &ab.to_vec()?)?;
    same_bits("input b", &b, &bb.to_vec()?)?;
    let got = cb.to_vec()?;
    let what = format!("c of {shape} ({used})");
    within_bounds(&what, &want, &got, T::acc_f64)
}

/// Operands whose lengths do not match the shape must be refused with
/// `LengthMismatch` and leave c untouched.
fn mismatched<B: Backend>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let shape = shape(ctx);
    let MatmulShape { m, n, k, .. } = shape;
    let s = device.stream();
    let a = device.upload(&vec![1.0f32; m * k + 1])?;
    let b = device.upload(&vec![1.0f32; k * n])?;
    let before: Vec<f32> = (0..m * n).map(|i| i as f32).collect();
    let mut c = device.upload(&before)?;
    match matmul_with(&s, MatmulStrategy::Tiled, &a, &b, &mut c, shape) {
        Err(Error::LengthMismatch { .. }) => {}
        other => {
            return Err(Failure::Contract(format!("matmul {shape} with a of m k + 1 elements returned {other:?}")));
        }
    }
    same_bits("c after a refused call", &before, &c.to_vec()?)
}

/// Add the matmul cases to `group`: each strategy on every input dtype, and the refusal.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    for strategy in MatmulStrategy::ALL {
        let pattern = format!("matmul/{strategy}");
        each_type!(c, group, pattern, run::<B>(strategy); f32, f64, f16, bf16, i32, u32);
    }
    c.one(group, "matmul/mismatched_lengths", DType::F32, mismatched::<B>);
}
