//! reduce and reduce_into (sum, product, min, max), dot, argmin/argmax and
//! reduce_axis, against a sequential reference: integers exact (wrapping),
//! float sums within `eps * (4 log2(n + 1) + 2) * sum(|x|)` of a compensated
//! f64 sum, products of mostly +-1 factors within a few ulps, min, max and
//! arg-reductions exact; NaN and infinities by the documented rules; empty
//! inputs and mismatched operands refused without writing anything.
//!
//! Inputs sit at a random offset (0 to 3 elements) into their buffer, so
//! every run is also a run on a view at some 16-byte misalignment.

use kiln_core::{Backend, Buffer, DType, Device, Error};
use kiln_kernels::reduce::{
    arg_reduce_into, argmax, argmin, dot, dot_into, reduce, reduce_axis, reduce_into, ArgOp, ReduceOp,
};
use kiln_kernels::Number;
use rand::Rng;

use super::unchanged;
use crate::{Arith, Cases, Ctx, Expected, Failure, NumberPattern, Sample};

/// A random number of leading elements (0 to 3) before a case's data.
pub(super) fn offset(ctx: &mut Ctx) -> usize {
    ctx.rng.random_range(0..4)
}

/// A buffer holding `off` random elements, then `data`: the data is `buf.slice(off..)`.
pub(super) fn upload_at<B: Backend, T: Sample>(
    device: &Device<B>,
    ctx: &mut Ctx,
    data: &[T],
    off: usize,
) -> kiln_core::Result<(Buffer<B, T>, Vec<T>)> {
    let mut all: Vec<T> = crate::random_vec(&mut ctx.rng, off);
    all.extend_from_slice(data);
    Ok((device.upload(&all)?, all))
}

/// `v` as a `T`: rounded to nearest for floats, truncated for integers.
pub(super) fn from_f64<T: Sample>(v: f64) -> T {
    let bytes: [u8; 8] = match T::DTYPE {
        DType::F32 => widen(&(v as f32).to_le_bytes()),
        DType::I32 => widen(&(v as i32).to_le_bytes()),
        DType::U32 => widen(&(v as u32).to_le_bytes()),
        DType::U8 => [v as u8, 0, 0, 0, 0, 0, 0, 0],
        _ => v.to_le_bytes(),
    };
    bytemuck::pod_read_unaligned(&bytes[..size_of::<T>()])
}

fn widen(b: &[u8; 4]) -> [u8; 8] {
    [b[0], b[1], b[2], b[3], 0, 0, 0, 0]
}

/// Neumaier's compensated f64 sum: the reference for float sums, within
/// about one f64 rounding of the exact sum at the sizes the suite uses.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Compensated {
    sum: f64,
    error: f64,
}

impl Compensated {
    pub(super) fn add(&mut self, v: f64) {
        let t = self.sum + v;
        self.error += if self.sum.abs() >= v.abs() { (self.sum - t) + v } else { (v - t) + self.sum };
        self.sum = t;
    }

    pub(super) fn value(&self) -> f64 {
        if self.sum.is_finite() {
            self.sum + self.error
        } else {
            self.sum
        }
    }
}

/// How far a float sum of `n` terms whose magnitudes add to `magnitude` may
/// be from the exact one: a tree of partial sums loses at most one rounding
/// of the magnitude per level, and the result one more rounding.
pub(super) fn sum_bound<T: Sample>(n: usize, magnitude: f64, value: f64) -> f64 {
    T::epsilon() * ((4.0 * ((n + 1) as f64).log2() + 2.0) * magnitude + value.abs())
}

/// Whether `v` is NaN (never for integers).
fn nan<T: Sample>(v: T) -> bool {
    v.is_nan_value()
}

