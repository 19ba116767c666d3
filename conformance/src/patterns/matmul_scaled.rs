//! `matmul_scaled`: scaled products of 8-bit floats (E4M3 and E5M2) into
//! f32, f16 and bf16, on batches of random sizes and two kinds of layout:
//!
//! - `matmul/scaled/{a}x{b}`: the layout cuBLASLt's 8-bit products take (`a`
//!   stored as it is, `b` transposed, k and n multiples of 16, leading
//!   dimensions, batch strides and view offsets on 16 bytes; the scales at
//!   any 4-byte offset), which every backend offering the product must
//!   compute;
//! - `matmul/scaled/{a}x{b}/any`: random layouts and offsets, which a
//!   backend may refuse with `Unsupported` (c untouched) but, where it
//!   computes them, must get right.
//!
//! Every element of c's matrices must be within `(k + 2) 2^-13 scale_a
//! scale_b sum |a||b|` (f32 accumulation with the tensor cores' partial sums
//! of at least 13 bits between promotions) plus one rounding to c's type of
//! an f64 reference; every other element of c's buffer, and the inputs,
//! must keep their bits.

use kiln_core::{Backend, DType, Device, Error, F8E4M3, F8E5M2, MatmulShape, MatrixLayout, RawDevice, bf16, f16};
use kiln_kernels::matmul::{Fp8Element, ScaledOutput, matmul_scaled};
use rand::Rng;

use super::inputs::from_f64;
use super::matmul::{at, within_bounds};
use super::transpose::{inverted, random_bits, same_bits};
use crate::{Cases, Ctx, Failure, Sample};

/// An 8-bit input type of the cases: its random values.
trait Input: Fp8Element {
    fn from_f32(v: f32) -> Self;
}

impl Input for F8E4M3 {
    fn from_f32(v: f32) -> Self {
        F8E4M3::from_f32(v)
    }
}

impl Input for F8E5M2 {
    fn from_f32(v: f32) -> Self {
        F8E5M2::from_f32(v)
    }
}

/// A value in [-6, 6), one in eight zero, rounded to `T` (never NaN or infinite).
fn sample<T: Input>(ctx: &mut Ctx) -> T {
    let v = if ctx.rng.random_ratio(1, 8) { 0.0 } else { ctx.rng.random_range(-6.0f32..6.0) };
    T::from_f32(v)
}

/// `len` values after `off` others.
fn values<T: Input>(ctx: &mut Ctx, off: usize, len: usize) -> Vec<T> {
    (0..off + len).map(|_| sample::<T>(ctx)).collect()
}

/// A layout of a `rows x cols` stored matrix of `size`-byte elements, its
/// leading dimension and batch stride rounded up to 16 bytes (`aligned`)
/// or padded at random.
fn layout(ctx: &mut Ctx, rows: usize, cols: usize, batch: usize, size: usize, aligned: bool) -> MatrixLayout {
    let unit = if aligned { 16 / size } else { 1 };
    let ld = (cols + unit * ctx.rng.random_range(0..2)).next_multiple_of(unit).max(unit);
    let span = if rows == 0 { 0 } else { (rows - 1) * ld + cols };
    let stride = if batch > 1 { (span + unit * ctx.rng.random_range(0..2)).next_multiple_of(unit) } else { span };
    MatrixLayout { transposed: false, ld, stride }
}

