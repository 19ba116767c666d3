//! fft: complex and real transforms against an independent reference in
//! f64: a direct O(n^2) DFT along each axis for lengths up to a few
//! thousand, rustfft's f64 transform for the large ones (2^16, 2^20 and the
//! prime 100003). Each element's error must stay within
//! `C log2(n) eps ||x||` (times the normalisation), `||x||` the input's
//! 2-norm. Lengths come from the case's size (every size of the suite:
//! primes such as 31 and 257, powers of two, 1023, 1025), and from the
//! issue's list (2, 3, 5, 7, 8, 16, 17, 64, 97, 127, 128, 1000, 4096), one
//! per size; shapes of two and three axes, strided views, real transforms
//! and refusals besides.

use kiln_core::{Backend, Complex, DType, Device, Error};
use kiln_kernels::array::Array;
use kiln_kernels::fft::{FftDirection, FftFloat, FftNorm, FftShape, fft, ifft, irfft, rfft};
use rand::Rng;

use crate::{Cases, Ctx, Failure};

type C = Complex<f64>;

/// The lengths the issue lists besides the suite's sizes.
const LISTED: [usize; 13] = [2, 3, 5, 7, 8, 16, 17, 64, 97, 127, 128, 1000, 4096];

/// The error bound's constant.
const C_BOUND: f64 = 16.0;

/// Lengths up to this are checked against the direct DFT.
const DIRECT_UP_TO: usize = 4096;

/// The element type a case runs on, with its epsilon.
trait Real: FftFloat {
    const EPS: f64;
}

impl Real for f32 {
    const EPS: f64 = f32::EPSILON as f64;
}

impl Real for f64 {
    const EPS: f64 = f64::EPSILON;
}

/// The transform length a size stands for: the size itself, but 2^20 for
/// the suite's largest (2^20 + 1).
fn length_of(n: usize) -> usize {
    if n == (1 << 20) + 1 { 1 << 20 } else { n }
}

/// The 1-D transform of `x` in f64, `sign` the exponent's: direct for short
/// lengths, rustfft's for long ones.
fn reference_1d(x: &[C], sign: f64) -> Vec<C> {
    let n = x.len();
    if n > DIRECT_UP_TO {
        let mut planner = rustfft::FftPlanner::<f64>::new();
        let plan = if sign < 0.0 { planner.plan_fft_forward(n) } else { planner.plan_fft_inverse(n) };
        let mut y = x.to_vec();
        plan.process(&mut y);
        return y;
    }
    (0..n)
        .map(|k| {
            x.iter()
                .enumerate()
                .map(|(j, v)| {
                    let angle = sign * 2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                    v * C::new(angle.cos(), angle.sin())
                })
                .sum()
        })
        .collect()
}

/// The transform of row-major `x` of `shape` along `axes`, scaled.
fn reference(x: &[C], shape: &[usize], axes: &[usize], sign: f64, scale: f64) -> Vec<C> {
    let mut y = x.to_vec();
    for &axis in axes {
        let n = shape[axis];
        let inner: usize = shape[axis + 1..].iter().product();
        let outer: usize = shape[..axis].iter().product();
        for o in 0..outer {
            for i in 0..inner {
                let at = |j: usize| o * n * inner + j * inner + i;
                let line: Vec<C> = (0..n).map(|j| y[at(j)]).collect();
                for (k, v) in reference_1d(&line, sign).into_iter().enumerate() {
                    y[at(k)] = v;
                }
            }
        }
    }
    y.into_iter().map(|v| v * scale).collect()
}

/// `Err` naming the first element of `got` farther from `want` than the
/// bound for transforms of `points` points, `norm` the input's 2-norm.
fn within<T: Real>(
    what: &str,
    got: &[Complex<T>],
    want: &[C],
    points: usize,
    norm: f64,
    scale: f64,
) -> Result<(), Failure> {
    if got.len() != want.len() {
        return Err(Failure::Contract(format!("{what}: {} elements expected, {} returned", want.len(), got.len())));
    }
    let bound = C_BOUND * (points.max(2) as f64).log2() * T::EPS * norm * scale + f64::MIN_POSITIVE;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let err = (C::new(g.re.to_wide(), g.im.to_wide()) - w).norm();
        if err.is_nan() || err > bound {
            return Err(Failure::Contract(format!(
                "{what}: element {i} is {} + {}i, the reference {} + {}i: error {err:.3e} past the bound {bound:.3e}",
                g.re.to_wide(),
                g.im.to_wide(),
                w.re,
                w.im
            )));
        }
    }
    Ok(())
}

