//! copy_if and copy_if_indices (host and device counts) with each predicate
//! on the adversarial mix (NaN, infinities, both zeros, repeated values):
//! the kept elements or indices, in order, then the output's previous
//! contents untouched past the count; the count exact.

use kiln_core::{Backend, Buffer, DType, Device, Error};
use kiln_kernels::Number;
use kiln_kernels::compact::{Predicate, copy_if, copy_if_indices, copy_if_indices_into, copy_if_into};
use rand::Rng;

use super::inputs::{offset, upload_at};
use super::unchanged;
use crate::{Arith, Cases, Ctx, Expected, Failure, NumberPattern, Sample, Tolerance};

/// A predicate without its value, which each run draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `x > value`.
    GreaterThan,
    /// `x < value`.
    LessThan,
    /// `x == value`.
    EqualTo,
    /// `x != value`.
    NotEqualTo,
    /// `x != 0`.
    NonZero,
}

impl Kind {
    const ALL: [Kind; 5] = [Kind::GreaterThan, Kind::LessThan, Kind::EqualTo, Kind::NotEqualTo, Kind::NonZero];

    /// The predicate with a value drawn for `x`: one of its elements half
    /// the time (so equality keeps something), else a moderate value or 0.
    fn draw<T: Sample>(self, ctx: &mut Ctx, x: &[T]) -> Predicate<T> {
        let value = match ctx.rng.random_range(0..4) {
            0 | 1 if !x.is_empty() => x[ctx.rng.random_range(0..x.len())],
            2 => T::default(),
            _ => T::random_moderate(&mut ctx.rng),
        };
        match self {
            Kind::GreaterThan => Predicate::GreaterThan(value),
            Kind::LessThan => Predicate::LessThan(value),
            Kind::EqualTo => Predicate::EqualTo(value),
            Kind::NotEqualTo => Predicate::NotEqualTo(value),
            Kind::NonZero => Predicate::NonZero,
        }
    }
}

/// The reference test of `v`, written from the specification (IEEE comparisons).
fn keeps<T: Sample + PartialOrd>(pred: Predicate<T>, v: T) -> bool {
    match pred {
        Predicate::GreaterThan(p) => v > p,
        Predicate::LessThan(p) => v < p,
        Predicate::EqualTo(p) => v == p,
        Predicate::NotEqualTo(p) => v != p,
        Predicate::NonZero => v != T::default(),
    }
}

/// `pred` with its value flushed, and applied to flushed elements: what a
/// backend that reads subnormals as zero keeps.
fn flushed<T: Sample + PartialOrd>(pred: Predicate<T>) -> impl Fn(T) -> bool {
    let p = match pred {
        Predicate::GreaterThan(v) => Predicate::GreaterThan(v.flush_subnormal()),
        Predicate::LessThan(v) => Predicate::LessThan(v.flush_subnormal()),
        Predicate::EqualTo(v) => Predicate::EqualTo(v.flush_subnormal()),
        Predicate::NotEqualTo(v) => Predicate::NotEqualTo(v.flush_subnormal()),
        Predicate::NonZero => Predicate::NonZero,
    };
    move |v: T| keeps(p, v.flush_subnormal())
}

/// One predicate, kept values or kept indices.
#[derive(Debug, Clone, Copy)]
pub struct CopyIf {
    /// The predicate.
    pub kind: Kind,
    /// Whether to call `copy_if_indices` rather than `copy_if`.
    pub indices: bool,
}

impl NumberPattern for CopyIf {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let n = ctx.n;
        let x: Vec<T> = ctx.random();
        let pred = self.kind.draw(ctx, &x);
        let mut tests: Vec<Box<dyn Fn(T) -> bool>> = vec![Box::new(move |v| keeps(pred, v))];
        if ctx.flush_subnormals && <T as Sample>::IS_FLOAT {
            tests.push(Box::new(flushed(pred)));
        }
        let off = offset(ctx);
        let (xb, xall) = upload_at(device, ctx, &x, off)?;
        let xv = xb.slice(off..)?;
        let s = device.stream();
        let capacity = n + ctx.rng.random_range(0..3);
        let on_device = ctx.rng.random::<bool>();
        let what = format!(
            "{} with {pred:?} on {n} elements (count on the {})",
            self.name(),
            if on_device { "device" } else { "host" }
        );
        let (got_count, accept) = if self.indices {
            let into = |out: &mut _, count: &mut _| copy_if_indices_into(&s, &xv, pred, out, count);
            let (initial, got, count) =
                output(device, ctx, capacity, on_device, into, |out| copy_if_indices(&s, &xv, pred, out))?;
            judge(ctx, &what, &tests, kept_then(&x, &initial, |i| i as u32), &got, count)?
        } else {
            let into = |out: &mut _, count: &mut _| copy_if_into(&s, &xv, pred, out, count);
            let (initial, got, count) =
                output(device, ctx, capacity, on_device, into, |out| copy_if(&s, &xv, pred, out))?;
            judge(ctx, &what, &tests, kept_then(&x, &initial, |i| x[i]), &got, count)?
        };
        if !accept {
            return Err(Failure::Contract(format!("{what}: count {got_count} matches no reading of the predicate")));
        }
        unchanged("input", &xb, &xall)
    }
}

impl CopyIf {
    fn name(self) -> &'static str {
        if self.indices { "copy_if_indices" } else { "copy_if" }
    }
}

