//! User kernels and Arrays on the 16-bit floats: values computed in f32
//! and each operation's result rounded once to its dtype (the correctly
//! rounded 16-bit result, checked bit for bit against the reference's
//! per-operation rounding), reductions accumulated in f32 and rounded in
//! the post-map (within an f32 sum's bound), fused Array arithmetic and
//! its folds.

use kiln_core::{Args, Backend, DType, Device, Language};
use kiln_kernels::Number;
use kiln_kernels::array::Array;
use kiln_kernels::expr::{Ty, var};
use kiln_kernels::user::{Elementwise, Reduction};

use crate::patterns::inputs::from_f64;
use crate::patterns::sums::{Compensated, sum_bound};
use crate::patterns::unchanged;
use crate::{Arith, Cases, Ctx, Expected, Failure, Tolerance, poisoned};

/// Inputs: the adversarial mix, but finite on wgpu (WGSL lets the compiler
/// assume finite values, so results through infinities and NaN are
/// indeterminate there).
fn inputs<B: Backend, T: Arith>(ctx: &mut Ctx) -> Vec<T> {
    let finite = B::LANGUAGE == Language::Wgsl;
    (0..ctx.n)
        .map(|_| {
            let v = T::random(&mut ctx.rng);
            if finite && !v.to_f64().is_finite() { T::random_moderate(&mut ctx.rng) } else { v }
        })
        .collect()
}

/// `z = x * y + 1.5` and `w = x - y * a` (a scalar), every operation rounded
/// to `T`: the product, then the sum, each once.
fn elementwise<B: Backend, T: Arith + Number>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let t = Ty::param("T");
    let k = Elementwise::new("half_ops")
        .input("x", t.clone())
        .input("y", t.clone())
        .scalar("a", t.clone())
        .output("z", t.clone())
        .output("w", t)
        .set("z", var("x") * var("y") + 1.5)
        .set("w", var("x") - var("y") * var("a"))
        .build()?;
    let (x, y): (Vec<T>, Vec<T>) = (inputs::<B, T>(ctx), inputs::<B, T>(ctx));
    let a = T::random_moderate(&mut ctx.rng);
    let half = from_f64::<T>(1.5);
    let z: Vec<T> = x.iter().zip(&y).map(|(&x, &y)| T::plus(T::times(x, y), half)).collect();
    let w: Vec<T> = x.iter().zip(&y).map(|(&x, &y)| T::minus(x, T::times(y, a))).collect();
    let (ez, ew) = (Expected::new(z, Tolerance::Exact), Expected::new(w, Tolerance::Exact));
    let (xb, yb) = (device.upload(&x)?, device.upload(&y)?);
    let (mut zb, mut wb) = (poisoned(device, &ez.values)?, poisoned(device, &ew.values)?);
    let s = device.stream();
    k.launch(&s, Args::new().arg(&xb).arg(&yb).scalar(a).arg(&mut zb).arg(&mut wb))?;
    ctx.compare_inputs("z = x * y + 1.5", &ez, &zb.to_vec()?, &[("x", &x), ("y", &y)])?;
    ctx.compare_inputs("w = x - y * a", &ew, &wb.to_vec()?, &[("x", &x), ("y", &y)])?;
    unchanged("input x", &xb, &x)
}

/// The sum of squares in f32, rounded to `T` in the post-map, whole and per row.
fn reduction<B: Backend, T: Arith + Number>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let t = Ty::param("T");
    let wide = || var("x").cast(DType::F32);
    let k = Reduction::new("half_sumsq", DType::F32)
        .input("x", t.clone())
        .map(wide() * wide())
        .reduce(var("a") + var("b"))
        .identity(0)
        .post(t.clone(), var("a").cast(t))
        .build()?;
    let x: Vec<T> = (0..ctx.n).map(|_| T::random_moderate(&mut ctx.rng)).collect();
    let sumsq = |xs: &[T]| {
        let mut s = Compensated::default();
        xs.iter().for_each(|v| s.add(v.to_f64() * v.to_f64()));
        (from_f64::<T>(s.value()), sum_bound::<T>(xs.len(), s.value(), s.value()))
    };
    let (want, bound) = sumsq(&x);
    let xb = device.upload(&x)?;
    let s = device.stream();
    let got = k.reduce::<_, T>(&s, Args::new().arg(&xb))?;
    ctx.compare("sum of squares", &Expected::within(vec![want], vec![bound]), &[got])?;
    let rows = if ctx.n >= 3 { 3 } else { 1 };
    let cols = ctx.n / rows;
    let per_row: Vec<(T, f64)> = (0..rows).map(|r| sumsq(&x[r * cols..(r + 1) * cols])).collect();
    let expected = Expected::within(per_row.iter().map(|p| p.0).collect(), per_row.iter().map(|p| p.1).collect());
    let mut out = poisoned(device, &expected.values)?;
    let xr = device.upload(&x[..rows * cols])?;
    k.reduce_axis(&s, Args::new().arg(&xr), rows, cols, 1, &mut out)?;
    ctx.compare("sum of squares per row", &expected, &out.to_vec()?)
}

/// Fused `(a + b) * a`, each operation rounded, and its sum accumulated in f32.
fn array<B: Backend, T: Arith + Number>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let (x, y): (Vec<T>, Vec<T>) = (inputs::<B, T>(ctx), inputs::<B, T>(ctx));
    let s = device.stream();
    let (a, b) = (Array::from_vec(&s, &[ctx.n], &x)?, Array::from_vec(&s, &[ctx.n], &y)?);
    let want: Vec<T> = x.iter().zip(&y).map(|(&x, &y)| T::times(T::plus(x, y), x)).collect();
    let c = ((&a + &b) * &a).eval()?;
    ctx.compare_inputs("(a + b) * a", &Expected::new(want, Tolerance::Exact), &c.to_vec()?, &[("a", &x), ("b", &y)])?;
    // Moderate values for the sum, so that it stays finite.
    let m: Vec<T> = (0..ctx.n).map(|_| T::random_moderate(&mut ctx.rng)).collect();
    let mut total = Compensated::default();
    m.iter().for_each(|v| total.add(v.to_f64()));
    let magnitude: f64 = m.iter().map(|v| v.to_f64().abs()).sum();
    let expected =
        Expected::within(vec![from_f64::<T>(total.value())], vec![sum_bound::<T>(ctx.n, magnitude, total.value())]);
    let got = Array::from_vec(&s, &[ctx.n], &m)?.sum()?;
    ctx.compare("the sum of an array", &expected, &[got])
}

/// Add the 16-bit user-kernel and Array cases to `group`.
pub(super) fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    c.one(group, "user/half-elementwise", DType::F16, elementwise::<B, half::f16>);
    c.one(group, "user/half-elementwise", DType::BF16, elementwise::<B, half::bf16>);
    c.one(group, "user/half-reduce", DType::F16, reduction::<B, half::f16>);
    c.one(group, "user/half-reduce", DType::BF16, reduction::<B, half::bf16>);
    c.one(group, "user/half-array", DType::F16, array::<B, half::f16>);
    c.one(group, "user/half-array", DType::BF16, array::<B, half::bf16>);
}