/// `count` random complex values of `T` in [-1, 1)^2, and the same in f64.
fn random_complex<T: Real>(ctx: &mut Ctx, count: usize) -> (Vec<Complex<T>>, Vec<C>) {
    let v: Vec<Complex<T>> = (0..count)
        .map(|_| {
            Complex::new(T::from_wide(ctx.rng.random_range(-1.0..1.0)), T::from_wide(ctx.rng.random_range(-1.0..1.0)))
        })
        .collect();
    let wide = v.iter().map(|c| C::new(c.re.to_wide(), c.im.to_wide())).collect();
    (v, wide)
}

fn norm2(x: &[C]) -> f64 {
    x.iter().map(|v| v.norm_sqr()).sum::<f64>().sqrt()
}

fn random_norm(ctx: &mut Ctx) -> FftNorm {
    [FftNorm::Backward, FftNorm::Ortho, FftNorm::Forward][ctx.rng.random_range(0..3)]
}

/// A NaN of `T`'s complex type: what outputs are poisoned with.
fn poison<T: Real>() -> Complex<T> {
    Complex::new(T::from_wide(f64::NAN), T::from_wide(f64::NAN))
}

/// Forward and inverse transforms of `shape` along `axes` checked against
/// the reference, and the inverse of the forward against the input.
fn check_c2c<B: Backend, T: Real>(
    device: &Device<B>,
    ctx: &mut Ctx,
    shape: &[usize],
    axes: &[usize],
) -> Result<(), Failure> {
    let spec = FftShape::new(shape).along(axes);
    let len = spec.len();
    let points = spec.points();
    let (x, xw) = random_complex::<T>(ctx, len);
    let norm_x = norm2(&xw);
    let s = device.stream();
    let xb = device.upload(&x)?;
    let norm = random_norm(ctx);
    let what = format!("fft of {shape:?} along {axes:?}, {}", norm.name());
    for direction in [FftDirection::Forward, FftDirection::Inverse] {
        let mut y = device.upload(&vec![poison::<T>(); len])?;
        match direction {
            FftDirection::Forward => fft(&s, &xb, &mut y, spec.clone(), norm)?,
            FftDirection::Inverse => ifft(&s, &xb, &mut y, spec.clone(), norm)?,
        }
        let scale = norm.scale(points, direction);
        let sign = if direction == FftDirection::Forward { -1.0 } else { 1.0 };
        let want = reference(&xw, shape, axes, sign, scale);
        within(
            &format!("{what} ({})", direction.name()),
            &y.to_vec()?,
            &want,
            points,
            norm_x,
            scale * (points as f64).sqrt(),
        )?;
        if direction == FftDirection::Forward {
            let mut back = device.upload(&vec![poison::<T>(); len])?;
            ifft(&s, &y, &mut back, spec.clone(), norm)?;
            within(&format!("{what}: the inverse of the forward"), &back.to_vec()?, &xw, points, norm_x, 1.0)?;
        }
    }
    if xb.to_vec()? != x {
        return Err(Failure::Contract(format!("{what}: the input changed")));
    }
    Ok(())
}

/// Size 0: a transform of no points is refused and writes nothing; any
/// other size: the 1-D transform of that length (2^20 for the largest).
fn one_d<B: Backend, T: Real>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    if ctx.n == 0 {
        return refusals::<B, T>(device);
    }
    let n = length_of(ctx.n);
    check_c2c::<B, T>(device, ctx, &[n], &[0])
}

/// One of the listed lengths (which one follows the size), a batch of three.
fn listed<B: Backend, T: Real>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let n = LISTED[ctx.n % LISTED.len()];
    check_c2c::<B, T>(device, ctx, &[3, n], &[1])
}

