//! image: RGB/RGBA to gray, the built-in blurs and random convolutions with
//! every border mode, on u8 and f32 images whose shapes derive from the
//! case's size (1 x n, n x 1, random factorisations), some of them views at
//! unaligned offsets. u8 results are exact (every filter used on u8 has
//! dyadic or integer weights, so its sums are exact); f32 results within a
//! bound that grows with the filter's size, against an f64 reference.

use kiln_core::{Backend, Buffer, DType, Device, Element, Error};
use kiln_kernels::image::{Blur, Border, Filter, MAX_FILTER_SIDE, PixelFormat, blur, convolve, gray};
use rand::Rng;

use super::matmul::within_bounds;
use super::transpose::{inverted, matrix_shape, same_bits};
use crate::{Cases, Ctx, Failure};

/// The source of coordinate `i` on an axis of `n` pixels, or `None` for a
/// zero pixel, written from the definitions of the border modes.
fn source(i: i64, n: i64, border: Border) -> Option<i64> {
    if (0..n).contains(&i) {
        return Some(i);
    }
    match border {
        Border::Clamp => Some(i.clamp(0, n - 1)),
        Border::Zero => None,
        Border::Reflect => {
            // Mirror about the edges, edge pixel included, until inside:
            // -1 -> 0, -2 -> 1, n -> n - 1, n + 1 -> n - 2.
            let mut j = i;
            while !(0..n).contains(&j) {
                j = if j < 0 { -1 - j } else { 2 * n - 1 - j };
            }
            Some(j)
        }
    }
}

/// For each pixel, the exact sum of weight x pixel over the filter's
/// window and the sum of their magnitudes (f64).
fn window_sums(input: &[f64], (width, height): (usize, usize), filter: &Filter, border: Border) -> Vec<(f64, f64)> {
    let (fw, fh) = (filter.width() as i64, filter.height() as i64);
    let mut out = Vec::with_capacity(width * height);
    for y in 0..height as i64 {
        for x in 0..width as i64 {
            let (mut sum, mut abs) = (0.0, 0.0);
            for i in 0..fh {
                for j in 0..fw {
                    let sy = source(y + i - fh / 2, height as i64, border);
                    let sx = source(x + j - fw / 2, width as i64, border);
                    if let (Some(sy), Some(sx)) = (sy, sx) {
                        let t =
                            filter.weights()[(i * fw + j) as usize] as f64 * input[(sy * width as i64 + sx) as usize];
                        sum += t;
                        abs += t.abs();
                    }
                }
            }
            out.push((sum, abs));
        }
    }
    out
}

/// A pixel type: random images and the reference of a convolution.
trait Pixel: kiln_kernels::image::Pixel {
    fn sample(ctx: &mut Ctx) -> Self;
    fn as_f64(self) -> f64;
    /// The expected pixel and its error bound from an exact window sum.
    fn expect(sum: f64, abs: f64, taps: usize, divisor: f32) -> (Self, f64);
}

impl Pixel for u8 {
    fn sample(ctx: &mut Ctx) -> u8 {
        ctx.rng.random()
    }
    fn as_f64(self) -> f64 {
        self as f64
    }
    fn expect(sum: f64, _abs: f64, _taps: usize, divisor: f32) -> (u8, f64) {
        // The sum is exact in f32 (integer or dyadic weights); one f32
        // division, then round half up and clamp.
        let q = sum as f32 / divisor;
        ((q + 0.5).floor().clamp(0.0, 255.0) as u8, 0.0)
    }
}

impl Pixel for f32 {
    fn sample(ctx: &mut Ctx) -> f32 {
        // Mixed magnitudes and signs, and small integers (exact sums).
        if ctx.rng.random_range(0..4u32) == 0 {
            return ctx.rng.random_range(-16..=16i32) as f32;
        }
        let m: f32 = ctx.rng.random_range(1.0..2.0);
        let v = m * 2f32.powi(ctx.rng.random_range(-12..=12));
        if ctx.rng.random() { v } else { -v }
    }
    fn as_f64(self) -> f64 {
        self as f64
    }
    fn expect(sum: f64, abs: f64, taps: usize, divisor: f32) -> (f32, f64) {
        let d = divisor as f64;
        // Summing `taps` products in f32 (fused or not) and one division.
        ((sum / d) as f32, (taps as f64 + 3.0) * f32::EPSILON as f64 * abs / d.abs())
    }
}

