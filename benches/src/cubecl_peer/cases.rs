//! The cases CubeCL has, each as one timed call: inputs uploaded and checked
//! against the host before timing, rotated among buffer sets past the
//! cache as kiln's own rows are.
//!
//! | kiln pattern | CubeCL |
//! |---|---|
//! | `vector_add`, `axpy`, `map_square`, `map_abs`, `map_negate`, `map_sqrt` | a `#[cube]` kernel each ([`kernels`](super::kernels)) |
//! | `reduce_sum` | cubek's `shared_sum` into a zeroed scalar (the sum of a whole tensor; it adds into its output, with f32 atomics) |
//! | `dot` | a `#[cube]` multiply into a scratch array, then `shared_sum` (cubek has no dot) |
//! | `sgemm` | cubek's matmul, `Strategy::Auto` on row-major f32 |
//! | `reduce_latency` | `shared_sum` into a new zeroed scalar, then `read_one` of it |

use cubecl::prelude::*;
use cubecl::server::Handle;
use cubecl::zspace::{Shape, Strides};
use cubek::matmul::definition::MatmulElems;
use cubek::matmul::launch::launch_ref;
use cubek::matmul::strategy::Strategy;
use cubek::std::InputBinding;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::kernels::{Elementwise, launch};
use crate::case::{Case, Pattern, square_side};
use kiln_kernels::map::MapOp;

/// What each case needs: the client, the buffer sets to rotate among, the seed.
pub(crate) struct Ctx<'a> {
    pub(crate) client: &'a Client,
    /// How many buffer sets a case of these bytes rotates among.
    pub(crate) sets: &'a dyn Fn(u64) -> usize,
    pub(crate) seed: u64,
    /// The device's SM clock, where NVML reads it (warm-ups wait for it to rise).
    pub(crate) clock: Option<&'a crate::clock::SmClock>,
}

/// A case ready to time: `run(i)` enqueues run `i` (its result left on the
/// device); `latency` cases block until their result is on the host.
pub(crate) type Run<'a> = Box<dyn FnMut(usize) -> Result<(), String> + Send + 'a>;

/// Whether CubeCL has `pattern` (on f32).
pub(crate) fn has(pattern: Pattern) -> bool {
    elementwise(pattern, 0.0).is_some()
        || matches!(
            pattern,
            Pattern::ReduceSum
                | Pattern::Dot
                | Pattern::Sgemm(kiln_kernels::matmul::MatmulStrategy::Tiled)
                | Pattern::ReduceLatency
        )
}

fn elementwise(pattern: Pattern, alpha: f32) -> Option<Elementwise> {
    Some(match pattern {
        Pattern::VectorAdd => Elementwise::Add,
        Pattern::Axpy => Elementwise::Axpy(alpha),
        Pattern::Map(MapOp::Square) => Elementwise::Square,
        Pattern::Map(MapOp::Abs) => Elementwise::Abs,
        Pattern::Map(MapOp::Negate) => Elementwise::Negate,
        Pattern::Map(MapOp::Sqrt) => Elementwise::Sqrt,
        _ => return None,
    })
}

/// Upload `case`'s inputs, check one run of it against the host, and return
/// its timed call; an error says why the case is not timed.
pub(crate) fn prepare<'a>(ctx: &Ctx<'a>, case: &Case, calls: usize) -> Result<Run<'a>, String> {
    // The inputs kiln's rows use, from the same seed.
    let mut rng = ChaCha8Rng::seed_from_u64(ctx.seed ^ case.n as u64);
    if let Pattern::Sgemm(_) = case.pattern {
        return prepare_sgemm(ctx, case, &mut rng);
    }
    // Uniform in [0.5, 2), then alpha.
    let host: Vec<f32> = (0..case.n).map(|_| rng.random_range(0.5f32..2.0)).collect();
    let alpha: f32 = rng.random_range(0.5f32..2.0);
    if let Some(op) = elementwise(case.pattern, alpha) {
        return prepare_elementwise(ctx, case, op, &host);
    }
    match case.pattern {
        Pattern::ReduceSum => prepare_sum(ctx, case, &host, false, calls),
        Pattern::Dot => prepare_sum(ctx, case, &host, true, calls),
        Pattern::ReduceLatency => prepare_latency(ctx, &host),
        p => Err(format!("CubeCL has no {} case", p.name())),
    }
}

