//! matmul with every strategy on every input dtype, at shapes derived from
//! the case's size (1 x n, n x 1, random factorisations; k from 0 to a few
//! hundred, primes among them): exact for integers (wrapping), and for
//! floats within a bound that grows with k, against an f64 reference.
//!
//! Each strategy also runs batches of products whose operands are laid out
//! at random (transposed, padded rows, batch strides with gaps, shared or
//! overlapping factors, views at an offset), with every element of c's
//! buffer outside its matrices required to keep its bits; f32 products
//! under each [`Precision`] mode, within that mode's documented bound; and
//! the refusals of malformed layouts and of views that do not span them.

use kiln_core::{Backend, Buffer, BufferView, BufferViewMut, DType, Device, Element, Error, Stream, bf16, f16};
use kiln_kernels::matmul::{MatmulElement, MatmulShape, MatmulStrategy, MatrixLayout, Precision, matmul_with};
use rand::Rng;

use super::transpose::{inverted, matrix_shape, random_bits, same_bits};
use crate::{Cases, Ctx, Failure, Mismatch, Sample};

/// Multiply-adds a case may cost the sequential reference.
const BUDGET: usize = 1 << 22;

/// Input values and the reference for one input dtype.
pub(super) trait Operand: MatmulElement {
    /// A random input value.
    fn sample(ctx: &mut Ctx) -> Self;
    /// The value as f64 (exact).
    fn as_f64(self) -> f64;
    /// Unit roundoff of the accumulator (0 for integers: exact).
    const ACC_EPSILON: f64;
    /// An accumulator value as f64 (exact).
    fn acc_f64(v: Self::Acc) -> f64;
    /// The exact (integer, wrapping) or double-double (float) value of
    /// `sum x y` over `terms`, and `sum |x y|` (0 for integers).
    fn dot(terms: impl Iterator<Item = (Self, Self)>) -> (Self::Acc, f64);
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
            fn dot(terms: impl Iterator<Item = (Self, Self)>) -> ($acc, f64) {
                let (sum, abs) = accurate_dot(terms.map(|(x, y)| (x.as_f64(), y.as_f64())));
                (sum as $acc, abs)
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
            fn dot(terms: impl Iterator<Item = (Self, Self)>) -> ($t, f64) {
                (terms.fold(0 as $t, |s, (x, y)| s.wrapping_add(x.wrapping_mul(y))), 0.0)
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

/// Where element (i, p) of product `z` of an operand laid out as `l` lies
/// in its view.
pub(super) fn at(l: &MatrixLayout, z: usize, i: usize, p: usize) -> usize {
    z * l.stride + if l.transposed { p * l.ld + i } else { i * l.ld + p }
}

/// Element (i, j) of product `z` of `shape` on the views' elements `a` and
/// `b`, and its bound: `scale * sum_p |a_ip b_pj|`.
#[allow(clippy::too_many_arguments, reason = "one element of one product, and its bound's scale")]
fn expect<T: Operand>(
    a: &[T],
    b: &[T],
    shape: &MatmulShape,
    z: usize,
    i: usize,
    j: usize,
    scale: f64,
) -> (T::Acc, f64) {
    let (sum, abs) = T::dot((0..shape.k).map(|p| (a[at(&shape.a, z, i, p)], b[at(&shape.b, z, p, j)])));
    (sum, scale * abs)
}

/// `Err` unless `used` is what a call with `strategy` must report: the
/// strategy itself, or for `Auto` the one it resolved to.
fn check_used(strategy: MatmulStrategy, used: MatmulStrategy) -> Result<(), Failure> {
    if strategy != MatmulStrategy::Auto && used != strategy {
        return Err(Failure::Contract(format!("matmul_with({strategy}) reported running {used}")));
    }
    if used == MatmulStrategy::Auto {
        return Err(Failure::Contract("matmul reported Auto, not the strategy it ran".into()));
    }
    Ok(())
}

fn run<B: Backend, T: Operand>(strategy: MatmulStrategy, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let shape = shape(ctx);
    let MatmulShape { m, n, k, .. } = shape;
    let a: Vec<T> = (0..m * k).map(|_| T::sample(ctx)).collect();
    let b: Vec<T> = (0..k * n).map(|_| T::sample(ctx)).collect();
    let scale = (k as f64 + 2.0) * T::ACC_EPSILON;
    let want: Vec<(T::Acc, f64)> =
        (0..m * n).map(|e| expect(&a, &b, &shape, 0, e / n.max(1), e % n.max(1), scale)).collect();
    let values: Vec<T::Acc> = want.iter().map(|w| w.0).collect();
    let s = device.stream();
    let (ab, bb) = (device.upload(&a)?, device.upload(&b)?);
    let mut cb = device.upload(&inverted(&values))?;
    let used = matmul_with(&s, strategy, &ab, &bb, &mut cb, shape)?;
    check_used(strategy, used)?;
    same_bits("input a", &a, &ab.to_vec()?)?;
    same_bits("input b", &b, &bb.to_vec()?)?;
    let got = cb.to_vec()?;
    let what = format!("c of {shape} ({used})");
    within_bounds(&what, &want, &got, T::acc_f64)
}

/// A random layout of `batch` `rows x cols` operands: stored transposed or
/// not (never the product, `output`); rows 0 to 3 elements further apart
/// than the stored width (for a stored matrix of one row, now and then any
/// distance, which it allows); matrices 0 to 7 elements further apart than
/// one matrix's span, or, for a factor, now and then shared (stride 0) or
/// overlapping; any stride for a batch of one.
fn random_layout(ctx: &mut Ctx, rows: usize, cols: usize, batch: usize, output: bool) -> MatrixLayout {
    let transposed = !output && ctx.rng.random();
    let (stored_rows, width) = MatrixLayout::dense(rows, cols, transposed).stored(rows, cols);
    let ld = if stored_rows <= 1 && ctx.rng.random_ratio(1, 3) {
        ctx.rng.random_range(0..=width + 3)
    } else {
        width + ctx.rng.random_range(0..=3)
    };
    let one = MatrixLayout { transposed, ld, stride: 0 }.span(rows, cols, 1).unwrap_or(0);
    let stride = match ctx.rng.random_range(0..8u32) {
        _ if batch <= 1 => ctx.rng.random_range(0..=one + 3),
        0 | 1 if !output => 0,
        2 if !output && one > 1 => ctx.rng.random_range(1..one),
        _ => one + ctx.rng.random_range(0..8),
    };
    MatrixLayout { transposed, ld, stride }
}

/// Output elements a batch of a layout case may hold (before padding): the
/// largest size's runs a single product, so that its buffers stay well
/// inside a binding of 128 MiB, however they are padded.
const BATCH_ELEMENTS: usize = 1 << 21;

/// A batch of products for `ctx.n` output elements each (see
/// [`matrix_shape`]): 1 to 4 of them, as [`BATCH_ELEMENTS`] allows (about
/// one case in eight none), k within the budget for the whole batch (about
/// one case in ten 0: c's elements zero), each operand laid out at random
/// ([`random_layout`]).
fn batch_shape(ctx: &mut Ctx) -> MatmulShape {
    let (m, n) = matrix_shape(ctx);
    let most = (BATCH_ELEMENTS / (m * n).max(1)).clamp(1, 4);
    let batch = if ctx.rng.random_ratio(1, 8) { 0 } else { ctx.rng.random_range(1..=most) };
    let k = if ctx.rng.random_ratio(1, 10) {
        0
    } else {
        ctx.rng.random_range(1..=(BUDGET / (m * n * batch).max(1)).clamp(1, 300))
    };
    let (a, b) = (random_layout(ctx, m, k, batch, false), random_layout(ctx, k, n, batch, false));
    let c = random_layout(ctx, m, n, batch, true);
    MatmulShape::new(m, n, k).batch(batch).layouts(a, b, c)
}

/// `len` values from `sample` after 0 to 3 others (the view's offset, a
/// random misalignment): the buffer's contents and the offset.
fn at_offset<T: Element>(ctx: &mut Ctx, len: usize, sample: fn(&mut Ctx) -> T) -> (Vec<T>, usize) {
    let off = ctx.rng.random_range(0..4);
    ((0..off + len).map(|_| sample(ctx)).collect(), off)
}

/// One batch of [`batch_shape`] with inputs from `sample`, under
/// `precision` (`None`: the shape's default, `Exact`, within the bound of
/// [`run`]; `Some(p)`: `p`, within [`Precision::error_bound`]). Each
/// operand is a view at a random offset into its buffer, c's buffer
/// poisoned everywhere, with 0 to 3 more elements after the view: every
/// element of c's matrices must be within its bound of the reference, every
/// other element of the buffer (padding of rows and of the batch, and
/// outside the view) keep its bits, and the inputs theirs.
fn laid_out<B: Backend, T: Operand>(
    strategy: MatmulStrategy,
    precision: Option<Precision>,
    sample: fn(&mut Ctx) -> T,
    device: &Device<B>,
    ctx: &mut Ctx,
) -> Result<(), Failure> {
    let product = Product { strategy, precision, sample, output: |sum, bound| (sum, bound), to_f64: T::acc_f64 };
    product.check(device, ctx, |s, a, b, c, shape| matmul_with(s, strategy, a, b, c, shape))
}

/// One batch of laid-out products of `T` matrices into `C` ([`laid_out`]'s
/// case, written once for every output type): `output` turns each
/// element's accumulated reference and bound into the expected `C` and its
/// bound.
pub(super) struct Product<T: Operand, C, F: Fn(T::Acc, f64) -> (C, f64)> {
    pub(super) strategy: MatmulStrategy,
    pub(super) precision: Option<Precision>,
    pub(super) sample: fn(&mut Ctx) -> T,
    pub(super) output: F,
    pub(super) to_f64: fn(C) -> f64,
}

impl<T: Operand, C: Element, F: Fn(T::Acc, f64) -> (C, f64)> Product<T, C, F> {
    /// Run the case, the product computed by `call` on the views.
    pub(super) fn check<B: Backend>(
        &self,
        device: &Device<B>,
        ctx: &mut Ctx,
        call: impl FnOnce(
            &Stream<B>,
            &BufferView<'_, B, T>,
            &BufferView<'_, B, T>,
            &mut BufferViewMut<'_, B, C>,
            MatmulShape,
        ) -> kiln_core::Result<MatmulStrategy>,
    ) -> Result<(), Failure> {
        let shape = batch_shape(ctx).precision(self.precision.unwrap_or_default());
        let MatmulShape { m, n, k, batch, c: lc, .. } = shape;
        let scale = match self.precision {
            None => (k as f64 + 2.0) * T::ACC_EPSILON,
            Some(p) => p.error_bound(T::DTYPE, k),
        };
        let Some([a_span, b_span, c_span]) = shape.spans() else {
            return Err(Failure::Contract(format!("the spans of {shape} overflow")));
        };
        let (a, a_off) = at_offset(ctx, a_span, self.sample);
        let (b, b_off) = at_offset(ctx, b_span, self.sample);
        let (c_off, c_after) = (ctx.rng.random_range(0..4), ctx.rng.random_range(0..4));
        let mut before: Vec<C> = random_bits(ctx, c_off + c_span + c_after);
        let mut inside = vec![false; before.len()];
        let mut want = Vec::with_capacity(batch * m * n);
        for z in 0..batch {
            for i in 0..m {
                for j in 0..n {
                    let (sum, bound) = expect(&a[a_off..], &b[b_off..], &shape, z, i, j, scale);
                    let e = (self.output)(sum, bound);
                    let place = c_off + at(&lc, z, i, j);
                    before[place] = inverted(&[e.0])[0];
                    inside[place] = true;
                    want.push(e);
                }
            }
        }
        let s = device.stream();
        let (ab, bb) = (device.upload(&a)?, device.upload(&b)?);
        let mut cb = device.upload(&before)?;
        let used = {
            let (av, bv) = (ab.slice(a_off..)?, bb.slice(b_off..)?);
            let mut cv = cb.slice_mut(c_off..c_off + c_span)?;
            call(&s, &av, &bv, &mut cv, shape)?
        };
        check_used(self.strategy, used)?;
        let what = format!("{shape} ({used}), views at offsets {a_off}, {b_off} and {c_off}");
        let got = kept_outside(&what, [(&a, &ab), (&b, &bb)], &before, &cb.to_vec()?, &inside)?;
        within_bounds(&format!("c of {what}, elements by product, row and column"), &want, &got, self.to_f64)
    }
}

/// After a product of `what` on views of buffers: `Err` unless the inputs
/// (values, buffer) kept their bits, and c's buffer (`before` it, `got`
/// after) kept them everywhere but `inside` its matrices; c's matrix
/// elements in buffer order otherwise.
fn kept_outside<B: Backend, T: Element, C: Element>(
    what: &str,
    inputs: [(&[T], &Buffer<B, T>); 2],
    before: &[C],
    got: &[C],
    inside: &[bool],
) -> Result<Vec<C>, Failure> {
    for (name, (values, buffer)) in ["a", "b"].into_iter().zip(inputs) {
        same_bits(&format!("input {name} of {what}"), values, &buffer.to_vec()?)?;
    }
    if got.len() != before.len() {
        return Err(Failure::Contract(format!("c: {} elements uploaded, {} read back", before.len(), got.len())));
    }
    let kept = |i: usize| inside[i] || bytemuck::bytes_of(&before[i]) == bytemuck::bytes_of(&got[i]);
    if let Some(m) = crate::compare::mismatch(&format!("c of {what}, elements outside its matrices"), before, got, kept)
    {
        return Err(Failure::Mismatch(m));
    }
    Ok((0..got.len()).filter(|&i| inside[i]).map(|i| got[i]).collect())
}

/// Batches of products with their operands laid out at random
/// ([`laid_out`]), computed exactly.
fn layouts<B: Backend, T: Operand>(strategy: MatmulStrategy, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    laid_out::<B, T>(strategy, None, T::sample, device, ctx)
}

/// A value of [`moderate_f32`]'s with its last mantissa bit set, so that
/// rounding it to TF32 or bf16 changes it.
fn rounded_by_modes(ctx: &mut Ctx) -> f32 {
    f32::from_bits(moderate_f32(ctx).to_bits() | 1)
}

/// f32 batches ([`laid_out`]) under `mode`, within its documented bound.
fn precision<B: Backend>(
    strategy: MatmulStrategy,
    mode: Precision,
    device: &Device<B>,
    ctx: &mut Ctx,
) -> Result<(), Failure> {
    laid_out::<B, f32>(strategy, Some(mode), rounded_by_modes, device, ctx)
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

/// Shapes matmul must refuse by every strategy, leaving c's bits as they
/// were: with `InvalidArgument`, a leading dimension under its stored width
/// (of a, b or c), c stored transposed, and c's products less than one
/// matrix apart; with `LengthMismatch`, a view one element longer or
/// shorter than the span the shape gives it. Each starts from a batch of 2
/// to 4 products of random layouts ([`random_layout`]) with sides of 2 to 9.
fn refused<B: Backend>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let mut side = || ctx.rng.random_range(2..=9usize);
    let (m, n, k) = (side(), side(), side());
    let batch = ctx.rng.random_range(2..=4);
    let (a, b) = (random_layout(ctx, m, k, batch, false), random_layout(ctx, k, n, batch, false));
    let c = random_layout(ctx, m, n, batch, true);
    let good = MatmulShape::new(m, n, k).batch(batch).layouts(a, b, c);
    let narrow = |ctx: &mut Ctx, l: MatrixLayout, rows, cols| {
        let (_, width) = l.stored(rows, cols);
        MatrixLayout { ld: ctx.rng.random_range(0..width), ..l }
    };
    let one = c.span(m, n, 1).unwrap_or(0);
    let invalid = [
        good.layouts(narrow(ctx, a, m, k), b, c),
        good.layouts(a, narrow(ctx, b, k, n), c),
        good.layouts(a, b, narrow(ctx, c, m, n)),
        good.layouts(a, b, MatrixLayout { stride: c.stride, ..MatrixLayout::dense(m, n, true) }),
        good.layouts(a, b, MatrixLayout { stride: ctx.rng.random_range(0..one), ..c }),
    ];
    let Some(spans) = good.spans() else {
        return Err(Failure::Contract(format!("the spans of {good} overflow")));
    };
    let mut calls: Vec<(MatmulShape, [usize; 3], bool)> = Vec::new();
    for shape in invalid {
        match shape.spans() {
            Some(lengths) => calls.push((shape, lengths, false)),
            None => return Err(Failure::Contract(format!("the spans of {shape} overflow"))),
        }
    }
    for operand in 0..3 {
        let mut lengths = spans;
        lengths[operand] = if ctx.rng.random() { spans[operand] + 1 } else { spans[operand] - 1 };
        calls.push((good, lengths, true));
    }
    let s = device.stream();
    for (shape, [a_len, b_len, c_len], lengths) in calls {
        let av = device.upload(&random_bits::<f32>(ctx, a_len))?;
        let bv = device.upload(&random_bits::<f32>(ctx, b_len))?;
        let before: Vec<f32> = random_bits(ctx, c_len);
        let mut cv = device.upload(&before)?;
        let given = format!("{shape} with views of {a_len}, {b_len} and {c_len} elements");
        for strategy in MatmulStrategy::ALL {
            match (matmul_with(&s, strategy, &av, &bv, &mut cv, shape), lengths) {
                (Err(Error::LengthMismatch { .. }), true) | (Err(Error::InvalidArgument { .. }), false) => {}
                (other, _) => {
                    let want = if lengths { "LengthMismatch" } else { "InvalidArgument" };
                    return Err(Failure::Contract(format!(
                        "matmul_with({strategy}) of {given} returned {other:?}, not {want}"
                    )));
                }
            }
            same_bits(&format!("c after matmul_with({strategy}) of {given} was refused"), &before, &cv.to_vec()?)?;
        }
    }
    Ok(())
}

/// Add the matmul cases to `group`: each strategy on every input dtype, on
/// dense single products and on batches of random layouts; each strategy
/// under each precision mode on f32; and the refusals.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    for strategy in MatmulStrategy::ALL {
        let pattern = format!("matmul/{strategy}");
        each_type!(c, group, pattern, run::<B>(strategy); f32, f64, f16, bf16, i32, u32);
        let pattern = format!("matmul/{strategy}/layouts");
        each_type!(c, group, pattern, layouts::<B>(strategy); f32, f64, f16, bf16, i32, u32);
        for mode in Precision::ALL {
            let pattern = format!("matmul/{strategy}/precision_{mode}");
            c.one(group, pattern, DType::F32, move |d, ctx| precision::<B>(strategy, mode, d, ctx));
        }
    }
    c.one(group, "matmul/mismatched_lengths", DType::F32, mismatched::<B>);
    c.one(group, "matmul/refused_layouts", DType::F32, refused::<B>);
}