/// The reference fold of `xs` by `op`, and its error bound.
fn fold<T: Arith + PartialOrd>(op: ReduceOp, xs: &[T]) -> (T, f64) {
    match op {
        ReduceOp::Sum if T::IS_FLOAT => {
            let mut s = Compensated::default();
            xs.iter().for_each(|v| s.add(v.to_f64()));
            let magnitude = xs.iter().map(|v| v.to_f64().abs()).sum::<f64>();
            (from_f64(s.value()), sum_bound::<T>(xs.len(), magnitude, s.value()))
        }
        ReduceOp::Sum => (xs.iter().fold(T::index(0), |a, &b| T::plus(a, b)), 0.0),
        ReduceOp::Product if T::IS_FLOAT => {
            // Factors are +-1 but for at most 32 (see `values`): a few roundings.
            let p = xs.iter().fold(1.0f64, |a, b| a * b.to_f64());
            (from_f64(p), 72.0 * T::epsilon() * p.abs())
        }
        ReduceOp::Product => (xs.iter().fold(T::index(1), |a, &b| T::times(a, b)), 0.0),
        ReduceOp::Min | ReduceOp::Max => {
            let mut best = xs[0];
            for &v in &xs[1..] {
                let better = if op == ReduceOp::Min { v < best } else { v > best };
                if !nan(best) && (nan(v) || better) {
                    best = v;
                }
            }
            (best, 0.0)
        }
    }
}

/// Inputs for `op`: adversarial integers; for floats, moderate values for
/// sums (no overflow), factors of +-1 but for a few for products, and the
/// adversarial mix without NaN (infinities, -0.0, subnormals, extremes)
/// for min and max.
fn values<T: Arith>(op: ReduceOp, ctx: &mut Ctx, len: usize) -> Vec<T> {
    match op {
        ReduceOp::Sum if T::IS_FLOAT => (0..len).map(|_| T::random_moderate(&mut ctx.rng)).collect(),
        ReduceOp::Product => factors(ctx, len),
        ReduceOp::Min | ReduceOp::Max => no_nan(crate::random_vec(&mut ctx.rng, len), ctx),
        ReduceOp::Sum => crate::random_vec(&mut ctx.rng, len),
    }
}

/// The adversarial mix with each NaN replaced by a moderate value.
fn no_nan<T: Sample>(mut xs: Vec<T>, ctx: &mut Ctx) -> Vec<T> {
    for v in xs.iter_mut().filter(|v| nan(**v)) {
        *v = T::random_moderate(&mut ctx.rng);
    }
    xs
}

/// Product factors whose product neither overflows nor vanishes: for
/// floats +-1 except for up to 16 mantissas in [1, 2) and 16 powers of two
/// in [2^-4, 2^4]; for integers odd values (so the wrapped product is not
/// simply 0) and a few even ones.
fn factors<T: Arith>(ctx: &mut Ctx, len: usize) -> Vec<T> {
    let one = T::index(1);
    if !T::IS_FLOAT {
        return (0..len)
            .map(|_| {
                let v = T::random(&mut ctx.rng);
                if ctx.rng.random_range(0..len.max(8)) < 4 {
                    v
                } else {
                    T::plus(T::times(v, T::index(2)), one)
                }
            })
            .collect();
    }
    let mut xs: Vec<T> = (0..len).map(|_| if ctx.rng.random() { one } else { T::negated(one) }).collect();
    for k in 0..len.min(32) {
        let at = ctx.rng.random_range(0..len);
        let v = if k % 2 == 0 { ctx.rng.random_range(1.0..2.0) } else { 2f64.powi(ctx.rng.random_range(-4..=4)) };
        xs[at] = from_f64(if ctx.rng.random() { v } else { -v });
    }
    xs
}

/// The flushed alternatives of a min or max: what a backend that reads
/// subnormals as zero may return (the flushed fold, or any element equal to
/// it once flushed).
fn flushed_extremes<T: Arith + PartialOrd>(op: ReduceOp, xs: &[T]) -> Vec<T> {
    let flushed: Vec<T> = xs.iter().map(|v| v.flush_subnormal()).collect();
    let (f, _) = fold(op, &flushed);
    let mut alternatives = vec![f];
    for &v in xs {
        if v.flush_subnormal().to_f64() == f.to_f64() && !alternatives.iter().any(|a| a.same_as(v)) {
            alternatives.push(v);
            if alternatives.len() > 16 {
                break;
            }
        }
    }
    alternatives
}

/// `reduce` and `reduce_into` of one operation.
#[derive(Debug, Clone, Copy)]
pub struct Reduce {
    /// The operation.
    pub op: ReduceOp,
}

