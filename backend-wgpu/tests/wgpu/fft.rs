//! kiln's own FFT kernels (WGSL) against transforms computed on the host
//! in f64: a direct DFT for short lengths, rustfft's for long ones. Inputs
//! are seeded and random, outputs filled with NaN first, and every element
//! must lie within `C log2(n) eps |x|` of the reference (`|x|` the input's
//! 2-norm, `eps` the precision's). Lengths cover one kernel (radix 2 to 16,
//! 3, 5, 7), several kernels through scratch (2^16, 2^20), Bluestein
//! (17, 31, 97, 127, 10007, twice a prime), real transforms of even and
//! odd lengths, batches over two dimensions with strided inputs, and both
//! directions and precisions.

use std::f64::consts::PI;

use kiln_core::{Complex, DType, Device, Element, Error, Stream};
use kiln_kernels::fft::{fft, ifft, irfft, rfft, FftFloat, FftNorm, FftShape};
use kiln_wgpu::{Optional, Wgpu};
use rand::Rng;
use rustfft::FftPlanner;

use crate::common::{device, rng};

type C64 = Complex<f64>;

/// The errors allowed, in units of `log2(n) eps |x|`.
const C: f64 = 6.0;

/// The lengths of the short tests, each in both precisions and directions.
const SHORT: &[usize] = &[1, 2, 3, 5, 7, 8, 16, 17, 31, 64, 97, 127, 128, 1000, 1024, 4096];

/// `exp(+-2 pi i e / n)` with `e` reduced first.
fn unit(e: usize, n: usize, inverse: bool) -> C64 {
    let a = 2.0 * PI * ((e % n) as f64 / n as f64);
    C64::new(a.cos(), if inverse { a.sin() } else { -a.sin() })
}

/// The DFT of `x` in f64: directly for short lengths (compensated sums,
/// so that the reference's own error stays near one rounding of the
/// largest terms), by rustfft for long ones.
fn dft(x: &[C64], inverse: bool) -> Vec<C64> {
    let n = x.len();
    if n > 4096 {
        let mut planner = FftPlanner::<f64>::new();
        let plan = if inverse { planner.plan_fft_inverse(n) } else { planner.plan_fft_forward(n) };
        let mut y = x.to_vec();
        plan.process(&mut y);
        return y;
    }
    let w: Vec<C64> = (0..n).map(|e| unit(e, n, inverse)).collect();
    (0..n)
        .map(|k| {
            let (mut re, mut im) = (Neumaier::default(), Neumaier::default());
            for (j, v) in x.iter().enumerate() {
                let p = v * w[(j * k) % n];
                re.add(p.re);
                im.add(p.im);
            }
            C64::new(re.sum(), im.sum())
        })
        .collect()
}

/// Neumaier's compensated sum.
#[derive(Default)]
struct Neumaier {
    sum: f64,
    carry: f64,
}

impl Neumaier {
    fn add(&mut self, v: f64) {
        let t = self.sum + v;
        self.carry += if self.sum.abs() >= v.abs() { (self.sum - t) + v } else { (v - t) + self.sum };
        self.sum = t;
    }

    fn sum(&self) -> f64 {
        self.sum + self.carry
    }
}

/// The offsets of the lines along `axis` of a row-major array of `shape`:
/// each line's first element, and the stride along the axis.
fn lines(shape: &[usize], axis: usize) -> (Vec<usize>, usize) {
    let stride: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let starts = (0..outer).flat_map(|o| (0..stride).map(move |i| o * shape[axis] * stride + i)).collect();
    (starts, stride)
}

fn eps<T: FftFloat>() -> f64 {
    if T::DTYPE == DType::F64 {
        f64::EPSILON
    } else {
        f64::from(f32::EPSILON)
    }
}

fn norm(x: impl Iterator<Item = f64>) -> f64 {
    x.map(|v| v * v).sum::<f64>().sqrt()
}

/// The device, with f64 where `T` is f64; `None` (after a note) where the
/// device lacks it.
fn device_for<T: FftFloat>() -> Option<Device<Wgpu>> {
    let d = device()?;
    if T::DTYPE == DType::F64 && !d.info().features.f64 {
        eprintln!("skipped: {} has no f64", d.info().name);
        return None;
    }
    Some(d)
}