fn upload(client: &Client, values: &[f32]) -> Handle {
    client.create_from_slice(f32::as_bytes(values))
}

/// An output of `n` f32 poisoned with NaN, so that one left unwritten fails the check.
fn poisoned(client: &Client, n: usize) -> Handle {
    upload(client, &vec![f32::NAN; n])
}

fn read(client: &Client, handle: &Handle) -> Result<Vec<f32>, String> {
    let bytes = client.read_one(handle.clone()).map_err(|e| format!("reading the result: {e:?}"))?;
    Ok(f32::from_bytes(&bytes).to_vec())
}

/// Whether `got` is within `tolerance` of `want` (never for NaN).
fn within(got: f64, want: f64, tolerance: f64) -> bool {
    (got - want).abs() <= tolerance
}

/// Indices checked: all of a small array, else 4 Ki spread evenly and the last.
fn sample(n: usize) -> impl Iterator<Item = usize> {
    let step = (n / 4096).max(1);
    (0..n).step_by(step).chain(std::iter::once(n - 1))
}

fn prepare_elementwise<'a>(ctx: &Ctx<'a>, case: &Case, op: Elementwise, host: &[f32]) -> Result<Run<'a>, String> {
    let (client, n) = (ctx.client, case.n);
    let sets = (ctx.sets)(case.pattern.bytes(n, case.dtype));
    let buffers: Vec<(Vec<Handle>, Handle)> =
        (0..sets).map(|_| ((0..op.inputs()).map(|_| upload(client, host)).collect(), poisoned(client, n))).collect();
    launch(client, op, &buffers[0].0, &buffers[0].1, n);
    let got = read(client, &buffers[0].1)?;
    // The second input is a copy of the first, as in kiln's rows.
    for i in sample(n) {
        let want = op.reference(host[i], host[i]);
        if !within(f64::from(got[i]), f64::from(want), 4.0 * f64::from(f32::EPSILON) * f64::from(want).abs()) {
            return Err(format!("CubeCL's {} is wrong at element {i}: {} for {want}", case.pattern.name(), got[i]));
        }
    }
    Ok(Box::new(move |i| {
        let (inputs, out) = &buffers[i % sets];
        launch(client, op, inputs, out, n);
        Ok(())
    }))
}

/// The shape and strides of a contiguous rank-1 tensor of `n`.
fn vector(handle: &Handle, n: usize) -> TensorBinding {
    // SAFETY: every handle passed here holds `n` f32.
    unsafe { TensorBinding::from_raw_parts(handle.clone(), Strides::from([1]), Shape::from([n])) }
}

/// cubek's `shared_sum` of `n` f32 in `x` added into the scalar `out`.
///
/// Cubes: one per 16 Ki elements (each of its 256 units sums 64), at most
/// 65535, so large arrays spread over the whole device.
fn shared_sum(client: &Client, x: &Handle, n: usize, out: &Handle) -> Result<(), String> {
    let cubes = n.div_ceil(1 << 14).clamp(1, 65535) as u32;
    cubek::reduce::shared_sum(client, vector(x, n), vector(out, 1), cubes, f32::elem_type_native())
        .map_err(|e| format!("cubek shared_sum: {e}"))
}

