//! Array operations routed to kiln's patterns (`dot`, `cumsum`, `matmul`,
//! `sort`, `sort_axis`), on plain arrays and on strided views, against
//! plain-Rust host loops over the same values.

use kiln_core::{Backend, DType, Device};
use kiln_kernels::Number;
use kiln_kernels::array::Array;
use kiln_kernels::sort::SortOrder;
use ndarray::{ArrayD, Axis, IxDyn, s};
use rand::Rng;

use super::array_fused::eps;
use crate::{Arith, Cases, Ctx, Expected, Failure, NumberPattern, Sample, Tolerance};

/// A 1-d array of `n` random moderate values, plain or as every other
/// element of a reversed longer one, with its values on the host.
fn vector<B: Backend, T: Arith + Number>(
    device: &Device<B>,
    ctx: &mut Ctx,
    n: usize,
) -> Result<(Array<B, T>, Vec<T>), Failure> {
    let s = device.stream();
    if ctx.rng.random_bool(0.5) {
        let v: Vec<T> = (0..n).map(|_| T::random_moderate(&mut ctx.rng)).collect();
        return Ok((Array::from_vec(&s, &[n], &v)?, v));
    }
    let wide: Vec<T> = (0..2 * n + 1).map(|_| T::random_moderate(&mut ctx.rng)).collect();
    let view = Array::from_vec(&s, &[wide.len()], &wide)?.slice(s![..;-2])?.slice(s![..n])?;
    let host: Vec<T> = wide.iter().rev().step_by(2).take(n).copied().collect();
    Ok((view, host))
}

/// `dot` and `cumsum` of random vectors.
#[derive(Clone, Copy)]
struct DotCumsum;

impl NumberPattern for DotCumsum {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let n = ctx.n.min(1 << 18);
        let (x, hx) = vector::<B, T>(device, ctx, n)?;
        let (y, hy) = vector::<B, T>(device, ctx, n)?;
        let want = hx.iter().zip(&hy).fold(T::index(0), |a, (p, q)| T::plus(a, T::times(*p, *q)));
        let mag: f64 = hx.iter().zip(&hy).map(|(p, q)| (p.to_f64() * q.to_f64()).abs()).sum();
        let bound = 2.0 * eps::<T>() * (n.max(2) as f64) * mag;
        ctx.compare("dot", &Expected::within(vec![want], vec![bound]), &[x.dot(&y)?])?;
        let mut run = T::index(0);
        let mut abs = 0.0;
        let (mut want, mut bounds) = (Vec::with_capacity(n), Vec::with_capacity(n));
        for (i, v) in hx.iter().enumerate() {
            run = T::plus(run, *v);
            abs += v.to_f64().abs();
            want.push(run);
            bounds.push(2.0 * eps::<T>() * (i + 2) as f64 * abs);
        }
        ctx.compare("cumsum", &Expected::within(want, bounds), &x.cumsum()?.to_vec()?)
    }
}

/// `sort` of a random vector (or view) of keys, both orders, exactly.
fn sort<B: Backend, T: Arith + Number + kiln_kernels::sort::SortKey + PartialOrd>(
    device: &Device<B>,
    ctx: &mut Ctx,
) -> Result<(), Failure> {
    let (x, hx) = vector::<B, T>(device, ctx, ctx.n.min(1 << 18))?;
    let mut want = hx.clone();
    want.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    ctx.compare("ascending", &Expected::new(want.clone(), Tolerance::Exact), &x.sort(SortOrder::Ascending)?.to_vec()?)?;
    want.reverse();
    ctx.compare("descending", &Expected::new(want, Tolerance::Exact), &x.sort(SortOrder::Descending)?.to_vec()?)
}