/// `data` in a fresh buffer, either whole or as the tail of a larger one (a
/// view at an unaligned offset, 1 to 3 elements in): returns the buffer and
/// the offset.
fn place<B: Backend, T: Element>(
    device: &Device<B>,
    ctx: &mut Ctx,
    data: &[T],
) -> kiln_core::Result<(Buffer<B, T>, usize)> {
    let offset = if ctx.rng.random() { 0 } else { ctx.rng.random_range(1..=3) };
    let mut padded = vec![T::zeroed(); offset];
    padded.extend_from_slice(data);
    Ok((device.upload(&padded)?, offset))
}

fn run_gray<B: Backend>(format: PixelFormat, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let (width, height) = matrix_shape(ctx);
    let ch = format.channels();
    let input: Vec<u8> = (0..width * height * ch).map(|_| ctx.rng.random()).collect();
    let want: Vec<u8> = input
        .chunks_exact(ch)
        .map(|p| ((299 * p[0] as u32 + 587 * p[1] as u32 + 114 * p[2] as u32) / 1000) as u8)
        .collect();
    let s = device.stream();
    let (inb, ioff) = place(device, ctx, &input)?;
    let (mut outb, ooff) = place(device, ctx, &inverted(&want))?;
    let before = outb.to_vec()?;
    let len = want.len();
    gray(&s, format, &inb.slice(ioff..)?, width, height, &mut outb.slice_mut(ooff..)?)?;
    let got = outb.to_vec()?;
    same_bits("bytes before the output view", &before[..ooff], &got[..ooff])?;
    same_bits("input", &input, &inb.slice(ioff..)?.to_vec()?)?;
    let what = format!("gray of {width} x {height} {} (input at +{ioff}, output at +{ooff})", format.name());
    same_bits(&what, &want, &got[ooff..ooff + len])
}

/// What a convolution case filters with.
#[derive(Debug, Clone, Copy)]
enum Which {
    Blur(Blur),
    Random,
}

/// A random filter: odd sides (up to 7, or to the maximum on small images),
/// weights j / 16 for j in -16..=16 and a power-of-two divisor for u8 (so
/// every sum is exact), any weights for f32.
fn random_filter(ctx: &mut Ctx, dtype: DType) -> kiln_core::Result<Filter> {
    let most = if ctx.n <= 1025 { MAX_FILTER_SIDE } else { 7 };
    let mut side = || 2 * ctx.rng.random_range(0..=most / 2) + 1;
    let (fw, fh) = (side(), side());
    let weights: Vec<f32> = (0..fw * fh)
        .map(|_| match dtype {
            DType::U8 => ctx.rng.random_range(-16..=16i32) as f32 / 16.0,
            _ => ctx.rng.random_range(-1.0f32..1.0),
        })
        .collect();
    let divisor = match dtype {
        DType::U8 => 2f32.powi(ctx.rng.random_range(-2..=4)),
        _ => ctx.rng.random_range(0.5f32..4.0),
    };
    Filter::new(fw, fh, weights, divisor)
}

