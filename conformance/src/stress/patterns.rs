//! One pattern on one stream: uploaded inputs, a poisoned output, the
//! kernel, and (later, while other work is in flight) the read-back checked
//! against a plain-Rust computation with the suite's tolerances.

use kiln_core::Backend;
use kiln_kernels::Number;
use kiln_kernels::elementwise::{BinaryOp, axpy, binary};
use kiln_kernels::fill::{fill, sequence};
use kiln_kernels::map::{MapOp, map};
use kiln_kernels::reduce::{ReduceOp, reduce};
use kiln_kernels::scan::{ScanKind, scan};
use kiln_kernels::sort::{SortOrder, sort};
use rand::Rng;

use super::step::{Fault, Started, Step, inputs, prefix_sums, total};
use crate::{Arith, Expected, Tolerance, binary as reference, unary};

/// How closely a map must match: sign operations exactly, a square within
/// the one rounding IEEE allows, a square root within 3 ulps (WGSL allows 2.5).
pub(crate) fn map_tolerance(op: MapOp) -> Tolerance {
    match op {
        MapOp::Abs | MapOp::Negate => Tolerance::Exact,
        MapOp::Square => Tolerance::Ulps(1),
        MapOp::Sqrt => Tolerance::Ulps(3),
    }
}

/// `y = op(x)`.
pub(crate) fn map_op<B: Backend, T: Arith + Number>(step: &mut Step<'_, B>) -> Result<Started, Fault> {
    let n = step.plan.len(&mut step.rng);
    let ops: &[MapOp] = if T::HAS_ROOT { &MapOp::ALL } else { &[MapOp::Square, MapOp::Abs, MapOp::Negate] };
    let op = ops[step.rng.random_range(0..ops.len())];
    let Some(f) = unary::<T>(op) else {
        return Ok(Started::Done);
    };
    let (si, s) = step.stream();
    step.describe(format!("map {op} of {n} {} on stream {si}", T::DTYPE));
    let x: Vec<T> = inputs(&mut step.rng, n);
    let expected = Expected::new(x.iter().map(|&v| f(v)).collect(), map_tolerance(op));
    let xb = step.upload(&s, &x)?;
    let mut y = step.poisoned(&s, &expected.values)?;
    map(&s, op, &xb, &mut y)?;
    // The input goes now, freed in stream order behind the kernel.
    drop(xb);
    Ok(step.check_later(s, y, format!("map {op} output"), expected))
}

/// `c = a op b`.
pub(crate) fn binary_op<B: Backend, T: Arith + Number>(step: &mut Step<'_, B>) -> Result<Started, Fault> {
    let n = step.plan.len(&mut step.rng);
    let op = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div][step.rng.random_range(0..4)];
    let (si, s) = step.stream();
    step.describe(format!("elementwise {op} of {n} {} on stream {si}", T::DTYPE));
    let (a, b): (Vec<T>, Vec<T>) = (inputs(&mut step.rng, n), inputs(&mut step.rng, n));
    // IEEE rounds +, -, * and / once; WGSL bounds `/` at 2.5 ulp.
    let tolerance = if op == BinaryOp::Div { Tolerance::Ulps(3) } else { Tolerance::Ulps(1) };
    let expected = Expected::new(a.iter().zip(&b).map(|(&x, &y)| reference(op, x, y)).collect(), tolerance);
    let (ab, bb) = (step.upload(&s, &a)?, step.upload(&s, &b)?);
    let mut c = step.poisoned(&s, &expected.values)?;
    binary(&s, op, &ab, &bb, &mut c)?;
    drop((ab, bb));
    Ok(step.check_later(s, c, format!("elementwise {op} output"), expected))
}

/// `z = alpha * x + y`; a fused multiply-add is accepted as well.
pub(crate) fn axpy_op<B: Backend, T: Arith + Number>(step: &mut Step<'_, B>) -> Result<Started, Fault> {
    let n = step.plan.len(&mut step.rng);
    let alpha = T::random_scalar(&mut step.rng);
    let (si, s) = step.stream();
    step.describe(format!("axpy of {n} {} (alpha {alpha:?}) on stream {si}", T::DTYPE));
    let (x, y): (Vec<T>, Vec<T>) = (inputs(&mut step.rng, n), inputs(&mut step.rng, n));
    let plain = x.iter().zip(&y).map(|(&x, &y)| T::plus(T::times(alpha, x), y)).collect();
    let fused = x.iter().zip(&y).map(|(&x, &y)| T::fused(alpha, x, y)).collect();
    let expected = Expected::new(plain, Tolerance::Ulps(1)).or(fused);
    let (xb, yb) = (step.upload(&s, &x)?, step.upload(&s, &y)?);
    let mut z = step.poisoned(&s, &expected.values)?;
    axpy(&s, alpha, &xb, &yb, &mut z)?;
    drop((xb, yb));
    Ok(step.check_later(s, z, "axpy output".into(), expected))
}