fn upload<T: FftFloat>(s: &Stream<Wgpu>, x: &[C64]) -> kiln_core::Buffer<Wgpu, Complex<T>> {
    let v: Vec<Complex<T>> = x.iter().map(|c| Complex::new(T::from_wide(c.re), T::from_wide(c.im))).collect();
    s.upload(&v).unwrap()
}

fn download<T: FftFloat>(b: &kiln_core::Buffer<Wgpu, Complex<T>>) -> Vec<C64> {
    b.to_vec().unwrap().into_iter().map(|c| C64::new(c.re.to_wide(), c.im.to_wide())).collect()
}

/// A buffer of `len` NaNs.
fn poisoned<E: Element>(s: &Stream<Wgpu>, len: usize, nan: E) -> kiln_core::Buffer<Wgpu, E> {
    s.upload(&vec![nan; len]).unwrap()
}

/// Random complex values in the unit square, rounded to `T`.
fn random_complex<T: FftFloat>(r: &mut impl Rng, len: usize) -> Vec<C64> {
    (0..len)
        .map(|_| {
            let c = C64::new(r.random_range(-1.0..1.0), r.random_range(-1.0..1.0));
            C64::new(T::from_wide(c.re).to_wide(), T::from_wide(c.im).to_wide())
        })
        .collect()
}

/// Assert every element of `got` is within `C log2(n) eps |x| scale` of `want`.
#[track_caller]
fn check<T: FftFloat>(got: &[C64], want: &[C64], n: usize, xnorm: f64, scale: f64, what: &str) -> f64 {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let bound = C * (n as f64).log2().max(1.0) * eps::<T>() * xnorm * scale;
    let mut worst = 0.0f64;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let e = (g - w).norm();
        assert!(e <= bound, "{what}: element {i} is {g}, want {w} (error {e:e}, bound {bound:e})");
        worst = worst.max(e);
    }
    worst / (bound / C)
}

/// Complex transforms of an array of `shape` along `axis`, forward then
/// inverse (normalised), against the host's, in precision `T`.
fn complex_case<T: FftFloat>(s: &Stream<Wgpu>, shape: &[usize], axis: usize, seed: u64) {
    let mut r = rng(seed);
    let len: usize = shape.iter().product();
    let n = shape[axis];
    let x = random_complex::<T>(&mut r, len);
    let (starts, stride) = lines(shape, axis);
    let xb = upload::<T>(s, &x);
    for inverse in [false, true] {
        let what = format!("{} {} of {shape:?} along {axis}", T::DTYPE, if inverse { "ifft" } else { "fft" });
        let nan = Complex::new(T::from_wide(f64::NAN), T::from_wide(f64::NAN));
        let mut y = poisoned(s, len, nan);
        let fs = FftShape::new(shape).along(&[axis]);
        if inverse {
            ifft(s, &xb, &mut y, fs, FftNorm::Backward).unwrap();
        } else {
            fft(s, &xb, &mut y, fs, FftNorm::Backward).unwrap();
        }
        let got = download::<T>(&y);
        let scale = if inverse { 1.0 / n as f64 } else { 1.0 };
        let mut worst = 0.0f64;
        for &start in &starts {
            let line: Vec<C64> = (0..n).map(|j| x[start + j * stride]).collect();
            let want: Vec<C64> = dft(&line, inverse).into_iter().map(|v| v * scale).collect();
            let g: Vec<C64> = (0..n).map(|k| got[start + k * stride]).collect();
            let xn = norm(line.iter().flat_map(|c| [c.re, c.im]));
            worst = worst.max(check::<T>(&g, &want, n, xn, scale, &what));
        }
        eprintln!("{what}: worst error {worst:.3} log2(n) eps |x|");
    }
}