impl NumberPattern for Reduce {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let op = self.op;
        let x: Vec<T> = values(op, ctx, ctx.n);
        let off = offset(ctx);
        let (buf, all) = upload_at(device, ctx, &x, off)?;
        let view = buf.slice(off..)?;
        let s = device.stream();
        let mut out = device.upload(&crate::random_vec::<T>(&mut ctx.rng, 3))?;
        let before = out.to_vec()?;
        if x.is_empty() && !op.has_identity() {
            expect_invalid(&format!("reduce {op} of nothing"), reduce(&s, op, &view))?;
            expect_invalid(
                &format!("reduce_into {op} of nothing"),
                reduce_into(&s, op, &view, &mut out.slice_mut(1..2)?),
            )?;
            return unchanged("output after a refused reduce_into", &out, &before);
        }
        let (want, bound) = if x.is_empty() { (op.identity::<T>(), 0.0) } else { fold(op, &x) };
        let mut expected = Expected::within(vec![want], vec![bound]);
        if ctx.flush_subnormals && !x.is_empty() && matches!(op, ReduceOp::Min | ReduceOp::Max) {
            for alt in flushed_extremes(op, &x) {
                expected = expected.or(vec![alt]);
            }
        }
        let got = reduce(&s, op, &view)?;
        ctx.compare(&format!("reduce {op} of {} elements", x.len()), &expected, &[got])?;
        reduce_into(&s, op, &view, &mut out.slice_mut(1..2)?)?;
        let after = out.to_vec()?;
        ctx.compare(&format!("reduce_into {op}: the element written"), &expected, &after[1..2])?;
        unchanged("input", &buf, &all)?;
        let neighbours = Expected::within(vec![before[0], before[2]], vec![0.0; 2]);
        ctx.compare("reduce_into: the elements around the output", &neighbours, &[after[0], after[2]])
    }
}

fn expect_invalid<T: std::fmt::Debug>(call: &str, result: kiln_core::Result<T>) -> Result<(), Failure> {
    match result {
        Err(Error::InvalidArgument { .. }) => Ok(()),
        other => Err(Failure::Contract(format!("{call} returned {other:?}, not InvalidArgument"))),
    }
}

fn expect_mismatch<T: std::fmt::Debug>(call: &str, result: kiln_core::Result<T>) -> Result<(), Failure> {
    match result {
        Err(Error::LengthMismatch { .. }) => Ok(()),
        other => Err(Failure::Contract(format!("{call} returned {other:?}, not LengthMismatch"))),
    }
}

/// `dot` and `dot_into`.
#[derive(Debug, Clone, Copy)]
pub struct Dot;

impl NumberPattern for Dot {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let n = ctx.n;
        let (x, y): (Vec<T>, Vec<T>) = (values(ReduceOp::Sum, ctx, n), values(ReduceOp::Sum, ctx, n));
        let (want, bound) = if <T as Sample>::IS_FLOAT {
            let mut s = Compensated::default();
            x.iter().zip(&y).for_each(|(a, b)| s.add(a.to_f64() * b.to_f64()));
            let magnitude: f64 = x.iter().zip(&y).map(|(a, b)| (a.to_f64() * b.to_f64()).abs()).sum();
            (from_f64::<T>(s.value()), sum_bound::<T>(n, magnitude, s.value()))
        } else {
            (x.iter().zip(&y).fold(T::index(0), |acc, (&a, &b)| T::plus(acc, T::times(a, b))), 0.0)
        };
        let expected = Expected::within(vec![want], vec![bound]);
        // x and y at different offsets: on CUDA a relative misalignment takes the scalar path.
        let (ox, oy) = (offset(ctx), offset(ctx));
        let (xb, xall) = upload_at(device, ctx, &x, ox)?;
        let (yb, yall) = upload_at(device, ctx, &y, oy)?;
        let (xv, yv) = (xb.slice(ox..)?, yb.slice(oy..)?);
        let s = device.stream();
        let got = dot(&s, &xv, &yv)?;
        ctx.compare(&format!("dot of {n} elements (x at +{ox}, y at +{oy})"), &expected, &[got])?;
        let mut out = device.upload(&[T::poison(want)])?;
        dot_into(&s, &xv, &yv, &mut out)?;
        ctx.compare("dot_into", &expected, &out.to_vec()?)?;
        unchanged("input x", &xb, &xall)?;
        unchanged("input y", &yb, &yall)
    }
}

