//! histogram and histogram_into of u8, i32 and f32, exact: uniform data
//! spilling past the range (so some is dropped), skewed data (every value
//! in one bin, or every value out of range), and values on the edges (lo,
//! hi, bin boundaries; NaN and infinities for f32), with 1 to 4096 bins.
//! Counts start poisoned: the function must zero them. The reference bins
//! by the documented formula, integers in 128-bit arithmetic.

use kiln_core::{Backend, DType, Device, Element, Error};
use kiln_kernels::histogram::{HistogramInput, histogram, histogram_into};
use rand::Rng;

use super::inputs::{offset, upload_at};
use super::unchanged;
use crate::{Cases, Ctx, Expected, Failure, Sample, Tolerance};

/// The bin counts tried, drawn per run.
const BINS: [usize; 9] = [1, 2, 3, 7, 16, 100, 256, 1000, 4096];

/// Which data a case counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Data {
    /// Uniform over the range and a little beyond it, with a few adversarial values.
    Uniform,
    /// Every value the same, in range or (a quarter of the runs) out of it.
    Skewed,
    /// Values on lo, hi, the bin boundaries and their neighbours.
    Edges,
}

/// A histogram input type as the suite draws it.
trait Input: HistogramInput + Sample {
    /// A range `[lo, hi)` and the values around it, as f64 (exact).
    fn range(ctx: &mut Ctx) -> (f64, f64);
    fn bound(v: f64) -> Self::Bound;
    /// `v` clamped into the type and converted (exact for in-range integers).
    fn from(v: f64) -> Self;
}

impl Input for u8 {
    fn range(ctx: &mut Ctx) -> (f64, f64) {
        let lo = ctx.rng.random_range(0..40u32);
        (lo as f64, ctx.rng.random_range(lo + 1..=256) as f64)
    }
    fn bound(v: f64) -> u32 {
        v as u32
    }
    fn from(v: f64) -> u8 {
        v.clamp(0.0, 255.0) as u8
    }
}

impl Input for i32 {
    fn range(ctx: &mut Ctx) -> (f64, f64) {
        if ctx.rng.random_range(0..8) == 0 {
            return (i32::MIN as f64, 2_147_483_648.0);
        }
        let lo = ctx.rng.random_range(-2000..=0i64);
        (lo as f64, (lo + ctx.rng.random_range(1..4000i64)) as f64)
    }
    fn bound(v: f64) -> i64 {
        v as i64
    }
    fn from(v: f64) -> i32 {
        v.clamp(i32::MIN as f64, i32::MAX as f64) as i32
    }
}

impl Input for f32 {
    fn range(ctx: &mut Ctx) -> (f64, f64) {
        let lo = ctx.rng.random_range(-10.0..1.0f32);
        let hi = lo + ctx.rng.random_range(0.5..100.0f32);
        (lo as f64, hi as f64)
    }
    fn bound(v: f64) -> f32 {
        v as f32
    }
    fn from(v: f64) -> f32 {
        v as f32
    }
}

/// The bin of `v` by the documented formula, or `None` when it is dropped.
fn bin<T: Input>(v: T, bins: usize, lo: f64, hi: f64) -> Option<usize> {
    let x = v.to_f64();
    if !(x >= lo && x < hi) {
        return None;
    }
    if T::FLOAT {
        let s = (bins as f64 / (hi - lo)) as f32;
        let q = ((x as f32 - lo as f32) * s) as usize;
        Some(q.min(bins - 1))
    } else {
        let (d, w) = ((x - lo) as i128, (hi - lo) as i128);
        Some((d * bins as i128 / w) as usize)
    }
}

/// Counts and dropped count of `x`; `flush` reads subnormals as zero.
fn reference<T: Input>(x: &[T], bins: usize, lo: f64, hi: f64, flush: bool) -> (Vec<u32>, u64) {
    let mut counts = vec![0u32; bins];
    let mut dropped = 0;
    for &v in x {
        let v = if flush { v.flush_subnormal() } else { v };
        match bin(v, bins, lo, hi) {
            Some(b) => counts[b] += 1,
            None => dropped += 1,
        }
    }
    (counts, dropped)
}

fn data<T: Input>(kind: Data, ctx: &mut Ctx, bins: usize, lo: f64, hi: f64) -> Vec<T> {
    let n = ctx.n;
    let w = hi - lo;
    match kind {
        Data::Uniform => (0..n)
            .map(|_| {
                if ctx.rng.random_range(0..20) == 0 {
                    T::random(&mut ctx.rng)
                } else {
                    T::from(ctx.rng.random_range(lo - w / 8.0..hi + w / 8.0))
                }
            })
            .collect(),
        Data::Skewed => {
            let v = if ctx.rng.random_range(0..4) == 0 {
                T::from(hi + ctx.rng.random_range(0.0..8.0))
            } else {
                T::from(ctx.rng.random_range(lo..hi))
            };
            vec![v; n]
        }
        Data::Edges => {
            let mut edges: Vec<f64> = vec![lo, hi, lo - 1.0, hi - 1.0, hi + 1.0];
            for k in 0..=bins.min(64) {
                let e = lo + w * k as f64 / bins as f64;
                edges.extend([e, e.floor(), e.ceil(), e - 1.0]);
            }
            let mut xs: Vec<T> = (0..n).map(|_| T::from(edges[ctx.rng.random_range(0..edges.len())])).collect();
            if T::FLOAT {
                // The f32 neighbours of the edges, and the specials.
                for x in xs.iter_mut() {
                    match ctx.rng.random_range(0..16) {
                        0..5 => {
                            let bits = (x.to_f64() as f32).to_bits();
                            let next = if ctx.rng.random() { bits.wrapping_add(1) } else { bits.wrapping_sub(1) };
                            *x = T::from(f32::from_bits(next) as f64);
                        }
                        5 => *x = T::random(&mut ctx.rng),
                        _ => {}
                    }
                }
            }
            xs
        }
    }
}