/// Real transforms of an array of `shape` along `axis`: rfft against the
/// host's, irfft of a random half spectrum (its ignored imaginary parts
/// set) against the host's, and irfft(rfft(x)) against x.
fn real_case<T: FftFloat>(s: &Stream<Wgpu>, shape: &[usize], axis: usize, seed: u64) {
    let mut r = rng(seed);
    let n = shape[axis];
    let h = n / 2 + 1;
    let len: usize = shape.iter().product();
    let mut half_shape = shape.to_vec();
    half_shape[axis] = h;
    let half_len: usize = half_shape.iter().product();
    let x: Vec<f64> = (0..len).map(|_| T::from_wide(r.random_range(-1.0..1.0)).to_wide()).collect();
    let xv: Vec<T> = x.iter().map(|&v| T::from_wide(v)).collect();
    let xb = s.upload(&xv).unwrap();
    let fs = FftShape::new(shape).along(&[axis]);
    let cnan = Complex::new(T::from_wide(f64::NAN), T::from_wide(f64::NAN));

    // rfft.
    let what = format!("{} rfft of {shape:?} along {axis}", T::DTYPE);
    let mut y = poisoned(s, half_len, cnan);
    rfft(s, &xb, &mut y, fs.clone(), FftNorm::Backward).unwrap();
    let got = download::<T>(&y);
    let (starts, stride) = lines(shape, axis);
    let (hstarts, hstride) = lines(&half_shape, axis);
    let mut worst = 0.0f64;
    for (&a, &b) in starts.iter().zip(&hstarts) {
        let line: Vec<C64> = (0..n).map(|j| C64::new(x[a + j * stride], 0.0)).collect();
        let want = &dft(&line, false)[..h];
        let g: Vec<C64> = (0..h).map(|k| got[b + k * hstride]).collect();
        let xn = norm(line.iter().map(|c| c.re));
        worst = worst.max(check::<T>(&g, want, n, xn, 1.0, &what));
    }
    eprintln!("{what}: worst error {worst:.3} log2(n) eps |x|");

    // irfft of a random half spectrum: the imaginary parts of bin 0 and
    // (even n) bin n/2 are ignored.
    let what = format!("{} irfft of {shape:?} along {axis}", T::DTYPE);
    let spec = random_complex::<T>(&mut r, half_len);
    let sb = upload::<T>(s, &spec);
    let mut z = poisoned(s, len, T::from_wide(f64::NAN));
    irfft(s, &sb, &mut z, fs.clone(), FftNorm::Backward).unwrap();
    let got: Vec<f64> = z.to_vec().unwrap().into_iter().map(|v| v.to_wide()).collect();
    let mut worst = 0.0f64;
    for (&a, &b) in starts.iter().zip(&hstarts) {
        let mut full: Vec<C64> =
            (0..n).map(|k| if k < h { spec[b + k * hstride] } else { spec[b + (n - k) * hstride].conj() }).collect();
        full[0].im = 0.0;
        if n.is_multiple_of(2) {
            full[n / 2].im = 0.0;
        }
        let want: Vec<C64> = dft(&full, true).into_iter().map(|v| C64::new(v.re / n as f64, 0.0)).collect();
        let g: Vec<C64> = (0..n).map(|j| C64::new(got[a + j * stride], 0.0)).collect();
        let xn = norm(full.iter().flat_map(|c| [c.re, c.im]));
        worst = worst.max(check::<T>(&g, &want, n, xn, 1.0 / n as f64, &what));
    }
    eprintln!("{what}: worst error {worst:.3} log2(n) eps |x|");

    // The round trip.
    let what = format!("{} irfft(rfft) of {shape:?} along {axis}", T::DTYPE);
    let mut back = poisoned(s, len, T::from_wide(f64::NAN));
    irfft(s, &y, &mut back, fs, FftNorm::Backward).unwrap();
    let got: Vec<C64> = back.to_vec().unwrap().into_iter().map(|v| C64::new(v.to_wide(), 0.0)).collect();
    let want: Vec<C64> = x.iter().map(|&v| C64::new(v, 0.0)).collect();
    for &a in &starts {
        let g: Vec<C64> = (0..n).map(|j| got[a + j * stride]).collect();
        let w: Vec<C64> = (0..n).map(|j| want[a + j * stride]).collect();
        let xn = norm(w.iter().map(|c| c.re));
        check::<T>(&g, &w, n, xn, 2.0 / (n as f64).sqrt().max(1.0), &what);
    }
}

fn short_complex<T: FftFloat>() {
    let Some(d) = device_for::<T>() else { return };
    let s = d.stream();
    for (i, &n) in SHORT.iter().enumerate() {
        complex_case::<T>(&s, &[3, n], 1, 100 + i as u64);
    }
}

#[test]
fn complex_transforms_of_short_lengths_f32() {
    short_complex::<f32>();
}

#[test]
fn complex_transforms_of_short_lengths_f64() {
    short_complex::<f64>();
}