/// A shape of two or three axes with about `n` elements (at most 2^16),
/// transformed along a random non-empty set of its axes.
fn n_d<B: Backend, T: Real>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let n = ctx.n.clamp(1, 1 << 16);
    let ndim = ctx.rng.random_range(2..=3usize);
    let mut shape = Vec::with_capacity(ndim);
    let mut left = n;
    for d in 0..ndim {
        let side = if d + 1 == ndim {
            left.max(1)
        } else {
            let limit = ((left as f64).powf(1.0 / (ndim - d) as f64) * 2.0) as usize;
            ctx.rng.random_range(1..=limit.clamp(1, left.max(1)))
        };
        shape.push(side);
        left = (left / side).max(1);
    }
    let mut axes: Vec<usize> = (0..ndim).filter(|_| ctx.rng.random()).collect();
    if axes.is_empty() {
        axes.push(ctx.rng.random_range(0..ndim));
    }
    check_c2c::<B, T>(device, ctx, &shape, &axes)
}

/// The real transform of `rows x n` reals along the last axis against the
/// complex one's first `n / 2 + 1` frequencies, and the real inverse of it
/// against the input.
fn real<B: Backend, T: Real>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let n = length_of(ctx.n.max(1));
    let rows = if n <= 1025 { ctx.rng.random_range(1..=4) } else { 1 };
    let spec = FftShape::new(&[rows, n]);
    let half = n / 2 + 1;
    let (xc, _) = random_complex::<T>(ctx, rows * n);
    let x: Vec<T> = xc.iter().map(|c| c.re).collect();
    let xw: Vec<C> = x.iter().map(|v| C::new(v.to_wide(), 0.0)).collect();
    let norm_x = norm2(&xw);
    let s = device.stream();
    let xb = device.upload(&x)?;
    let mut y = device.upload(&vec![poison::<T>(); rows * half])?;
    rfft(&s, &xb, &mut y, spec.clone(), FftNorm::Backward)?;
    let full = reference(&xw, &[rows, n], &[1], -1.0, 1.0);
    let want: Vec<C> = (0..rows).flat_map(|r| full[r * n..r * n + half].to_vec()).collect();
    let what = format!("rfft of {rows} x {n}");
    within(&what, &y.to_vec()?, &want, n, norm_x, (n as f64).sqrt())?;
    let mut back = device.upload(&vec![T::from_wide(f64::NAN); rows * n])?;
    irfft(&s, &y, &mut back, spec, FftNorm::Backward)?;
    let back: Vec<Complex<T>> = back.to_vec()?.into_iter().map(|v| Complex::new(v, T::from_wide(0.0))).collect();
    within(&format!("irfft of {what}"), &back, &xw, n, norm_x, 1.0)
}

/// Real transforms of a shape of two or three axes (about `n` elements, at
/// most 2^16) over a random set of its axes ending in the last or another
/// one, against the complex transform kept to the half shape, and the real
/// inverse against the input.
fn real_n_d<B: Backend, T: Real>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let n = ctx.n.clamp(1, 1 << 16);
    let ndim = ctx.rng.random_range(2..=3usize);
    let side = ((n as f64).powf(1.0 / ndim as f64).ceil() as usize).max(1);
    let shape: Vec<usize> = (0..ndim).map(|_| ctx.rng.random_range(1..=side + 1)).collect();
    let mut axes: Vec<usize> = (0..ndim).filter(|_| ctx.rng.random()).collect();
    if axes.is_empty() || ctx.rng.random() {
        axes = (0..ndim).collect(); // rfftn over every axis: one vendor call on CUDA
    }
    let spec = FftShape::new(&shape).along(&axes);
    let (len, half_shape) = (spec.len(), spec.half_shape());
    let half_len: usize = half_shape.iter().product();
    let (xc, _) = random_complex::<T>(ctx, len);
    let x: Vec<T> = xc.iter().map(|c| c.re).collect();
    let xw: Vec<C> = x.iter().map(|v| C::new(v.to_wide(), 0.0)).collect();
    let norm_x = norm2(&xw);
    let points = spec.points();
    let s = device.stream();
    let xb = device.upload(&x)?;
    let mut y = device.upload(&vec![poison::<T>(); half_len])?;
    let norm = random_norm(ctx);
    rfft(&s, &xb, &mut y, spec.clone(), norm)?;
    let scale = norm.scale(points, FftDirection::Forward);
    let full = reference(&xw, &shape, &axes, -1.0, scale);
    let strides = |dims: &[usize]| -> Vec<usize> {
        let mut st = vec![1usize; dims.len()];
        for i in (0..dims.len().saturating_sub(1)).rev() {
            st[i] = st[i + 1] * dims[i + 1];
        }
        st
    };
    let full_strides = strides(&shape);
    let want: Vec<C> = (0..half_len)
        .map(|mut idx| {
            let mut at = 0;
            for d in (0..ndim).rev() {
                at += (idx % half_shape[d]) * full_strides[d];
                idx /= half_shape[d];
            }
            full[at]
        })
        .collect();
    let what = format!("rfftn of {shape:?} along {axes:?}, {}", norm.name());
    within(&what, &y.to_vec()?, &want, points, norm_x, scale * (points as f64).sqrt())?;
    let mut back = device.upload(&vec![T::from_wide(f64::NAN); len])?;
    irfft(&s, &y, &mut back, spec, norm)?;
    let back: Vec<Complex<T>> = back.to_vec()?.into_iter().map(|v| Complex::new(v, T::from_wide(0.0))).collect();
    within(&format!("irfftn of {what}"), &back, &xw, points, norm_x, 1.0)
}

