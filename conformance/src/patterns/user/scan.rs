//! User scans: random integer maps (the user-kernel expression generator)
//! scanned by each integer combining operation and by the composition of
//! maps of {0, 1, 2, 3} (associative, not commutative: the order must be
//! kept), inclusive and exclusive, against a sequential fold in i64; and a
//! float running sum of products against compensated prefix sums.

use kiln_core::{Args, Backend, DType, Device};
use kiln_kernels::expr::{Expr, var};
use kiln_kernels::scan::ScanKind;
use kiln_kernels::user::Scan;

use super::ints::Ints;
use super::reduce::COMBINE;
use super::{R, build_with, tree};
use crate::patterns::sums::Compensated;
use crate::patterns::unchanged;
use crate::{Ctx, Expected, Failure, Tolerance, poisoned};

/// The image of `k` under the map `m` (two bits per image), as an expression.
fn image(m: Expr, k: Expr) -> Expr {
    (m >> (k * 2)) & 3
}

/// Maps of {0, 1, 2, 3} composed: `a` then `b`.
fn compose_expr() -> Expr {
    (0..4)
        .map(|k| image(var("b"), image(var("a"), Expr::from(k))) << (2 * k))
        .reduce(|x, y| x | y)
        .unwrap_or(Expr::from(0))
}

fn compose(a: i64, b: i64) -> i64 {
    (0..4).fold(0, |c, k| c | (((b >> (((a >> (2 * k)) & 3) * 2)) & 3) << (2 * k)))
}

/// Sequential inclusive or exclusive scan of `xs` from `id`.
fn sequential(kind: ScanKind, xs: &[i64], id: i64, op: impl Fn(i64, i64) -> i64) -> Vec<i64> {
    let mut acc = id;
    xs.iter()
        .map(|&x| {
            let before = acc;
            acc = op(acc, x);
            if kind == ScanKind::Inclusive { acc } else { before }
        })
        .collect()
}

/// Random integer maps scanned by every combining operation.
fn random_ints<B: Backend, T>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure>
where
    T: crate::Sample + kiln_kernels::Number + Into<i64> + TryFrom<i64>,
{
    let signed = T::DTYPE == DType::I32;
    let n = ctx.n;
    let inputs = Ints::<B, T>::new(device, ctx, n)?;
    let env = inputs.env();
    let s = device.stream();
    let to_t = |v: i64| T::try_from(v).unwrap_or_default();
    type Fold<'e> = Box<dyn Fn(i64, i64) -> i64 + 'e>;
    let mut ops: Vec<(&str, Expr, i64, Fold<'_>)> = COMBINE
        .iter()
        .map(|c| {
            let f = c.fold;
            let env = &env;
            (c.name, (c.expr)(), (c.identity)(signed), Box::new(move |p, q| f(env, p, q)) as Fold<'_>)
        })
        .collect();
    ops.push(("compose", compose_expr(), 0xe4, Box::new(compose)));
    for (k, (name, combine, identity, fold)) in ops.into_iter().enumerate() {
        let map: R = tree(&mut ctx.rng, 3);
        let compose = name == "compose";
        let body = build_with(&map, T::DTYPE, "s");
        let kernel = Scan::new(format!("scan_{k}"), T::DTYPE)
            .input("x", T::DTYPE)
            .input("y", T::DTYPE)
            .raw("r", T::DTYPE)
            .scalar("s", T::DTYPE)
            .map(if compose { body.clone() & 0xff } else { body.clone() })
            .scan(combine)
            .identity(Expr::from(identity))
            .build()?;
        let mapped: Vec<i64> = (0..n).map(|i| env.eval(&map, i) & if compose { 0xff } else { -1 }).collect();
        for kind in ScanKind::ALL {
            let want: Vec<T> = sequential(kind, &mapped, identity, &fold).into_iter().map(to_t).collect();
            let mut out = poisoned(device, &want)?;
            kernel.scan(&s, kind, inputs.args(), &mut out)?;
            let what = format!("{kind} scan {name} of {body}{}", if compose { " & 0xff" } else { "" });
            ctx.compare(&what, &Expected::new(want, Tolerance::Exact), &out.to_vec()?)?;
        }
    }
    inputs.unchanged()
}

/// The running sum of `x[i] * y[i]`, inclusive and exclusive, against
/// compensated prefix sums.
fn float_sums<B: Backend, T>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure>
where
    T: crate::Arith + kiln_kernels::Number,
{
    let n = ctx.n;
    let unit = |ctx: &mut Ctx| -> Vec<T> {
        (0..n).map(|_| crate::patterns::inputs::from_f64(rand::Rng::random_range(&mut ctx.rng, -1.0..1.0))).collect()
    };
    let (x, y) = (unit(ctx), unit(ctx));
    let kernel = Scan::new("running_dot", T::DTYPE)
        .input("x", T::DTYPE)
        .input("y", T::DTYPE)
        .map(var("x") * var("y"))
        .scan(var("a") + var("b"))
        .identity(0)
        .build()?;
    let s = device.stream();
    let (xb, yb) = (device.upload(&x)?, device.upload(&y)?);
    // Each output is a sum of up to n products in some grouping: runs in
    // order (a thread's items, 32 on CUDA; 128 on the CPU), trees over
    // runs and tiles, and on CUDA a chain over the tiles before (8192 each).
    let depth = 4.0 * ((n + 1) as f64).log2() + 2.0 + 128.0 + (n / 8192) as f64;
    for kind in ScanKind::ALL {
        let (mut sum, mut magnitude) = (Compensated::default(), 0.0f64);
        let mut want = Vec::with_capacity(n);
        for i in 0..n {
            let p = x[i].to_f64() * y[i].to_f64();
            if kind == ScanKind::Inclusive {
                sum.add(p);
                magnitude += p.abs();
            }
            let v = sum.value();
            want.push((crate::patterns::inputs::from_f64::<T>(v), T::epsilon() * (depth * magnitude + 2.0 * v.abs())));
            if kind == ScanKind::Exclusive {
                sum.add(p);
                magnitude += p.abs();
            }
        }
        let (values, bounds): (Vec<T>, Vec<f64>) = want.into_iter().unzip();
        let expected = Expected::within(values, bounds);
        let mut out = poisoned(device, &expected.values)?;
        kernel.scan(&s, kind, Args::new().arg(&xb).arg(&yb), &mut out)?;
        ctx.compare(&format!("{kind} running sum of x * y"), &expected, &out.to_vec()?)?;
    }
    unchanged("input x", &xb, &x)
}

/// Add the user-scan cases to `group`.
pub fn register<B: Backend>(c: &mut crate::Cases<B>, group: &'static str) {
    c.one(group, "user/scan-int", DType::I32, |d, ctx| random_ints::<B, i32>(d, ctx));
    c.one(group, "user/scan-int", DType::U32, |d, ctx| random_ints::<B, u32>(d, ctx));
    c.one(group, "user/scan-sum", DType::F32, |d, ctx| float_sums::<B, f32>(d, ctx));
    c.one(group, "user/scan-sum", DType::F64, |d, ctx| float_sums::<B, f64>(d, ctx));
}