/// The output of one compaction: `capacity` random elements uploaded, then
/// written by `into` (the count left on the device) when `on_device`, by
/// `counted` (the count returned) otherwise; the elements first uploaded,
/// those read back, and the count.
fn output<B: Backend, O: Sample>(
    device: &Device<B>,
    ctx: &mut Ctx,
    capacity: usize,
    on_device: bool,
    into: impl FnOnce(&mut Buffer<B, O>, &mut Buffer<B, u64>) -> kiln_core::Result<()>,
    counted: impl FnOnce(&mut Buffer<B, O>) -> kiln_core::Result<usize>,
) -> Result<(Vec<O>, Vec<O>, usize), Failure> {
    let initial: Vec<O> = crate::random_vec(&mut ctx.rng, capacity);
    let mut out = device.upload(&initial)?;
    let count = if on_device {
        let mut count = device.upload(&[u64::MAX])?;
        into(&mut out, &mut count)?;
        count.to_vec()?[0] as usize
    } else {
        counted(&mut out)?
    };
    let got = out.to_vec()?;
    Ok((initial, got, count))
}

/// What a reading of the predicate (`test`) expects of an output that
/// started as `initial`: `kept(i)` for each element `x[i]` kept, in order,
/// then the rest of `initial` untouched; and how many were kept.
fn kept_then<'a, T: Copy, O: Copy>(
    x: &'a [T],
    initial: &'a [O],
    kept: impl Fn(usize) -> O + 'a,
) -> impl Fn(&dyn Fn(T) -> bool) -> (Vec<O>, usize) + 'a {
    move |test| {
        let mut want: Vec<O> = (0..x.len()).filter(|&i| test(x[i])).map(&kept).collect();
        let k = want.len();
        want.extend_from_slice(&initial[k..]);
        (want, k)
    }
}

/// Compare the output and the count with the expectation of each reading of
/// the predicate (exact, or with subnormals flushed); `Ok((count, true))`
/// when one reading explains both.
fn judge<T: Sample, O: Sample>(
    ctx: &Ctx,
    what: &str,
    tests: &[Box<dyn Fn(T) -> bool>],
    expect: impl Fn(&dyn Fn(T) -> bool) -> (Vec<O>, usize),
    got: &[O],
    count: usize,
) -> Result<(usize, bool), Failure> {
    let mut first = None;
    for test in tests {
        let (want, k) = expect(test.as_ref());
        let result =
            ctx.compare(&format!("{what}: output (kept, then untouched)"), &Expected::new(want, Tolerance::Exact), got);
        if result.is_ok() && k == count {
            return Ok((count, true));
        }
        if first.is_none() {
            first = Some((result, k));
        }
    }
    match first {
        Some((Err(e), _)) => Err(e),
        Some((Ok(()), k)) => Err(Failure::Contract(format!("{what}: returned count {count}, expected {k}"))),
        None => Ok((count, false)),
    }
}

/// Compactions into too small an output, or with a count buffer of the
/// wrong length, must be refused with `LengthMismatch` and write nothing.
fn refusals<B: Backend>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let n = ctx.n;
    let s = device.stream();
    let x = device.upload(&crate::random_vec::<f32>(&mut ctx.rng, n + 1))?;
    let initial: Vec<f32> = crate::random_vec(&mut ctx.rng, n);
    let mut out = device.upload(&initial)?;
    let mut at = device.upload(&vec![7u32; n])?;
    let mut count = device.upload(&[3u64, 4])?;
    let calls = [
        ("copy_if into n for n + 1", copy_if(&s, &x, Predicate::NonZero, &mut out).map(|_| ())),
        ("copy_if_indices into n for n + 1", copy_if_indices(&s, &x, Predicate::NonZero, &mut at).map(|_| ())),
        (
            "copy_if_into with a 2-element count",
            copy_if_into(&s, &x.slice(..n)?, Predicate::GreaterThan(0.0), &mut out, &mut count),
        ),
    ];
    for (call, result) in calls {
        match result {
            Err(Error::LengthMismatch { .. }) => {}
            other => return Err(Failure::Contract(format!("{call} returned {other:?}, not LengthMismatch"))),
        }
    }
    let halves = device.upload(&[kiln_core::f16::ONE; 3])?;
    let mut halves_out = device.upload(&[kiln_core::f16::ZERO; 3])?;
    match copy_if(&s, &halves, Predicate::NonZero, &mut halves_out) {
        Err(Error::Unsupported { .. }) => {}
        other => return Err(Failure::Contract(format!("copy_if of f16 returned {other:?}, not Unsupported"))),
    }
    unchanged("output after refused calls", &out, &initial)?;
    unchanged("indices after refused calls", &at, &vec![7u32; n])?;
    if count.to_vec()? != [3, 4] {
        return Err(Failure::Contract("a refused copy_if_into wrote its count".into()));
    }
    Ok(())
}

/// Add the compaction cases to `group`: every predicate, values and
/// indices, on every number type, and the refusals.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    for kind in Kind::ALL {
        let name = format!("{kind:?}").to_lowercase();
        c.numbers(group, format!("copy_if/{name}"), CopyIf { kind, indices: false });
        c.numbers(group, format!("copy_if_indices/{name}"), CopyIf { kind, indices: true });
    }
    c.one(group, "copy_if/refusals", DType::F32, refusals::<B>);
}