/// The reference arg-reduction: the first NaN, else the first extreme.
fn arg_ref<T: Sample + PartialOrd>(op: ArgOp, xs: &[T]) -> usize {
    if let Some(i) = xs.iter().position(|v| nan(*v)) {
        return i;
    }
    let mut best = 0;
    for (i, &v) in xs.iter().enumerate().skip(1) {
        let better = if op == ArgOp::ArgMin { v < xs[best] } else { v > xs[best] };
        if better {
            best = i;
        }
    }
    best
}

/// `argmin`/`argmax` and `arg_reduce_into`: on the adversarial mix without
/// NaN (ties among repeated extremes), on a constant array, then with NaN.
#[derive(Debug, Clone, Copy)]
pub struct Arg {
    /// The operation.
    pub op: ArgOp,
}

impl NumberPattern for Arg {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let (op, n) = (self.op, ctx.n);
        let s = device.stream();
        if n == 0 {
            let empty = device.alloc::<T>(0)?;
            let call = if op == ArgOp::ArgMin { argmin(&s, &empty) } else { argmax(&s, &empty) };
            return expect_invalid(&format!("{op} of nothing"), call);
        }
        let mut x: Vec<T> = if ctx.rng.random_range(0..4) == 0 {
            vec![T::random(&mut ctx.rng); n]
        } else {
            crate::random_vec(&mut ctx.rng, n)
        };
        x = no_nan(x, ctx);
        self.check(device, ctx, &x, "values without NaN")?;
        if <T as Sample>::IS_FLOAT {
            let (a, b) = (ctx.rng.random_range(0..n), ctx.rng.random_range(0..n));
            x[a] = from_f64(f64::NAN);
            x[b] = from_f64(-f64::NAN);
            self.check(device, ctx, &x, &format!("NaN at {a} and {b}"))?;
        }
        Ok(())
    }
}

impl Arg {
    fn check<B: Backend, T: Arith + Number>(
        self,
        device: &Device<B>,
        ctx: &mut Ctx,
        x: &[T],
        what: &str,
    ) -> Result<(), Failure> {
        let op = self.op;
        let s = device.stream();
        let mut allowed = vec![arg_ref(op, x)];
        if ctx.flush_subnormals {
            let flushed: Vec<T> = x.iter().map(|v| v.flush_subnormal()).collect();
            allowed.push(arg_ref(op, &flushed));
        }
        let off = offset(ctx);
        let (buf, all) = upload_at(device, ctx, x, off)?;
        let view = buf.slice(off..)?;
        let (at, v) = if op == ArgOp::ArgMin { argmin(&s, &view)? } else { argmax(&s, &view)? };
        let mut index = device.upload(&[u64::MAX - 1])?;
        let mut value = device.upload(&[T::poison(x[0])])?;
        arg_reduce_into(&s, op, &view, &mut index, &mut value)?;
        let (at2, v2) = (index.to_vec()?[0], value.to_vec()?[0]);
        for (form, at, v) in [("host", at as u64, v), ("device", at2, v2)] {
            let good = allowed.iter().any(|&a| a as u64 == at)
                && x.get(at as usize)
                    .is_some_and(|&e| crate::close(crate::Tolerance::Exact, e, v) || e.flush_subnormal().same_as(v));
            if !good {
                return Err(Failure::Contract(format!(
                    "{op} ({form}) of {} elements, {what}: got index {at} value {v:?}; expected index {} (value {:?})",
                    x.len(),
                    allowed[0],
                    x[allowed[0]]
                )));
            }
        }
        unchanged("input", &buf, &all)
    }
}

/// A shape for `n` elements: one row, one column, or a random number of
/// rows or columns up to 64 (the rest of `n` dropped); for `n = 0`, an
/// empty axis next to a short one.
fn shape(ctx: &mut Ctx) -> (usize, usize) {
    let n = ctx.n;
    if n == 0 {
        let k = ctx.rng.random_range(0..4);
        return if ctx.rng.random() { (0, k) } else { (k, 0) };
    }
    match ctx.rng.random_range(0..4) {
        0 => (1, n),
        1 => (n, 1),
        2 => {
            let rows = ctx.rng.random_range(1..=n.min(64));
            (rows, n / rows)
        }
        _ => {
            let cols = ctx.rng.random_range(1..=n.min(64));
            (n / cols, cols)
        }
    }
}