/// `sort_axis` of a random 2-d or 3-d array (row-major or a transposed
/// view) along a random axis, in a random order: a few long lanes (sorted
/// one by one) or many short ones (sorted together), each lane against the
/// host's sort of the same lane.
fn sort_axis<B: Backend, T: Arith + Number + kiln_kernels::sort::SortKey + PartialOrd>(
    device: &Device<B>,
    ctx: &mut Ctx,
) -> Result<(), Failure> {
    let s = device.stream();
    let nd = ctx.rng.random_range(2..=3usize);
    let axis = ctx.rng.random_range(0..nd);
    let total = ctx.n.clamp(1, 1 << 16);
    let lanes = match ctx.rng.random_range(0..4) {
        0 => 0,
        1 => ctx.rng.random_range(1..=16usize),
        _ => ctx.rng.random_range(17..=512usize),
    };
    let width = match total.checked_div(lanes) {
        Some(w) => w.max(1),
        None => ctx.rng.random_range(0..=8usize),
    };
    let first = if lanes == 0 { 0 } else { ctx.rng.random_range(1..=lanes) };
    let mut others = vec![first, if nd == 3 { lanes / first.max(1) } else { 1 }];
    others.truncate(nd - 1);
    let mut shape = others;
    shape.insert(axis, width);
    let n: usize = shape.iter().product();
    let v: Vec<T> = (0..n).map(|_| T::random_moderate(&mut ctx.rng)).collect();
    let transposed = ctx.rng.random_bool(0.5);
    let (x, mut host) = if transposed {
        let rev: Vec<usize> = shape.iter().rev().copied().collect();
        let host = ArrayD::from_shape_vec(IxDyn(&rev), v.clone()).map_err(|e| Failure::Contract(e.to_string()))?;
        (Array::from_vec(&s, &rev, &v)?.t(), host.reversed_axes())
    } else {
        let host = ArrayD::from_shape_vec(IxDyn(&shape), v.clone()).map_err(|e| Failure::Contract(e.to_string()))?;
        (Array::from_vec(&s, &shape, &v)?, host)
    };
    let order = if ctx.rng.random_bool(0.5) { SortOrder::Ascending } else { SortOrder::Descending };
    for mut lane in host.lanes_mut(Axis(axis)) {
        let mut keys: Vec<T> = lane.iter().copied().collect();
        keys.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        if order == SortOrder::Descending {
            keys.reverse();
        }
        lane.iter_mut().zip(keys).for_each(|(d, k)| *d = k);
    }
    let got = x.sort_axis(axis, order)?;
    if got.shape() != shape {
        return Err(Failure::Contract(format!("sorting shape {shape:?} gave shape {:?}", got.shape())));
    }
    let what = format!("shape {shape:?}{} axis {axis} {order}", if transposed { " (transposed view)" } else { "" });
    let want: Vec<T> = host.iter().copied().collect();
    ctx.compare(&what, &Expected::new(want, Tolerance::Exact), &got.to_ndarray()?.iter().copied().collect::<Vec<_>>())
}

/// `matmul` of random f32 matrices, one of them a transposed view.
fn matmul<B: Backend>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let s = device.stream();
    let dim = |ctx: &mut Ctx| ctx.rng.random_range(1..48usize);
    let (m, k, n) = (dim(ctx), dim(ctx), dim(ctx));
    let a: Vec<f32> = (0..m * k).map(|_| f32::random_moderate(&mut ctx.rng)).collect();
    let bt: Vec<f32> = (0..n * k).map(|_| f32::random_moderate(&mut ctx.rng)).collect(); // b transposed, n x k
    let (da, db) = (Array::from_vec(&s, &[m, k], &a)?, Array::from_vec(&s, &[n, k], &bt)?.t());
    let mut want = vec![0.0f32; m * n];
    let mut bounds = vec![0.0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            let terms = (0..k).map(|p| a[i * k + p] as f64 * bt[j * k + p] as f64);
            want[i * n + j] = terms.clone().sum::<f64>() as f32;
            bounds[i * n + j] = 4.0 * f32::EPSILON as f64 * k as f64 * terms.map(f64::abs).sum::<f64>();
        }
    }
    let got = da.matmul(&db)?;
    if got.shape() != [m, n] {
        return Err(Failure::Contract(format!("{m}x{k} times {k}x{n} gave shape {:?}", got.shape())));
    }
    ctx.compare(&format!("{m}x{k} times {k}x{n} (transposed view)"), &Expected::within(want, bounds), &got.to_vec()?)
}

/// Add the routed-operation cases to `group`.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    c.numbers(group, "array/dot-cumsum", DotCumsum);
    c.one(group, "array/sort", DType::U32, sort::<B, u32>);
    c.one(group, "array/sort", DType::I32, sort::<B, i32>);
    c.one(group, "array/sort", DType::F32, sort::<B, f32>);
    c.one(group, "array/sort-axis", DType::U32, sort_axis::<B, u32>);
    c.one(group, "array/sort-axis", DType::I32, sort_axis::<B, i32>);
    c.one(group, "array/sort-axis", DType::F32, sort_axis::<B, f32>);
    c.one(group, "array/matmul", DType::F32, matmul::<B>);
}