/// The sum of `x`, returned to the host: integers exactly (wrapping),
/// floats within the bound of a tree of partial sums.
pub(crate) fn reduce_sum<B: Backend, T: Arith + Number>(step: &mut Step<'_, B>) -> Result<Started, Fault> {
    let n = step.plan.len(&mut step.rng);
    let (si, s) = step.stream();
    step.describe(format!("reduce sum of {n} {} on stream {si}", T::DTYPE));
    let x: Vec<T> = inputs(&mut step.rng, n);
    let xb = step.upload(&s, &x)?;
    let got = reduce(&s, ReduceOp::Sum, &xb)?;
    step.tally().moved(size_of::<T>());
    step.check.expect("sum", &total(&x), vec![got])?;
    Ok(Started::Done)
}

/// The inclusive scan of `x`.
pub(crate) fn scan_op<B: Backend, T: Arith + Number>(step: &mut Step<'_, B>) -> Result<Started, Fault> {
    let n = step.plan.len(&mut step.rng);
    let (si, s) = step.stream();
    step.describe(format!("inclusive scan of {n} {} on stream {si}", T::DTYPE));
    let x: Vec<T> = inputs(&mut step.rng, n);
    let expected = prefix_sums(&x);
    let xb = step.upload(&s, &x)?;
    let mut y = step.poisoned(&s, &expected.values)?;
    scan(&s, ScanKind::Inclusive, &xb, &mut y)?;
    drop(xb);
    Ok(step.check_later(s, y, "inclusive scan output".into(), expected))
}

/// `u32` keys sorted in place, in a random order.
pub(crate) fn sort_keys<B: Backend>(step: &mut Step<'_, B>) -> Result<Started, Fault> {
    let n = step.plan.len(&mut step.rng);
    let order = if step.rng.random() { SortOrder::Ascending } else { SortOrder::Descending };
    let (si, s) = step.stream();
    step.describe(format!("sort of {n} u32 keys, {order}, on stream {si}"));
    let keys: Vec<u32> = inputs(&mut step.rng, n);
    let mut want = keys.clone();
    want.sort_unstable();
    if order == SortOrder::Descending {
        want.reverse();
    }
    let mut kb = step.upload(&s, &keys)?;
    sort(&s, &mut kb, order)?;
    Ok(step.check_later(s, kb, "sorted keys".into(), Expected::new(want, Tolerance::Exact)))
}

/// `fill` of a random range of a buffer holding other values (those
/// outside the range must survive), or `sequence` over a poisoned buffer.
pub(crate) fn fill_op<B: Backend, T: Arith + Number>(step: &mut Step<'_, B>) -> Result<Started, Fault> {
    let n = step.plan.len(&mut step.rng);
    let (si, s) = step.stream();
    if step.rng.random() {
        let (lo, hi) = (step.rng.random_range(0..=n), step.rng.random_range(0..=n));
        let (lo, hi) = (lo.min(hi), lo.max(hi));
        let value = T::random(&mut step.rng);
        step.describe(format!("fill of {lo}..{hi} of {n} {} with {value:?} on stream {si}", T::DTYPE));
        let mut want: Vec<T> = inputs(&mut step.rng, n);
        let mut buf = step.upload(&s, &want)?;
        fill(&s, &mut buf.slice_mut(lo..hi)?, value)?;
        want[lo..hi].fill(value);
        return Ok(step.check_later(
            s,
            buf,
            "filled range and its surroundings".into(),
            Expected::new(want, Tolerance::Exact),
        ));
    }
    let (start, by) = (T::random_scalar(&mut step.rng), T::random_scalar(&mut step.rng));
    step.describe(format!("sequence of {n} {} from {start:?} by {by:?} on stream {si}", T::DTYPE));
    let plain = (0..n).map(|i| T::plus(start, T::times(T::index(i), by))).collect();
    let fused = (0..n).map(|i| T::fused(T::index(i), by, start)).collect();
    let expected = Expected::new(plain, Tolerance::Ulps(1)).or(fused);
    let mut out = step.poisoned(&s, &expected.values)?;
    sequence(&s, &mut out, start, by)?;
    Ok(step.check_later(s, out, "sequence output".into(), expected))
}
