//! Fused array expressions: random trees of operators over three arrays
//! that broadcast together (some of them transposed or reversed views) and
//! scalars, each run as one kernel, against the same tree evaluated per
//! element on the host over ndarray's broadcast views. Integers use every
//! operator the reference has (wrapping, division by zero giving the
//! dividend); floats use those that round the same everywhere (no product
//! a GPU could fuse into an add), on finite inputs.

use kiln_core::{Backend, Device};
use kiln_kernels::Number;
use kiln_kernels::array::{Array, ArrayExpr, Fold, where_};
use ndarray::{ArrayD, IxDyn};
use rand::Rng;

use crate::{Arith, CaseRng, Cases, Ctx, Expected, Failure, NumberPattern};

/// A random expression: `X(k)` is operand `k`, `S(v)` a scalar.
#[derive(Clone, Debug)]
enum P<T> {
    X(usize),
    S(T),
    Un(&'static str, Box<P<T>>),
    Bin(&'static str, Box<P<T>>, Box<P<T>>),
    Where(&'static str, Box<[P<T>; 4]>),
}

const OPERANDS: usize = 3;

fn tree<T: Arith>(rng: &mut CaseRng, depth: u32) -> P<T> {
    if depth == 0 || rng.random_bool(0.25) {
        return if rng.random_bool(0.8) { P::X(rng.random_range(0..OPERANDS)) } else { P::S(T::random_moderate(rng)) };
    }
    let un: &[&str] = &["neg", "abs"];
    let bin: &[&str] = if T::IS_FLOAT { &["+", "-", "min", "max"] } else { &["+", "-", "*", "/", "min", "max"] };
    let cmp = ["<", "<=", ">", ">=", "==", "!="];
    match rng.random_range(0..10) {
        0..2 => {
            let op = un[rng.random_range(0..un.len())];
            P::Un(op, Box::new(tree(rng, depth - 1)))
        }
        2 => {
            let op = cmp[rng.random_range(0..cmp.len())];
            let q = [tree(rng, depth - 1), tree(rng, depth - 1), tree(rng, depth - 1), tree(rng, depth - 1)];
            P::Where(op, Box::new(q))
        }
        _ => {
            let op = bin[rng.random_range(0..bin.len())];
            P::Bin(op, Box::new(tree(rng, depth - 1)), Box::new(tree(rng, depth - 1)))
        }
    }
}

fn build<B: Backend, T: Arith + Number>(p: &P<T>, xs: &[Array<B, T>]) -> ArrayExpr<B, T> {
    match p {
        P::X(k) => xs[*k].expr(),
        P::S(v) => ArrayExpr::scalar(*v),
        P::Un("neg", a) => -build(a, xs),
        P::Un(_, a) => build(a, xs).abs(),
        P::Bin(op, a, b) => {
            let (a, b) = (build(a, xs), build(b, xs));
            match *op {
                "+" => a + b,
                "-" => a - b,
                "*" => a * b,
                "/" => a / b,
                "min" => a.minimum(b),
                _ => a.maximum(b),
            }
        }
        P::Where(cmp, q) => {
            let [l, r, a, b] = &**q;
            let (l, r) = (build(l, xs), build(r, xs));
            let mask = match *cmp {
                "<" => l.lt(r),
                "<=" => l.le(r),
                ">" => l.gt(r),
                ">=" => l.ge(r),
                "==" => l.eq_to(r),
                _ => l.ne_to(r),
            };
            where_(mask, build(a, xs), build(b, xs))
        }
    }
}

/// The machine epsilon of float `T` (f64's for the integers, whose
/// comparisons are exact whatever the bound).
pub(super) fn eps<T: Arith>() -> f64 {
    if T::DTYPE == kiln_core::DType::F32 { f32::EPSILON as f64 } else { f64::EPSILON }
}

/// kiln's min and max: the other operand where one is NaN.
fn pick<T: Arith + PartialOrd>(a: T, b: T, smaller: bool) -> T {
    #[allow(clippy::eq_op)] // NaN is the value unequal to itself
    let (a_nan, b_nan) = (a != a, b != b);
    if a_nan {
        return b;
    }
    if b_nan {
        return a;
    }
    if (b < a) == smaller { b } else { a }
}

fn eval<T: Arith + PartialOrd>(p: &P<T>, x: &[T; OPERANDS]) -> T {
    match p {
        P::X(k) => x[*k],
        P::S(v) => *v,
        P::Un("neg", a) => T::negated(eval(a, x)),
        P::Un(_, a) => T::absolute(eval(a, x)),
        P::Bin(op, a, b) => {
            let (a, b) = (eval(a, x), eval(b, x));
            match *op {
                "+" => T::plus(a, b),
                "-" => T::minus(a, b),
                "*" => T::times(a, b),
                "/" => T::over(a, b),
                "min" => pick(a, b, true),
                _ => pick(a, b, false),
            }
        }
        P::Where(cmp, q) => {
            let [l, r, a, b] = &**q;
            if super::holds(cmp, eval(l, x), eval(r, x)) { eval(a, x) } else { eval(b, x) }
        }
    }
}

/// The sum of the magnitudes of every value `p` adds or subtracts at
/// `x`: a float result is within a few epsilons of it, however a backend
/// groups or contracts the operations (Vulkan may turn `x + x` into
/// `2 * x` and fuse it into the next addition).
fn magnitude<T: Arith + PartialOrd>(p: &P<T>, x: &[T; OPERANDS]) -> f64 {
    match p {
        P::X(_) | P::S(_) => eval(p, x).to_f64().abs(),
        P::Un(_, a) => magnitude(a, x),
        P::Bin("+" | "-", a, b) => magnitude(a, x) + magnitude(b, x),
        P::Bin(_, a, b) => magnitude(a, x).max(magnitude(b, x)),
        P::Where(_, q) => {
            let [l, r, a, b] = &**q;
            [l, r, a, b].iter().map(|t| magnitude(t, x)).fold(0.0, f64::max)
        }
    }
}

/// An operand of `shape` on the device and the host, made plainly, as a
/// transposed view, or as a reversed view of a longer array.
fn operand<B: Backend, T: Arith + Number>(
    rng: &mut CaseRng,
    device: &Device<B>,
    shape: &[usize],
) -> Result<(Array<B, T>, ArrayD<T>), Failure> {
    let s = device.stream();
    let n: usize = shape.iter().product();
    let data: Vec<T> = (0..n).map(|_| T::random_moderate(rng)).collect();
    let bad = |e: ndarray::ShapeError| Failure::Contract(e.to_string());
    match rng.random_range(0..3) {
        0 => {
            let rev: Vec<usize> = shape.iter().rev().copied().collect();
            let h = ArrayD::from_shape_vec(IxDyn(&rev), data.clone()).map_err(bad)?;
            Ok((Array::from_vec(&s, &rev, &data)?.t(), h.t().to_owned()))
        }
        1 if !shape.is_empty() => {
            // Every other element of the last axis, backwards.
            let mut wide = shape.to_vec();
            let last = wide.len() - 1;
            wide[last] = wide[last] * 2 + 1;
            let m: usize = wide.iter().product();
            let data: Vec<T> = (0..m).map(|_| T::random_moderate(rng)).collect();
            let h = ArrayD::from_shape_vec(IxDyn(&wide), data.clone()).map_err(bad)?;
            let mut info = vec![ndarray::SliceInfoElem::Slice { start: 0, end: None, step: 1 }; last];
            info.push(ndarray::SliceInfoElem::Slice { start: 0, end: Some(2 * shape[last] as isize), step: -2 });
            let si = ndarray::SliceInfo::<_, IxDyn, IxDyn>::try_from(info.clone())
                .map_err(|e| Failure::Contract(e.to_string()))?;
            Ok((Array::from_vec(&s, &wide, &data)?.slice(&info)?, h.slice(si.as_ref()).to_owned()))
        }
        _ => Ok((Array::from_vec(&s, shape, &data)?, ArrayD::from_shape_vec(IxDyn(shape), data).map_err(bad)?)),
    }
}

/// Random fused expressions over arrays broadcasting to about `ctx.n` elements.
#[derive(Clone, Copy)]
struct Fused;

/// The result shape and three operands broadcasting to it (the first has
/// the whole shape), on the device and the host.
type Setup<B, T> = (Vec<usize>, Vec<Array<B, T>>, Vec<ArrayD<T>>);

fn setup<B: Backend, T: Arith + Number>(device: &Device<B>, ctx: &mut Ctx) -> Result<Setup<B, T>, Failure> {
    let rng = &mut ctx.rng;
    let n = ctx.n.min(1 << 18);
    // The result shape: up to three dimensions holding n elements.
    let a = if n > 1 { [7, 3, 2, 1].into_iter().find(|d| n.is_multiple_of(*d)).unwrap_or(1) } else { 1 };
    let shape: Vec<usize> = match rng.random_range(0..3) {
        0 => vec![n],
        1 => vec![a, n / a.max(1)],
        _ => vec![2, a, n / a.max(1)],
    };
    let shape: Vec<usize> = if shape.iter().product::<usize>() == n { shape } else { vec![n] };
    let (mut xs, mut hs) = (Vec::new(), Vec::new());
    for k in 0..OPERANDS {
        // The first operand has the whole shape; the others drop leading
        // axes or have extent 1 somewhere, and broadcast.
        let drop = if k == 0 { 0 } else { rng.random_range(0..shape.len()) };
        let own: Vec<usize> =
            shape[drop..].iter().map(|&e| if k > 0 && rng.random_bool(0.3) { 1 } else { e }).collect();
        let (x, h) = operand::<B, T>(rng, device, &own)?;
        xs.push(x);
        hs.push(h);
    }
    Ok((shape, xs, hs))
}

/// A random tree in which every operand takes part (`x0 == x0` holds on
/// finite inputs), so the result has the whole broadcast shape.
fn whole<T: Arith>(rng: &mut CaseRng) -> P<T> {
    let body: P<T> = tree(rng, 4);
    let rest = P::Bin("min", Box::new(P::X(1)), Box::new(P::X(2)));
    P::Where("==", Box::new([P::X(0), P::X(0), body, rest]))
}

/// `f` of the operands' values at each element of `shape`, row-major.
fn each<T: Arith, R>(hs: &[ArrayD<T>], shape: &[usize], f: impl Fn(&[T; OPERANDS]) -> R) -> Result<Vec<R>, Failure> {
    let views: Vec<_> = hs
        .iter()
        .map(|h| h.broadcast(IxDyn(shape)).ok_or_else(|| Failure::Contract(format!("{:?} vs {shape:?}", h.shape()))))
        .collect::<Result<_, _>>()?;
    Ok(views[0].iter().zip(views[1].iter()).zip(views[2].iter()).map(|((a, b), c)| f(&[*a, *b, *c])).collect())
}

/// The host's values of `p` over the operands broadcast to `shape`.
fn host<T: Arith + PartialOrd>(p: &P<T>, hs: &[ArrayD<T>], shape: &[usize]) -> Result<ArrayD<T>, Failure> {
    let want = each(hs, shape, |x| eval(p, x))?;
    ArrayD::from_shape_vec(IxDyn(shape), want).map_err(|e| Failure::Contract(e.to_string()))
}

impl NumberPattern for Fused {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let (shape, xs, hs) = setup::<B, T>(device, ctx)?;
        for _ in 0..4 {
            let p = whole::<T>(&mut ctx.rng);
            let got = build(&p, &xs).eval()?;
            let want: Vec<T> = host(&p, &hs, &shape)?.iter().copied().collect();
            let eps = eps::<T>();
            let bounds: Vec<f64> = each(&hs, &shape, |x| 4.0 * eps * magnitude(&p, x))?;
            let what = format!("{p:?} over {:?}", hs.iter().map(|h| h.shape().to_vec()).collect::<Vec<_>>());
            if got.shape() != shape.as_slice() {
                return Err(Failure::Contract(format!("{what}: shape {:?}, expected {shape:?}", got.shape())));
            }
            // Integers compare exactly whatever the bounds say.
            let wide: Vec<f64> = want.iter().map(|v| v.to_f64()).collect();
            crate::compare(&what, &Expected::within(want, bounds.clone()), &got.to_vec()?)
                .map_err(Failure::Mismatch)?;
            // The same expression converted to f64 in the same kernel: every
            // i32, u32 and f32 value is exact in f64.
            let as_f64 = build(&p, &xs).astype::<f64>()?.to_vec()?;
            crate::compare(&format!("{what} as f64"), &Expected::within(wide, bounds.clone()), &as_f64)
                .map_err(Failure::Mismatch)?;
            // In place: a clone of the first operand (of the whole shape)
            // takes the value and then `+=` the broadcast second operand;
            // the operand itself keeps its values (copy-on-write).
            let mut a = xs[0].clone();
            a.assign(build(&p, &xs))?;
            a += &xs[1];
            a.check()?;
            let want = each(&hs, &shape, |x| T::plus(eval(&p, x), x[1]))?;
            let bounds: Vec<f64> =
                bounds.iter().zip(&want).map(|(b, w)| 2.0 * b + 2.0 * eps * w.to_f64().abs()).collect();
            crate::compare(&format!("{what} assigned, then += x1"), &Expected::within(want, bounds), &a.to_vec()?)
                .map_err(Failure::Mismatch)?;
            let kept: Vec<T> = hs[0].iter().copied().collect();
            crate::compare(
                "the first operand after an update of its clone",
                &Expected::new(kept, crate::Tolerance::Exact),
                &xs[0].to_vec()?,
            )
            .map_err(Failure::Mismatch)?;
        }
        Ok(())
    }
}

/// Random expressions reduced whole and along random axes in one pass.
#[derive(Clone, Copy)]
struct Reduced;

/// Each fold's host value over `v`, with its error bound for floats.
fn fold_host<T: Arith + PartialOrd>(fold: Fold, v: &[T]) -> (T, f64) {
    let eps = eps::<T>();
    let mag: f64 = v.iter().map(|x| x.to_f64().abs()).sum();
    let bound = 2.0 * eps * (v.len().max(2) as f64) * mag;
    match fold {
        Fold::Sum => (v.iter().fold(T::index(0), |a, b| T::plus(a, *b)), bound),
        Fold::Min => (v.iter().copied().reduce(|a, b| pick(a, b, true)).unwrap_or(T::index(0)), 0.0),
        _ => (v.iter().copied().reduce(|a, b| pick(a, b, false)).unwrap_or(T::index(0)), 0.0),
    }
}

impl NumberPattern for Reduced {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let (shape, xs, hs) = setup::<B, T>(device, ctx)?;
        for fold in [Fold::Sum, Fold::Min, Fold::Max] {
            let p = whole::<T>(&mut ctx.rng);
            let h = host(&p, &hs, &shape)?;
            let e = build(&p, &xs);
            let what = format!("{fold:?} of {p:?}");
            let flat: Vec<T> = h.iter().copied().collect();
            if flat.is_empty() && fold != Fold::Sum {
                match e.fold(fold) {
                    Err(kiln_core::Error::InvalidArgument { .. }) => continue,
                    other => return Err(Failure::Contract(format!("{what} of no elements gave {other:?}"))),
                }
            }
            let (want, bound) = fold_host(fold, &flat);
            // The map's own rounding (contracted or regrouped on a GPU).
            let eps = eps::<T>();
            let mags = each(&hs, &shape, |x| 4.0 * eps * magnitude(&p, x))?;
            let map_err =
                if fold == Fold::Sum { mags.iter().sum::<f64>() } else { mags.iter().copied().fold(0.0, f64::max) };
            let bound = bound + map_err;
            let got = e.fold(fold)?;
            crate::compare(&what, &Expected::within(vec![want], vec![bound]), &[got]).map_err(Failure::Mismatch)?;
            // Along a random non-empty set of axes.
            let axes: Vec<usize> = (0..shape.len()).filter(|_| ctx.rng.random_bool(0.5)).collect();
            let axes = if axes.is_empty() { vec![shape.len() - 1] } else { axes };
            if fold != Fold::Sum && axes.iter().any(|&a| shape[a] == 0) {
                continue;
            }
            let got = e.fold_axes(fold, &axes)?;
            let mut folded = h.clone();
            for &a in axes.iter().rev() {
                folded = folded.map_axis(ndarray::Axis(a), |lane| {
                    let v: Vec<T> = lane.iter().copied().collect();
                    fold_host(fold, &v).0
                });
            }
            let kept: Vec<usize> = (0..shape.len()).filter(|d| !axes.contains(d)).map(|d| shape[d]).collect();
            if got.shape() != kept.as_slice() {
                return Err(Failure::Contract(format!(
                    "{what} along {axes:?}: shape {:?}, expected {kept:?}",
                    got.shape()
                )));
            }
            // The whole array's bound holds for every lane of it.
            let bounds: Vec<f64> = folded.iter().map(|_| bound).collect();
            let want: Vec<T> = folded.iter().copied().collect();
            crate::compare(&format!("{what} along {axes:?}"), &Expected::within(want, bounds), &got.to_vec()?)
                .map_err(Failure::Mismatch)?;
        }
        if T::DTYPE.is_float() && shape.iter().all(|&e| e > 0) {
            variance(&mut ctx.rng, &shape, &xs, &hs)?;
        }
        // Positions of extremes: of the first operand (a stored view, often
        // strided), and for integers of an expression too (floats computed
        // twice may round apart, so only stored values are compared exactly).
        let mut targets = vec![(xs[0].expr(), hs[0].clone(), "x0".to_string())];
        if !T::DTYPE.is_float() {
            let p = whole::<T>(&mut ctx.rng);
            targets.push((build(&p, &xs), host(&p, &hs, &shape)?, format!("{p:?}")));
        }
        for (e, h, what) in targets {
            arg_extremes(&mut ctx.rng, &e, &h, &what)?;
        }
        Ok(())
    }
}

/// The first position of the extreme of `h`'s values (row-major).
fn arg_host<T: Arith + PartialOrd>(v: impl Iterator<Item = T>, smallest: bool) -> usize {
    let mut best: Option<(usize, T)> = None;
    for (i, x) in v.enumerate() {
        best = match best {
            Some((j, b)) if pick(b, x, smallest) == b => Some((j, b)),
            _ => Some((i, x)),
        };
    }
    best.map_or(0, |(i, _)| i)
}

/// argmin and argmax of `e`, whole and along a random axis, against `h`.
fn arg_extremes<B: Backend, T: Arith + Number>(
    rng: &mut CaseRng,
    e: &ArrayExpr<B, T>,
    h: &ArrayD<T>,
    what: &str,
) -> Result<(), Failure> {
    if h.is_empty() {
        return match e.argmax() {
            Err(kiln_core::Error::InvalidArgument { .. }) => Ok(()),
            other => Err(Failure::Contract(format!("argmax of {what} with no elements gave {other:?}"))),
        };
    }
    let axis = rng.random_range(0..h.ndim());
    for smallest in [false, true] {
        let name = if smallest { "argmin" } else { "argmax" };
        let got = if smallest { e.argmin()? } else { e.argmax()? };
        let want = arg_host(h.iter().copied(), smallest);
        if got != want {
            return Err(Failure::Contract(format!("{name} of {what} {:?}: {got}, expected {want}", h.shape())));
        }
        let lanes = h.map_axis(ndarray::Axis(axis), |lane| arg_host(lane.iter().copied(), smallest) as u32);
        let got = if smallest { e.argmin_axis(axis)? } else { e.argmax_axis(axis)? };
        let want: Vec<u32> = lanes.iter().copied().collect();
        crate::compare(
            &format!("{name} of {what} along axis {axis}"),
            &Expected::new(want, crate::Tolerance::Exact),
            &got.to_vec()?,
        )
        .map_err(Failure::Mismatch)?;
    }
    Ok(())
}

/// The variance of a random expression, whole and along its last axis,
/// against the two-pass variance in f64 of the host's values.
fn variance<B: Backend, T: Arith + Number>(
    rng: &mut CaseRng,
    shape: &[usize],
    xs: &[Array<B, T>],
    hs: &[ArrayD<T>],
) -> Result<(), Failure> {
    let p = whole::<T>(rng);
    let h = host(&p, hs, shape)?.mapv(|v| v.to_f64());
    let eps = eps::<T>();
    let mags = each(hs, shape, |x| 4.0 * eps * magnitude(&p, x))?;
    let top = h.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let n = h.len().max(2) as f64;
    // Rounding of the sums (both passes) and of the map, through the squares.
    let bound = 16.0 * eps * n * top * top + 4.0 * top * mags.iter().copied().fold(0.0, f64::max);
    let var = |v: &[f64]| {
        let m = v.iter().sum::<f64>() / v.len() as f64;
        v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / v.len() as f64
    };
    let flat: Vec<f64> = h.iter().copied().collect();
    let e = build(&p, xs);
    let what = format!("variance of {p:?}");
    let got = e.var()?;
    crate::compare(&what, &Expected::within(vec![var(&flat)], vec![bound]), &[got.to_f64()])
        .map_err(Failure::Mismatch)?;
    let last = shape.len() - 1;
    let lanes = h.map_axis(ndarray::Axis(last), |lane| var(&lane.iter().copied().collect::<Vec<f64>>()));
    let got: Vec<f64> = e.var_axes(&[last])?.to_vec()?.iter().map(|v| v.to_f64()).collect();
    let want: Vec<f64> = lanes.iter().copied().collect();
    let bounds = vec![bound; want.len()];
    crate::compare(&format!("{what} along axis {last}"), &Expected::within(want, bounds), &got)
        .map_err(Failure::Mismatch)
}

/// Add the fused-expression cases to `group`.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    c.numbers(group, "array/fused", Fused);
    c.numbers(group, "array/reduce", Reduced);
}