fn run<B: Backend, T: Input>(kind: Data, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let n = ctx.n;
    let bins = BINS[ctx.rng.random_range(0..BINS.len())];
    let (lo, hi) = T::range(ctx);
    let x: Vec<T> = data(kind, ctx, bins, lo, hi);
    let (want, dropped) = reference(&x, bins, lo, hi, false);
    let mut expected = Expected::new(want, Tolerance::Exact);
    let mut allowed = vec![dropped];
    if ctx.flush_subnormals && T::FLOAT {
        let (alt, alt_dropped) = reference(&x, bins, lo, hi, true);
        expected = expected.or(alt);
        allowed.push(alt_dropped);
    }
    let off = offset(ctx);
    let (xb, xall) = upload_at(device, ctx, &x, off)?;
    let xv = xb.slice(off..)?;
    let s = device.stream();
    let mut counts = device.upload(&crate::random_vec::<u32>(&mut ctx.rng, bins))?;
    let on_device = ctx.rng.random::<bool>();
    let (l, h) = (T::bound(lo), T::bound(hi));
    let got_dropped = if on_device {
        let mut d = device.upload(&[u64::MAX])?;
        histogram_into(&s, &xv, bins, l, h, &mut counts, &mut d)?;
        d.to_vec()?[0]
    } else {
        histogram(&s, &xv, bins, l, h, &mut counts)?
    };
    let what = format!(
        "histogram of {n} {} ({kind:?}) in {bins} bins over [{lo}, {hi}), at +{off}, dropped count on the {}",
        T::DTYPE,
        if on_device { "device" } else { "host" }
    );
    ctx.compare(&format!("{what}: counts"), &expected, &counts.to_vec()?)?;
    if !allowed.contains(&got_dropped) {
        return Err(Failure::Contract(format!("{what}: {got_dropped} dropped, expected {dropped}")));
    }
    unchanged("input", &xb, &xall)
}

/// Bad bins, ranges and buffer lengths must be refused, with the counts untouched.
fn refusals<B: Backend>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let s = device.stream();
    let x = device.upload(&crate::random_vec::<f32>(&mut ctx.rng, ctx.n))?;
    let xi = device.upload(&crate::random_vec::<i32>(&mut ctx.rng, ctx.n))?;
    let initial: Vec<u32> = crate::random_vec(&mut ctx.rng, 8);
    let mut counts = device.upload(&initial)?;
    let mut big = device.upload(&vec![5u32; 4097])?;
    let mut empty = device.alloc::<u32>(0)?;
    let calls: Vec<(&str, kiln_core::Result<u64>, bool)> = vec![
        ("0 bins", histogram(&s, &x, 0, 0.0, 1.0, &mut empty), true),
        ("4097 bins", histogram(&s, &x, 4097, 0.0, 1.0, &mut big), true),
        ("lo == hi", histogram(&s, &x, 8, 1.0, 1.0, &mut counts), true),
        ("a NaN bound", histogram(&s, &x, 8, f32::NAN, 1.0, &mut counts), true),
        ("an infinite bound", histogram(&s, &x, 8, 0.0, f32::INFINITY, &mut counts), true),
        ("i32 lo below i32::MIN", histogram(&s, &xi, 8, i32::MIN as i64 - 1, 0, &mut counts), true),
        ("i32 hi past 2^31", histogram(&s, &xi, 8, 0, 1 << 32, &mut counts), true),
        ("7 counts for 8 bins", histogram(&s, &x, 8, 0.0, 1.0, &mut counts.slice_mut(..7)?), false),
    ];
    for (call, result, invalid) in calls {
        let ok = match &result {
            Err(Error::InvalidArgument { .. }) => invalid,
            Err(Error::LengthMismatch { .. }) => !invalid,
            _ => false,
        };
        if !ok {
            return Err(Failure::Contract(format!("histogram with {call} returned {result:?}")));
        }
    }
    unchanged("counts after refused calls", &counts, &initial)?;
    unchanged("4097 counts after a refused call", &big, &vec![5u32; 4097])
}

/// Add the histogram cases to `group`: each kind of data on u8, i32 and f32, and the refusals.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    for kind in [Data::Uniform, Data::Skewed, Data::Edges] {
        let pattern = format!("histogram/{}", format!("{kind:?}").to_lowercase());
        c.one(group, pattern.clone(), u8::DTYPE, move |d, ctx| run::<B, u8>(kind, d, ctx));
        c.one(group, pattern.clone(), i32::DTYPE, move |d, ctx| run::<B, i32>(kind, d, ctx));
        c.one(group, pattern, f32::DTYPE, move |d, ctx| run::<B, f32>(kind, d, ctx));
    }
    c.one(group, "histogram/refusals", DType::F32, refusals::<B>);
}
