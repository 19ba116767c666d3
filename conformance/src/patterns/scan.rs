//! scan, scan_in_place and segmented_scan, inclusive and exclusive, against
//! a sequential reference: integers exact (wrapping, on the adversarial
//! mix), floats within `eps * (4 log2(n + 1) + 2)` times the sum of `|x|`
//! up to each output (plus one rounding of it) of a compensated f64 prefix,
//! with a NaN or an infinity in a third of the runs. Outputs are poisoned,
//! inputs and the elements around views must come out untouched.

use kiln_core::{Backend, DType, Device, Error};
use kiln_kernels::Number;
use kiln_kernels::scan::{ScanKind, scan, scan_in_place, segmented_scan};
use rand::Rng;

use super::inputs::{from_f64, offset, upload_at};
use super::sums::{Compensated, sum_bound};
use super::unchanged;
use crate::{Arith, Cases, Ctx, Expected, Failure, NumberPattern, Sample};

/// Which entry point a case calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `scan(x, y)`.
    Plain,
    /// `scan_in_place(x)`.
    InPlace,
    /// `segmented_scan(x, flags, y)`.
    Segmented,
}

/// Segment flags: mostly zero with a nonzero value about every 40
/// elements; in some runs none at all, or every element a segment start.
fn flags(ctx: &mut Ctx) -> Vec<u32> {
    let n = ctx.n;
    match ctx.rng.random_range(0..8) {
        0 => vec![0; n],
        1 => (0..n).map(|_| ctx.rng.random_range(1..=u32::MAX)).collect(),
        _ => (0..n)
            .map(|_| if ctx.rng.random_range(0..40) == 0 { ctx.rng.random_range(1..=u32::MAX) } else { 0 })
            .collect(),
    }
}

/// Inputs: the adversarial mix for integers; moderate floats, with a NaN,
/// an infinity or both infinities at random places in a third of the runs.
fn inputs<T: Arith>(ctx: &mut Ctx) -> Vec<T> {
    let n = ctx.n;
    if !T::IS_FLOAT {
        return ctx.random();
    }
    let mut x: Vec<T> = (0..n).map(|_| T::random_moderate(&mut ctx.rng)).collect();
    if n > 0 && ctx.rng.random_range(0..3) == 0 {
        let specials: &[f64] = match ctx.rng.random_range(0..3) {
            0 => &[f64::NAN],
            1 => &[f64::INFINITY],
            _ => &[f64::INFINITY, f64::NEG_INFINITY],
        };
        for &v in specials {
            let at = ctx.rng.random_range(0..n);
            x[at] = from_f64(v);
        }
    }
    x
}

/// The reference scan, and each output's error bound.
fn reference<T: Arith>(kind: ScanKind, x: &[T], flags: Option<&[u32]>) -> (Vec<T>, Vec<f64>) {
    let n = x.len();
    let (mut out, mut bounds) = (Vec::with_capacity(n), Vec::with_capacity(n));
    let mut int = T::index(0);
    let mut float = Compensated::default();
    let mut magnitude = 0.0f64;
    for (i, &v) in x.iter().enumerate() {
        if flags.is_some_and(|f| f[i] != 0) {
            int = T::index(0);
            float = Compensated::default();
            magnitude = 0.0;
        }
        if kind == ScanKind::Exclusive {
            out.push(if T::IS_FLOAT { from_f64(float.value()) } else { int });
            bounds.push(sum_bound::<T>(n, magnitude, float.value()));
        }
        int = T::plus(int, v);
        float.add(v.to_f64());
        magnitude += v.to_f64().abs();
        if kind == ScanKind::Inclusive {
            out.push(if T::IS_FLOAT { from_f64(float.value()) } else { int });
            bounds.push(sum_bound::<T>(n, magnitude, float.value()));
        }
    }
    (out, bounds)
}

/// One kind of scan through one entry point.
#[derive(Debug, Clone, Copy)]
pub struct Scan {
    /// Inclusive or exclusive.
    pub kind: ScanKind,
    /// Which entry point.
    pub form: Form,
}