#[test]
fn complex_transforms_of_long_lengths() {
    let Some(d) = device_for::<f32>() else { return };
    let s = d.stream();
    // Several kernels through scratch: 256 x 256, and 128 x 128 x 64 (or
    // 1024 x 1024 where workgroup memory holds 48 KiB); Bluestein over a
    // padded length of several kernels.
    complex_case::<f32>(&s, &[1 << 16], 0, 200);
    complex_case::<f32>(&s, &[1 << 20], 0, 201);
    complex_case::<f32>(&s, &[2, 10007], 1, 202);
    complex_case::<f32>(&s, &[3 * 5 * 7 * 64], 0, 203);
    if d.info().features.f64 {
        complex_case::<f64>(&s, &[1 << 16], 0, 204);
        complex_case::<f64>(&s, &[10007], 0, 205);
        complex_case::<f64>(&s, &[100003], 0, 206);
    }
}

#[test]
fn batched_and_strided_complex_transforms() {
    let Some(d) = device_for::<f32>() else { return };
    let s = d.stream();
    // Along the middle axis: input stride 5, two batch dimensions (5 and 3).
    for (i, &n) in [1usize, 8, 97, 1000, 4096, 1 << 16].iter().enumerate() {
        complex_case::<f32>(&s, &[3, n, 5], 1, 300 + i as u64);
    }
    // Along the first axis: columns, many lines a workgroup.
    complex_case::<f32>(&s, &[64, 33], 0, 310);
    complex_case::<f32>(&s, &[1000, 9], 0, 311);
    complex_case::<f32>(&s, &[127, 7], 0, 312);
    // Many short transforms; where a binding holds them, more workgroups
    // than one row of the grid (65535) takes.
    complex_case::<f32>(&s, &[70000, 4], 1, 313);
    let bytes = 9_000_000 * 2 * size_of::<Complex<f32>>();
    if d.info().limits.max_binding_bytes >= bytes as u64 {
        complex_case::<f32>(&s, &[9_000_000, 2], 1, 314);
    }
    if d.info().features.f64 {
        complex_case::<f64>(&s, &[3, 97, 5], 1, 320);
        complex_case::<f64>(&s, &[2, 4096, 3], 1, 321);
    }
}

fn real_lengths<T: FftFloat>(lengths: &[usize], seed: u64) {
    let Some(d) = device_for::<T>() else { return };
    let s = d.stream();
    for (i, &n) in lengths.iter().enumerate() {
        real_case::<T>(&s, &[2, n], 1, seed + i as u64);
    }
}

#[test]
fn real_transforms_f32() {
    let mut lengths: Vec<usize> = (1..=8).collect();
    lengths.extend([9, 16, 17, 31, 64, 97, 127, 128, 1000, 1024, 4096, 8192, 1 << 16, 10007, 2 * 10007]);
    real_lengths::<f32>(&lengths, 400);
}

#[test]
fn real_transforms_f64() {
    real_lengths::<f64>(&[1, 2, 3, 4, 5, 16, 17, 97, 128, 1000, 4096, 8192, 1 << 14, 2 * 1009], 500);
}

#[test]
fn batched_and_strided_real_transforms() {
    let Some(d) = device_for::<f32>() else { return };
    let s = d.stream();
    for (i, &n) in [2usize, 7, 64, 97, 1000, 1 << 14, 2 * 127].iter().enumerate() {
        real_case::<f32>(&s, &[3, n, 5], 1, 600 + i as u64);
    }
    real_case::<f32>(&s, &[4, 100, 6], 1, 610);
}

#[test]
fn f64_transforms_need_f64_on_the_device() {
    let d = match Wgpu::open_without(0, &[Optional::F64]) {
        Ok(d) => d,
        Err(e @ (Error::BackendUnavailable { .. } | Error::DeviceNotFound { .. })) => {
            eprintln!("skipped: {e}");
            return;
        }
        Err(e) => panic!("opening the wgpu device without f64 failed: {e}"),
    };
    let s = d.stream();
    let x = s.upload(&[Complex::new(1.0f64, 0.0); 8]).unwrap();
    let mut y = s.alloc::<Complex<f64>>(8).unwrap();
    let e = fft(&s, &x, &mut y, FftShape::new(&[8]), FftNorm::Backward).unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }) && e.to_string().contains("f64"), "{e}");
}