fn run_convolution<B: Backend, P: Pixel>(
    which: Which,
    border: Border,
    device: &Device<B>,
    ctx: &mut Ctx,
) -> Result<(), Failure> {
    let (width, height) = matrix_shape(ctx);
    let filter = match which {
        Which::Blur(b) => b.filter(),
        Which::Random => random_filter(ctx, P::DTYPE)?,
    };
    let input: Vec<P> = (0..width * height).map(|_| P::sample(ctx)).collect();
    let wide: Vec<f64> = input.iter().map(|p| p.as_f64()).collect();
    let taps = filter.width() * filter.height();
    let want: Vec<(P, f64)> = window_sums(&wide, (width, height), &filter, border)
        .into_iter()
        .map(|(sum, abs)| P::expect(sum, abs, taps, filter.divisor()))
        .collect();
    let values: Vec<P> = want.iter().map(|w| w.0).collect();
    let s = device.stream();
    let (inb, ioff) = place(device, ctx, &input)?;
    let (mut outb, ooff) = place(device, ctx, &inverted(&values))?;
    let len = values.len();
    {
        let (input_view, mut output_view) = (inb.slice(ioff..)?, outb.slice_mut(ooff..)?);
        match which {
            Which::Blur(b) => blur(&s, b, &input_view, width, height, border, &mut output_view)?,
            Which::Random => {
                let f = filter.upload(&s)?;
                convolve(&s, &input_view, width, height, &f, border, &mut output_view)?
            }
        }
    }
    let got = outb.to_vec()?;
    same_bits("input", &input, &inb.slice(ioff..)?.to_vec()?)?;
    let what = format!(
        "{} x {} convolution ({border}, divisor {}) of {width} x {height} {} (input at +{ioff}, output at +{ooff})",
        filter.width(),
        filter.height(),
        filter.divisor(),
        P::DTYPE
    );
    within_bounds(&what, &want, &got[ooff..ooff + len], P::as_f64)
}

/// Bad filters and mismatched images must be refused, touching nothing.
fn refusals<B: Backend>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let contract =
        |call: &str, ok: bool| if ok { Ok(()) } else { Err(Failure::Contract(format!("{call} was not refused"))) };
    contract("Filter::new(4 x 3)", Filter::new(4, 3, vec![1.0; 12], 1.0).is_err())?;
    contract("Filter::new(17 x 1)", Filter::new(17, 1, vec![1.0; 17], 1.0).is_err())?;
    contract("Filter::new with 8 of 9 weights", Filter::new(3, 3, vec![1.0; 8], 1.0).is_err())?;
    contract("Filter::new with a NaN weight", Filter::new(1, 1, vec![f32::NAN], 1.0).is_err())?;
    contract("Filter::new with divisor 0", Filter::new(1, 1, vec![1.0], 0.0).is_err())?;
    contract("Filter::box_blur(4)", Filter::box_blur(4).is_err())?;
    contract("Filter::gaussian(17)", Filter::gaussian(17).is_err())?;
    let (width, height) = matrix_shape(ctx);
    let s = device.stream();
    let input = device.upload(&vec![7u8; width * height + 1])?;
    let before: Vec<u8> = (0..width * height).map(|i| i as u8).collect();
    let mut out = device.upload(&before)?;
    match blur(&s, Blur::Box3, &input, width, height, Border::Clamp, &mut out) {
        Err(Error::LengthMismatch { .. }) => {}
        other => {
            return Err(Failure::Contract(format!(
                "blur of {width} x {height} with one pixel too many returned {other:?}"
            )));
        }
    }
    match gray(&s, PixelFormat::Rgb, &input, width, height, &mut out) {
        Err(Error::LengthMismatch { .. }) => {}
        other => {
            return Err(Failure::Contract(format!(
                "gray of {width} x {height} from a 1-channel image returned {other:?}"
            )));
        }
    }
    same_bits("output after refused calls", &before, &out.to_vec()?)
}

/// Add the image cases to `group`: gray, each blur and random filters with each border, refusals.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    for format in [PixelFormat::Rgb, PixelFormat::Rgba] {
        c.one(group, format!("image/gray_{}", format.name()), DType::U8, move |d, ctx| run_gray(format, d, ctx));
    }
    let filters = Blur::ALL.into_iter().map(Which::Blur).chain([Which::Random]);
    for which in filters {
        for border in Border::ALL {
            let name = match which {
                Which::Blur(b) => format!("image/{b}_{border}"),
                Which::Random => format!("image/convolve_{border}"),
            };
            c.one(group, name.clone(), DType::U8, move |d, ctx| run_convolution::<B, u8>(which, border, d, ctx));
            c.one(group, name, DType::F32, move |d, ctx| run_convolution::<B, f32>(which, border, d, ctx));
        }
    }
    c.one(group, "image/refusals", DType::U8, refusals::<B>);
}