/// `reduce_axis` of one operation along one axis.
#[derive(Debug, Clone, Copy)]
pub struct Axis {
    /// The operation.
    pub op: ReduceOp,
    /// 0 (one result per column) or 1 (one per row).
    pub axis: usize,
}

impl NumberPattern for Axis {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let (op, axis) = (self.op, self.axis);
        let (rows, cols) = shape(ctx);
        let x: Vec<T> = values(op, ctx, rows * cols);
        let (results, folded) = if axis == 0 { (cols, rows) } else { (rows, cols) };
        let line = |r: usize| -> Vec<T> {
            if axis == 0 {
                (0..rows).map(|i| x[i * cols + r]).collect()
            } else {
                x[r * cols..(r + 1) * cols].to_vec()
            }
        };
        let what = format!("reduce_axis {op} along axis {axis} of {rows} x {cols}");
        let off = offset(ctx);
        let (buf, all) = upload_at(device, ctx, &x, off)?;
        let view = buf.slice(off..)?;
        let s = device.stream();
        if results > 0 && folded == 0 && !op.has_identity() {
            let initial: Vec<T> = crate::random_vec(&mut ctx.rng, results);
            let mut out = device.upload(&initial)?;
            expect_invalid(&what, reduce_axis(&s, op, &view, rows, cols, axis, &mut out))?;
            return unchanged("output after a refused reduce_axis", &out, &initial);
        }
        let (mut want, mut bounds) = (Vec::with_capacity(results), Vec::with_capacity(results));
        for r in 0..results {
            let (v, b) = if folded == 0 { (op.identity::<T>(), 0.0) } else { fold(op, &line(r)) };
            want.push(v);
            bounds.push(b);
        }
        let mut expected = Expected::within(want.clone(), bounds);
        if ctx.flush_subnormals && folded > 0 && matches!(op, ReduceOp::Min | ReduceOp::Max) {
            // Every value each line may give once subnormals read as zero
            // (with ties between a subnormal and zero, either may win).
            let alternatives: Vec<Vec<T>> = (0..results).map(|r| flushed_extremes(op, &line(r))).collect();
            let most = alternatives.iter().map(Vec::len).max().unwrap_or(0);
            for k in 0..most {
                expected = expected.or(alternatives.iter().map(|a| a[k.min(a.len() - 1)]).collect());
            }
        }
        let mut out = crate::poisoned(device, &want)?;
        reduce_axis(&s, op, &view, rows, cols, axis, &mut out)?;
        ctx.compare(&what, &expected, &out.to_vec()?)?;
        unchanged("input", &buf, &all)
    }
}

/// NaN and infinities in float reductions: a NaN makes sum, product, dot,
/// min and max NaN and wins argmin/argmax; +inf and -inf make a sum NaN.
fn nan_inf<B: Backend, T: Arith + Number>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let n = ctx.n;
    if n == 0 {
        return Ok(());
    }
    let s = device.stream();
    let specials: [(&str, &[f64]); 4] = [
        ("a NaN", &[f64::NAN]),
        ("+inf", &[f64::INFINITY]),
        ("-inf", &[f64::NEG_INFINITY]),
        ("+inf and -inf", &[f64::INFINITY, f64::NEG_INFINITY]),
    ];
    for (what, put) in specials {
        for op in ReduceOp::ALL {
            let mut x: Vec<T> = values(op, ctx, n);
            for &v in put {
                let at = ctx.rng.random_range(0..n);
                x[at] = from_f64(v);
            }
            let (want, bound) = fold(op, &x);
            let got = reduce(&s, op, &device.upload(&x)?)?;
            ctx.compare(
                &format!("reduce {op} of {n} elements with {what}"),
                &Expected::within(vec![want], vec![bound]),
                &[got],
            )?;
        }
        let mut x: Vec<T> = values(ReduceOp::Sum, ctx, n);
        let y: Vec<T> = values(ReduceOp::Sum, ctx, n);
        for &v in put {
            let at = ctx.rng.random_range(0..n);
            x[at] = from_f64(v);
        }
        let mut sum = Compensated::default();
        x.iter().zip(&y).for_each(|(a, b)| sum.add(a.to_f64() * b.to_f64()));
        let magnitude: f64 = x.iter().zip(&y).map(|(a, b)| (a.to_f64() * b.to_f64()).abs()).sum();
        let expected =
            Expected::within(vec![from_f64::<T>(sum.value())], vec![sum_bound::<T>(n, magnitude, sum.value())]);
        let got = dot(&s, &device.upload(&x)?, &device.upload(&y)?)?;
        ctx.compare(&format!("dot of {n} elements with {what} in x"), &expected, &[got])?;
    }
    Ok(())
}