impl NumberPattern for Scan {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let (kind, n) = (self.kind, ctx.n);
        let x: Vec<T> = inputs(ctx);
        let f = if self.form == Form::Segmented { Some(flags(ctx)) } else { None };
        let (want, bounds) = reference(kind, &x, f.as_deref());
        let expected = Expected::within(want.clone(), bounds);
        let s = device.stream();
        let (ox, oy) = (offset(ctx), offset(ctx));
        let what = format!("{kind} scan ({:?}) of {n} elements, x at +{ox}, y at +{oy}", self.form);
        match self.form {
            Form::InPlace => {
                let (mut buf, mut all) = upload_at(device, ctx, &x, ox)?;
                scan_in_place(&s, kind, &mut buf.slice_mut(ox..)?)?;
                let got = buf.to_vec()?;
                ctx.compare_inputs(&what, &expected, &got[ox..], &[("x", &x)])?;
                all.truncate(ox);
                unchanged_prefix("elements before the view", &got, &all)
            }
            Form::Plain | Form::Segmented => {
                let (xb, xall) = upload_at(device, ctx, &x, ox)?;
                let mut initial: Vec<T> = crate::random_vec(&mut ctx.rng, oy);
                initial.extend(crate::poison_for(&want));
                let mut yb = device.upload(&initial)?;
                match &f {
                    None => scan(&s, kind, &xb.slice(ox..)?, &mut yb.slice_mut(oy..)?)?,
                    Some(f) => {
                        let fb = device.upload(f)?;
                        segmented_scan(&s, kind, &xb.slice(ox..)?, &fb, &mut yb.slice_mut(oy..)?)?;
                        unchanged("flags", &fb, f)?;
                    }
                }
                let got = yb.to_vec()?;
                ctx.compare_inputs(&what, &expected, &got[oy..], &[("x", &x)])?;
                unchanged_prefix("elements before the output view", &got, &initial[..oy])?;
                unchanged("input", &xb, &xall)
            }
        }
    }
}

/// `Err` unless `got` starts with exactly `prefix`.
fn unchanged_prefix<T: Sample>(what: &str, got: &[T], prefix: &[T]) -> Result<(), Failure> {
    crate::compare(what, &Expected::new(prefix.to_vec(), crate::Tolerance::Bits), &got[..prefix.len()])
        .map_err(Failure::Mismatch)
}

/// Scans whose operands disagree in length must be refused with
/// `LengthMismatch` and write nothing.
fn refusals<B: Backend>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let n = ctx.n;
    let s = device.stream();
    let x = device.upload(&crate::random_vec::<u32>(&mut ctx.rng, n))?;
    let initial: Vec<u32> = crate::random_vec(&mut ctx.rng, n + 1);
    let mut y = device.upload(&initial)?;
    let flags = device.upload(&vec![0u32; n + 1])?;
    let calls = [
        ("scan of n into n + 1", scan(&s, ScanKind::Inclusive, &x, &mut y)),
        (
            "segmented_scan with n + 1 flags",
            segmented_scan(&s, ScanKind::Exclusive, &x, &flags, &mut y.slice_mut(..n)?),
        ),
    ];
    for (call, result) in calls {
        match result {
            Err(Error::LengthMismatch { .. }) => {}
            other => return Err(Failure::Contract(format!("{call} returned {other:?}, not LengthMismatch"))),
        }
    }
    unchanged("output after refused calls", &y, &initial)
}

/// Add the scan cases to `group`: each kind through each entry point on
/// every number type, and the refusals.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    for kind in ScanKind::ALL {
        c.numbers_and_halves(group, format!("scan/{kind}"), Scan { kind, form: Form::Plain });
        c.numbers_and_halves(group, format!("scan_in_place/{kind}"), Scan { kind, form: Form::InPlace });
        c.numbers_and_halves(group, format!("segmented_scan/{kind}"), Scan { kind, form: Form::Segmented });
    }
    c.one(group, "scan/refusals", DType::U32, refusals::<B>);
}