/// One scaled product of a random batch, in cuBLASLt's layout (`aligned`)
/// or any.
fn scaled<B: Backend, A: Input, W: Input, O: ScaledOutput + Sample>(
    aligned: bool,
    device: &Device<B>,
    ctx: &mut Ctx,
) -> Result<(), Failure> {
    // cuBLASLt's layout: k and n multiples of 16 too.
    let unit = if aligned { 16 } else { 1 };
    let m = ctx.rng.random_range(1..=80);
    let n = ctx.rng.random_range(1..=80usize).next_multiple_of(unit);
    let k = if ctx.rng.random_ratio(1, 10) { 0 } else { ctx.rng.random_range(1..=200usize).next_multiple_of(unit) };
    let batch = ctx.rng.random_range(1..=3);
    let (ta, tb) = if aligned { (false, true) } else { (ctx.rng.random_bool(0.5), ctx.rng.random_bool(0.5)) };
    let stored = |t: bool, r: usize, c: usize| if t { (c, r) } else { (r, c) };
    let (ar, ac) = stored(ta, m, k);
    let (br, bc) = stored(tb, k, n);
    let la = MatrixLayout { transposed: ta, ..layout(ctx, ar, ac, batch, 1, aligned) };
    let lb = MatrixLayout { transposed: tb, ..layout(ctx, br, bc, batch, 1, aligned) };
    let lc = layout(ctx, m, n, batch, O::DTYPE.size(), aligned);
    let shape = MatmulShape::new(m, n, k).batch(batch).layouts(la, lb, lc);
    let Some([a_span, b_span, c_span]) = shape.spans() else {
        return Err(Failure::Contract(format!("the spans of {shape} overflow")));
    };
    let offset = |ctx: &mut Ctx, size: usize| {
        if aligned { 16 / size * ctx.rng.random_range(0..2) } else { ctx.rng.random_range(0..4) }
    };
    let (a_off, b_off, c_off) = (offset(ctx, 1), offset(ctx, 1), offset(ctx, O::DTYPE.size()));
    let a: Vec<A> = values(ctx, a_off, a_span);
    let b: Vec<W> = values(ctx, b_off, b_span);
    let (sa, sb) = (ctx.rng.random_range(0.125f32..4.0), ctx.rng.random_range(0.125f32..4.0));
    let after = ctx.rng.random_range(0..4);
    let mut before: Vec<O> = random_bits(ctx, c_off + c_span + after);
    let mut inside = vec![false; before.len()];
    let mut want = Vec::with_capacity(batch * m * n);
    let scale = f64::from(sa) * f64::from(sb);
    for z in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let (mut sum, mut mag) = (0.0f64, 0.0f64);
                for p in 0..k {
                    let x = f64::from(a[a_off + at(&la, z, i, p)].to_f32());
                    let y = f64::from(b[b_off + at(&lb, z, p, j)].to_f32());
                    sum += x * y;
                    mag += (x * y).abs();
                }
                let exact = sum * scale;
                let bound = (k as f64 + 2.0) * 2f64.powi(-13) * scale * mag;
                let rounded = bound + O::epsilon() * (exact.abs() + bound + O::min_normal());
                let place = c_off + at(&lc, z, i, j);
                let value = from_f64::<O>(exact);
                before[place] = inverted(&[value])[0];
                inside[place] = true;
                want.push((value, rounded));
            }
        }
    }
    let s = device.stream();
    let (ab, bb) = (device.upload(&a)?, device.upload(&b)?);
    // The scales in a buffer each, or side by side at 4-byte offsets.
    let own = ctx.rng.random_bool(0.5);
    let shared = device.upload(&[0.0f32, sa, sb])?;
    let (own_a, own_b) = (device.upload(&[sa])?, device.upload(&[sb])?);
    let mut cb = device.upload(&before)?;
    let done = {
        let (av, bv) = (ab.slice(a_off..)?, bb.slice(b_off..)?);
        let (sav, sbv) =
            if own { (own_a.slice(..)?, own_b.slice(..)?) } else { (shared.slice(1..2)?, shared.slice(2..3)?) };
        let mut cv = cb.slice_mut(c_off..c_off + c_span)?;
        matmul_scaled(&s, &av, &bv, &mut cv, shape, &sav, &sbv)
    };
    let placed = if own { "in buffers of their own" } else { "at 4-byte offsets" };
    let what = format!("{shape}, views at offsets {a_off}, {b_off} and {c_off}, scales {sa} and {sb} {placed}");
    same_bits(&format!("input a of {what}"), &a, &ab.to_vec()?)?;
    same_bits(&format!("input b of {what}"), &b, &bb.to_vec()?)?;
    let got = cb.to_vec()?;
    match done {
        Err(e @ Error::Unsupported { .. }) => {
            // Refused: c keeps every bit, and a device offering the product
            // takes it in cuBLASLt's layout.
            same_bits(&format!("c of {what}, refused"), &before, &got)?;
            let offered = B::KIND == kiln_core::BackendKind::Cpu
                || device.raw().vendor_gemm().is_some_and(|v| v.supports_scaled(A::DTYPE, W::DTYPE, O::DTYPE));
            if aligned && offered {
                return Err(Failure::Contract(format!("{what}: an offered product refused: {e}")));
            }
            return Err(Failure::Error(e));
        }
        Err(e) => return Err(Failure::Error(e)),
        Ok(_) => {}
    }
    let kept = |i: usize| inside[i] || bytemuck::bytes_of(&before[i]) == bytemuck::bytes_of(&got[i]);
    if let Some(m) =
        crate::compare::mismatch(&format!("c of {what}, elements outside its matrices"), &before, &got, kept)
    {
        return Err(Failure::Mismatch(m));
    }
    let got: Vec<O> = (0..got.len()).filter(|&i| inside[i]).map(|i| got[i]).collect();
    within_bounds(&format!("c of {what}, elements by product, row and column"), &want, &got, O::to_f64)
}

/// Add `matmul/scaled/{a}x{b}` and `.../any` for every pair of 8-bit types
/// and output type to `group`.
pub(super) fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    macro_rules! pair {
        ($a:ty, $b:ty) => {
            for aligned in [true, false] {
                let name = format!(
                    "matmul/scaled/{}x{}{}",
                    <$a as kiln_core::Element>::DTYPE,
                    <$b as kiln_core::Element>::DTYPE,
                    if aligned { "" } else { "/any" }
                );
                c.one(group, name.clone(), DType::F32, move |d, ctx| scaled::<B, $a, $b, f32>(aligned, d, ctx));
                c.one(group, name.clone(), DType::F16, move |d, ctx| scaled::<B, $a, $b, f16>(aligned, d, ctx));
                c.one(group, name, DType::BF16, move |d, ctx| scaled::<B, $a, $b, bf16>(aligned, d, ctx));
            }
        };
    }
    pair!(F8E4M3, F8E4M3);
    pair!(F8E4M3, F8E5M2);
    pair!(F8E5M2, F8E4M3);
    pair!(F8E5M2, F8E5M2);
}