/// Every other column of a `rows x 2 cols` array, transformed down the
/// columns where it lies (strided, batched), through `Array`.
fn strided<B: Backend, T: Real>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let n = ctx.n.clamp(2, 1 << 14);
    let rows = ctx.rng.random_range(1..=((n as f64).sqrt() as usize).max(1));
    let cols = (n / rows).max(1);
    let (x, xw) = random_complex::<T>(ctx, rows * 2 * cols);
    let s = device.stream();
    let a = Array::from_vec(&s, &[rows, 2 * cols], &x)?;
    let view = a.slice(ndarray::s![.., ..;2])?;
    let norm = random_norm(ctx);
    let got = view.fft(0, norm)?;
    let picked: Vec<C> =
        (0..rows).flat_map(|r| (0..cols).map(move |c| (r, c))).map(|(r, c)| xw[r * 2 * cols + 2 * c]).collect();
    let scale = norm.scale(rows, FftDirection::Forward);
    let want = reference(&picked, &[rows, cols], &[0], -1.0, scale);
    within(
        &format!("fft down the even columns of {rows} x {}", 2 * cols),
        &got.to_vec()?,
        &want,
        rows,
        norm2(&picked),
        scale * (rows as f64).sqrt(),
    )
}

/// Bad input is refused naming it, and leaves the output as it was.
fn refusals<B: Backend, T: Real>(device: &Device<B>) -> Result<(), Failure> {
    let s = device.stream();
    let x = device.upload(&[Complex::new(T::from_wide(1.0), T::from_wide(0.0)); 8])?;
    let before = vec![Complex::new(T::from_wide(5.0), T::from_wide(-5.0)); 8];
    let mut y = device.upload(&before)?;
    let expect = |what: &str, r: kiln_core::Result<()>, needle: &str| match r {
        Err(e) if e.to_string().contains(needle) => Ok(()),
        other => Err(Failure::Contract(format!("{what} returned {other:?}, not an error saying \"{needle}\""))),
    };
    expect("fft of length 0", fft(&s, &x, &mut y, FftShape::new(&[0, 8]).along(&[0]), FftNorm::Backward), "length 0")?;
    expect(
        "fft along axis 2 of 2 axes",
        fft(&s, &x, &mut y, FftShape::new(&[2, 4]).along(&[2]), FftNorm::Backward),
        "out of range",
    )?;
    expect(
        "fft along a repeated axis",
        fft(&s, &x, &mut y, FftShape::new(&[2, 4]).along(&[1, 1]), FftNorm::Backward),
        "repeated",
    )?;
    match fft(&s, &x, &mut y, FftShape::new(&[4]), FftNorm::Backward) {
        Err(Error::LengthMismatch { expected: 4, actual: 8, .. }) => {}
        other => return Err(Failure::Contract(format!("fft of 4 points on 8 elements returned {other:?}"))),
    }
    if y.to_vec()? != before {
        return Err(Failure::Contract("a refused fft wrote its output".into()));
    }
    Ok(())
}

/// Add the fft cases to `group`, each on f32 and f64.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    macro_rules! both {
        ($name:literal, $run:ident) => {
            c.one(group, $name, DType::F32, |d, ctx| $run::<B, f32>(d, ctx));
            c.one(group, $name, DType::F64, |d, ctx| $run::<B, f64>(d, ctx));
        };
    }
    both!("fft/c2c", one_d);
    both!("fft/listed_lengths", listed);
    both!("fft/n_d", n_d);
    both!("fft/real", real);
    both!("fft/real_n_d", real_n_d);
    both!("fft/strided", strided);
}