/// Every refused call: wrong output lengths, mismatched operands, empty
/// folds without identity, an axis past 1; nothing may be written.
fn refusals<B: Backend>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let n = ctx.n;
    let s = device.stream();
    let x = device.upload(&crate::random_vec::<f32>(&mut ctx.rng, n))?;
    let long = device.upload(&crate::random_vec::<f32>(&mut ctx.rng, n + 1))?;
    let initial: Vec<f32> = crate::random_vec(&mut ctx.rng, 2);
    let mut out = device.upload(&initial)?;
    expect_mismatch("reduce_into with a 2-element output", reduce_into(&s, ReduceOp::Sum, &x, &mut out))?;
    expect_mismatch("dot_into with a 2-element output", dot_into(&s, &x, &x, &mut out))?;
    expect_mismatch("dot of n and n + 1 elements", dot(&s, &x, &long))?;
    let mut index = device.upload(&[7u64, 9])?;
    let mut one = device.upload(&initial[..1])?;
    expect_mismatch(
        "arg_reduce_into with a 2-element index",
        arg_reduce_into(&s, ArgOp::ArgMin, &x, &mut index, &mut one),
    )?;
    let empty = device.alloc::<f32>(0)?;
    expect_invalid("reduce_into max of nothing", reduce_into(&s, ReduceOp::Max, &empty, &mut one))?;
    let mut cols = device.upload(&initial)?;
    expect_invalid("reduce_axis along axis 2", reduce_axis(&s, ReduceOp::Sum, &long, 1, n + 1, 2, &mut one))?;
    expect_mismatch(
        "reduce_axis of (n + 1) x 1 over n elements",
        reduce_axis(&s, ReduceOp::Sum, &x, n + 1, 1, 0, &mut one),
    )?;
    expect_mismatch(
        "reduce_axis with 2 outputs for 1 x (n + 1)",
        reduce_axis(&s, ReduceOp::Min, &long, 1, n + 1, 1, &mut cols),
    )?;
    let halves = device.upload(&[kiln_core::f16::ONE; 3])?;
    match reduce(&s, ReduceOp::Sum, &halves) {
        Err(Error::Unsupported { .. }) => {}
        other => return Err(Failure::Contract(format!("reduce sum of f16 returned {other:?}, not Unsupported"))),
    }
    unchanged("output after refused calls", &out, &initial)?;
    if index.to_vec()? != [7, 9] {
        return Err(Failure::Contract("a refused arg_reduce_into wrote its index".into()));
    }
    unchanged("value after refused calls", &one, &initial[..1])?;
    unchanged("columns after refused calls", &cols, &initial)
}

/// Add the reduce group: every operation on every number type, dot,
/// argmin/argmax, both axes, NaN and infinities, refusals.
pub fn register<B: Backend>(c: &mut Cases<B>) {
    for op in ReduceOp::ALL {
        c.numbers("reduce", format!("reduce/{op}"), Reduce { op });
    }
    c.numbers("reduce", "reduce/dot", Dot);
    for op in ArgOp::ALL {
        c.numbers("reduce", format!("reduce/{op}"), Arg { op });
    }
    for axis in [0, 1] {
        for op in ReduceOp::ALL {
            c.numbers("reduce", format!("reduce_axis{axis}/{op}"), Axis { op, axis });
        }
    }
    c.one("reduce", "reduce/nan_inf", DType::F32, nan_inf::<B, f32>);
    c.one("reduce", "reduce/nan_inf", DType::F64, nan_inf::<B, f64>);
    c.one("reduce", "reduce/refusals", DType::F32, refusals::<B>);
}
