//! User reductions: random integer maps (the user-kernel expression
//! generator) folded by each integer combining operation, over the whole
//! array and along either axis of a random shape, against a sequential
//! fold in i64; and a float mean of products, against a compensated sum.

use kiln_core::{Args, Backend, DType, Device};
use kiln_kernels::expr::{Expr, len, var};
use kiln_kernels::user::Reduction;
use rand::Rng;

use super::ints::Ints;
use super::{Env, R, build_with, tree};
use crate::patterns::reduce::shape;
use crate::patterns::sums::{Compensated, sum_bound};
use crate::patterns::unchanged;
use crate::{Ctx, Expected, Failure, Tolerance, poisoned};

/// A combining operation: its name, the expression, the identity, the reference.
pub(super) struct Combine {
    pub(super) name: &'static str,
    pub(super) expr: fn() -> Expr,
    pub(super) identity: fn(signed: bool) -> i64,
    pub(super) fold: fn(&Env<'_>, i64, i64) -> i64,
}

pub(super) const COMBINE: [Combine; 6] = [
    Combine { name: "+", expr: || var("a") + var("b"), identity: |_| 0, fold: |e, a, b| e.wrap(a + b) },
    Combine {
        name: "min",
        expr: || var("a").min(var("b")),
        identity: |s| if s { i32::MAX as i64 } else { u32::MAX as i64 },
        fold: |_, a, b| a.min(b),
    },
    Combine {
        name: "max",
        expr: || var("a").max(var("b")),
        identity: |s| if s { i32::MIN as i64 } else { 0 },
        fold: |_, a, b| a.max(b),
    },
    Combine { name: "^", expr: || var("a") ^ var("b"), identity: |_| 0, fold: |e, a, b| e.wrap(a ^ b) },
    Combine { name: "|", expr: || var("a") | var("b"), identity: |_| 0, fold: |e, a, b| e.wrap(a | b) },
    Combine {
        name: "&",
        expr: || var("a") & var("b"),
        identity: |s| if s { -1 } else { u32::MAX as i64 },
        fold: |e, a, b| e.wrap(a & b),
    },
];

/// Random integer maps folded whole and along both axes.
fn random_ints<B: Backend, T>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure>
where
    T: crate::Sample + kiln_kernels::Number + Into<i64> + TryFrom<i64>,
{
    let signed = T::DTYPE == DType::I32;
    let (rows, cols) = shape(ctx);
    let n = rows * cols;
    let inputs = Ints::<B, T>::new(device, ctx, n)?;
    let env = inputs.env();
    let s = device.stream();
    let to_t = |v: i64| T::try_from(v).unwrap_or_default();
    for (k, c) in COMBINE.iter().enumerate() {
        let map: R = tree(&mut ctx.rng, 3);
        let with_post = ctx.rng.random_bool(0.5);
        let mut def = Reduction::new(format!("reduce_{k}"), T::DTYPE)
            .input("x", T::DTYPE)
            .input("y", T::DTYPE)
            .raw("r", T::DTYPE)
            .scalar("s", T::DTYPE)
            .map(build_with(&map, T::DTYPE, "s"))
            .reduce((c.expr)())
            .identity(Expr::from((c.identity)(signed)));
        // The post-map sees the folded value and the scalar (named `s`:
        // `a` is the folded value there).
        if with_post {
            def = def.post(T::DTYPE, var("a") ^ var("s"));
        }
        let kernel = def.build()?;
        let mapped: Vec<i64> = (0..n).map(|i| env.eval(&map, i)).collect();
        let fold = |idx: &mut dyn Iterator<Item = usize>| {
            let v = idx.fold((c.identity)(signed), |acc, i| (c.fold)(&env, acc, mapped[i]));
            to_t(if with_post { env.wrap(v ^ env.a) } else { v })
        };
        let what = |how: &str| format!("reduce {} of {} {how}", c.name, build_with(&map, T::DTYPE, "s"));
        let args = || inputs.args();

        let whole = vec![fold(&mut (0..n))];
        let mut out = poisoned(device, &whole)?;
        kernel.reduce_into(&s, args(), &mut out)?;
        ctx.compare(&what("whole"), &Expected::new(whole, Tolerance::Exact), &out.to_vec()?)?;

        for (axis, lines) in [(1, rows), (0, cols)] {
            let want: Vec<T> = (0..lines).map(|l| fold(&mut line(rows, cols, axis, l))).collect();
            let mut out = poisoned(device, &want)?;
            kernel.reduce_axis(&s, args(), rows, cols, axis, &mut out)?;
            let how = format!("along axis {axis} of {rows} x {cols}");
            ctx.compare(&what(&how), &Expected::new(want, Tolerance::Exact), &out.to_vec()?)?;
        }
    }
    inputs.unchanged()
}

/// The indices of line `l` of a `rows x cols` row-major matrix reduced
/// along `axis`: row `l` along axis 1, column `l` along axis 0.
fn line(rows: usize, cols: usize, axis: usize, l: usize) -> Box<dyn Iterator<Item = usize>> {
    if axis == 1 { Box::new(l * cols..(l + 1) * cols) } else { Box::new((0..rows).map(move |r| r * cols + l)) }
}

/// For 8 Ki elements or more, 2 to 8 rows (each cut into parts, a block
/// each, on a GPU); fewer, any shape.
fn few_long_rows(ctx: &mut Ctx) -> (usize, usize) {
    if ctx.n < 8192 {
        return shape(ctx);
    }
    let rows = ctx.rng.random_range(2..=8);
    (rows, ctx.n / rows)
}

/// The mean of `x[i] * y[i]` (a float map, sum, and a post-map dividing
/// by `len()`), whole and along both axes, against compensated sums.
fn float_means<B: Backend, T>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure>
where
    T: crate::Arith + kiln_kernels::Number,
{
    let (rows, cols) = few_long_rows(ctx);
    let n = rows * cols;
    let unit = |ctx: &mut Ctx| -> Vec<T> {
        (0..n).map(|_| crate::patterns::inputs::from_f64(ctx.rng.random_range(-1.0..1.0))).collect()
    };
    let (x, y) = (unit(ctx), unit(ctx));
    let kernel = Reduction::new("mean_of_products", T::DTYPE)
        .input("x", T::DTYPE)
        .input("y", T::DTYPE)
        .map(var("x") * var("y"))
        .reduce(var("a") + var("b"))
        .identity(0)
        .post(T::DTYPE, var("a") / len().cast(T::DTYPE))
        .build()?;
    let s = device.stream();
    let (xb, yb) = (device.upload(&x)?, device.upload(&y)?);
    let mean = |idx: &mut dyn Iterator<Item = usize>| -> (T, f64) {
        let (mut sum, mut magnitude, mut count) = (Compensated::default(), 0.0f64, 0usize);
        for i in idx {
            let p = x[i].to_f64() * y[i].to_f64();
            sum.add(p);
            magnitude += p.abs();
            count += 1;
        }
        let m = sum.value() / count as f64;
        let bound = sum_bound::<T>(count, magnitude, sum.value()) / count.max(1) as f64 + T::epsilon() * m.abs();
        (crate::patterns::inputs::from_f64(m), bound)
    };
    let expect = |v: Vec<(T, f64)>| {
        let (values, bounds): (Vec<T>, Vec<f64>) = v.into_iter().unzip();
        Expected::within(values, bounds)
    };
    let args = || Args::new().arg(&xb).arg(&yb);

    let whole = expect(vec![mean(&mut (0..n))]);
    let mut out = poisoned(device, &whole.values)?;
    kernel.reduce_into(&s, args(), &mut out)?;
    ctx.compare("mean of x * y", &whole, &out.to_vec()?)?;

    for (axis, lines) in [(1, rows), (0, cols)] {
        let want = expect((0..lines).map(|l| mean(&mut line(rows, cols, axis, l))).collect());
        let mut out = poisoned(device, &want.values)?;
        kernel.reduce_axis(&s, args(), rows, cols, axis, &mut out)?;
        ctx.compare(&format!("mean of x * y along axis {axis} of {rows} x {cols}"), &want, &out.to_vec()?)?;
    }
    unchanged("input x", &xb, &x)
}

/// Add the user-reduction cases to `group`.
pub fn register<B: Backend>(c: &mut crate::Cases<B>, group: &'static str) {
    c.one(group, "user/reduce-int", DType::I32, |d, ctx| random_ints::<B, i32>(d, ctx));
    c.one(group, "user/reduce-int", DType::U32, |d, ctx| random_ints::<B, u32>(d, ctx));
    c.one(group, "user/reduce-mean", DType::F32, |d, ctx| float_means::<B, f32>(d, ctx));
    c.one(group, "user/reduce-mean", DType::F64, |d, ctx| float_means::<B, f64>(d, ctx));
}