fn prepare_sum<'a>(ctx: &Ctx<'a>, case: &Case, host: &[f32], dot: bool, calls: usize) -> Result<Run<'a>, String> {
    let (client, n) = (ctx.client, case.n);
    let sets = (ctx.sets)(case.pattern.bytes(n, case.dtype));
    // x, and for dot y (a copy of x) and the products' scratch array.
    let buffers: Vec<(Handle, Option<(Handle, Handle)>)> =
        (0..sets).map(|_| (upload(client, host), dot.then(|| (upload(client, host), poisoned(client, n))))).collect();
    // shared_sum adds into its output, so each run has a zeroed one of its
    // own, made before timing (as kiln's rows leave their sums in buffers
    // made beforehand); the last is the check's.
    let outputs: Vec<Handle> = (0..=calls).map(|_| upload(client, &[0.0])).collect();
    let sum_into = move |i: usize, out: &Handle| -> Result<(), String> {
        let (x, dot) = &buffers[i % sets];
        let summed = match dot {
            Some((y, products)) => {
                launch(client, Elementwise::Multiply, &[x.clone(), y.clone()], products, n);
                products
            }
            None => x,
        };
        shared_sum(client, summed, n, out)
    };
    let check = &outputs[calls];
    sum_into(0, check)?;
    let got = f64::from(read(client, check)?[0]);
    let want: f64 = host.iter().map(|&v| if dot { f64::from(v) * f64::from(v) } else { f64::from(v) }).sum();
    if !within(got, want, 1e-3 * want) {
        return Err(format!("CubeCL's {} is wrong: {got} for {want}", case.pattern.name()));
    }
    Ok(Box::new(move |i| sum_into(i, &outputs[i % calls.max(1)])))
}

fn prepare_sgemm<'a>(ctx: &Ctx<'a>, case: &Case, rng: &mut ChaCha8Rng) -> Result<Run<'a>, String> {
    let client = ctx.client;
    let side = square_side(case.n);
    // a then b, uniform in [-1, 1), as kiln's sgemm rows draw them.
    let values: Vec<f32> = (0..2 * side * side).map(|_| rng.random_range(-1.0f32..1.0)).collect();
    let (a, b) = values.split_at(side * side);
    let sets = (ctx.sets)(case.pattern.bytes(case.n, case.dtype));
    let buffers: Vec<[Handle; 3]> =
        (0..sets).map(|_| [upload(client, a), upload(client, b), poisoned(client, side * side)]).collect();
    let matmul = move |[a, b, c]: &[Handle; 3]| -> Result<(), String> {
        // SAFETY: a, b and c hold side x side f32 each, row-major.
        let matrix = |h: &Handle| unsafe {
            TensorBinding::from_raw_parts(h.clone(), Strides::from([side, 1]), Shape::from([side, side]))
        };
        let dtype = f32::elem_type_native();
        let mut elems = MatmulElems::from_single_dtype(dtype);
        launch_ref(
            &Strategy::Auto,
            client,
            InputBinding::Normal(matrix(a), dtype),
            InputBinding::Normal(matrix(b), dtype),
            matrix(c),
            &mut elems,
        )
        .map_err(|e| format!("cubek matmul: {e}"))
    };
    matmul(&buffers[0])?;
    let got = read(client, &buffers[0][2])?;
    // 64 elements spread over the product, each against an f64 dot product,
    // within a bound on f32 accumulation error over `side` terms.
    for e in (0..side * side).step_by((side * side / 64).max(1)) {
        let (row, col) = (e / side, e % side);
        let terms = (0..side).map(|k| f64::from(a[row * side + k]) * f64::from(b[k * side + col]));
        let (want, magnitude) = terms.fold((0.0, 0.0), |(s, m), t| (s + t, m + t.abs()));
        if !within(f64::from(got[e]), want, 1e-5 + 4.0 * side as f64 * f64::from(f32::EPSILON) * magnitude) {
            return Err(format!("CubeCL's sgemm is wrong at ({row}, {col}): {} for {want}", got[e]));
        }
    }
    Ok(Box::new(move |i| matmul(&buffers[i % sets])))
}

fn prepare_latency<'a>(ctx: &Ctx<'a>, host: &[f32]) -> Result<Run<'a>, String> {
    let client = ctx.client;
    let n = host.len();
    let x = upload(client, host);
    let want: f64 = host.iter().map(|&v| f64::from(v)).sum();
    // What a caller writes for a scalar on the host: a zeroed output, the sum, the read.
    let sum = move || -> Result<f32, String> {
        let out = upload(client, &[0.0]);
        shared_sum(client, &x, n, &out)?;
        Ok(read(client, &out)?[0])
    };
    let got = f64::from(sum()?);
    if !within(got, want, 1e-4 * want) {
        return Err(format!("CubeCL's sum is wrong: {got} for {want}"));
    }
    Ok(Box::new(move |_| sum().map(|_| ())))
}
