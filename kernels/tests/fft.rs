//! FFTs on the CPU backend against a direct DFT computed in f64: every
//! length class (powers of two, small primes, a large prime), batches,
//! 2-D and 3-D shapes, a middle axis, real transforms, the three
//! normalisations, and bad input.

use kiln_core::{Complex, Device, Error};
use kiln_cpu::Cpu;
use kiln_kernels::fft::{FftNorm, FftShape, fft, ifft, irfft, rfft};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

type C64 = Complex<f64>;

/// The DFT of `x` along `axis` of `shape` (row-major), in f64.
fn dft_axis(x: &[C64], shape: &[usize], axis: usize, sign: f64) -> Vec<C64> {
    let n = shape[axis];
    let inner: usize = shape[axis + 1..].iter().product();
    let outer: usize = shape[..axis].iter().product();
    let mut y = vec![C64::default(); x.len()];
    for o in 0..outer {
        for i in 0..inner {
            for k in 0..n {
                let mut acc = C64::default();
                for j in 0..n {
                    let angle = sign * 2.0 * std::f64::consts::PI * ((j * k) % n) as f64 / n as f64;
                    acc += x[o * n * inner + j * inner + i] * C64::new(angle.cos(), angle.sin());
                }
                y[o * n * inner + k * inner + i] = acc;
            }
        }
    }
    y
}

fn dft(x: &[C64], shape: &[usize], axes: &[usize], sign: f64, scale: f64) -> Vec<C64> {
    let mut y = x.to_vec();
    for &a in axes {
        y = dft_axis(&y, shape, a, sign);
    }
    y.iter().map(|v| v * scale).collect()
}

fn random(n: usize, seed: u64) -> Vec<C64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| C64::new(rng.random_range(-1.0..1.0), rng.random_range(-1.0..1.0))).collect()
}

/// `|got - want|` within `c log2(n) eps ||x||_2` per element.
fn assert_close(got: &[Complex<f32>], want: &[C64], points: usize, norm_x: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}");
    let bound = 8.0 * (points.max(2) as f64).log2() * f32::EPSILON as f64 * norm_x.max(1e-30) + 1e-30;
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let err = ((g.re as f64 - w.re).powi(2) + (g.im as f64 - w.im).powi(2)).sqrt();
        assert!(err <= bound, "{what}: element {i}: got {g}, want {w} (error {err:e}, bound {bound:e})");
    }
}

fn cases() -> Vec<(Vec<usize>, Vec<usize>)> {
    let mut c: Vec<(Vec<usize>, Vec<usize>)> =
        [1usize, 2, 3, 5, 7, 8, 16, 17, 31, 64, 97, 127, 128, 1000].iter().map(|&n| (vec![n], vec![0])).collect();
    c.push((vec![3, 12], vec![1]));
    c.push((vec![6, 10], vec![0, 1]));
    c.push((vec![5, 6, 7], vec![1]));
    c.push((vec![4, 6, 5], vec![0, 1, 2]));
    c.push((vec![3, 8, 9], vec![2, 0]));
    c
}

#[test]
fn complex_transforms_match_a_direct_dft() {
    let s = Device::<Cpu>::open(0).unwrap().stream();
    for (shape, axes) in cases() {
        let len: usize = shape.iter().product();
        let x64 = random(len, len as u64);
        let x32: Vec<Complex<f32>> = x64.iter().map(|v| Complex::new(v.re as f32, v.im as f32)).collect();
        let xr: Vec<C64> = x32.iter().map(|v| C64::new(v.re as f64, v.im as f64)).collect();
        let norm_x = xr.iter().map(|v| v.norm_sqr()).sum::<f64>().sqrt();
        let points: usize = axes.iter().map(|&a| shape[a]).product();
        let x = s.upload(&x32).unwrap();
        for norm in [FftNorm::Backward, FftNorm::Ortho, FftNorm::Forward] {
            let fs = FftShape::new(&shape).along(&axes);
            let mut y = s.upload(&vec![Complex::new(f32::NAN, f32::NAN); len]).unwrap();
            fft(&s, &x, &mut y, fs.clone(), norm).unwrap();
            let scale = norm.scale(points, kiln_kernels::fft::FftDirection::Forward);
            let want = dft(&xr, &shape, &axes, -1.0, scale);
            assert_close(
                &y.to_vec().unwrap(),
                &want,
                points,
                norm_x * scale * (points as f64).sqrt(),
                &format!("fft {shape:?} {axes:?} {norm:?}"),
            );
            let mut z = s.upload(&vec![Complex::new(f32::NAN, f32::NAN); len]).unwrap();
            ifft(&s, &x, &mut z, fs, norm).unwrap();
            let scale = norm.scale(points, kiln_kernels::fft::FftDirection::Inverse);
            let want = dft(&xr, &shape, &axes, 1.0, scale);
            assert_close(
                &z.to_vec().unwrap(),
                &want,
                points,
                norm_x * scale * (points as f64).sqrt(),
                &format!("ifft {shape:?} {axes:?} {norm:?}"),
            );
        }
    }
}

#[test]
fn real_transforms_agree_with_the_complex_ones_and_invert() {
    let s = Device::<Cpu>::open(0).unwrap().stream();
    for (shape, axes) in cases() {
        let fs = FftShape::new(&shape).along(&axes);
        let len = fs.len();
        let half = fs.half_shape();
        let half_len: usize = half.iter().product();
        let xr: Vec<f32> = random(len, 7 + len as u64).iter().map(|v| v.re as f32).collect();
        let x = s.upload(&xr).unwrap();
        let mut y = s.upload(&vec![Complex::new(f32::NAN, f32::NAN); half_len]).unwrap();
        rfft(&s, &x, &mut y, fs.clone(), FftNorm::Backward).unwrap();
        // The complex transform of the same reals, kept to the half shape.
        let xc: Vec<C64> = xr.iter().map(|&v| C64::new(v as f64, 0.0)).collect();
        let full = dft(&xc, &shape, &axes, -1.0, 1.0);
        let last = *axes.last().unwrap();
        let full_strides = strides(&shape);
        let mut want = Vec::with_capacity(half_len);
        for idx in 0..half_len {
            let mut rem = idx;
            let mut at = 0;
            for d in (0..shape.len()).rev() {
                let i = rem % half[d];
                rem /= half[d];
                at += i * full_strides[d];
            }
            want.push(full[at]);
        }
        let norm_x = xc.iter().map(|v| v.norm_sqr()).sum::<f64>().sqrt();
        let points = fs.points();
        assert_close(
            &y.to_vec().unwrap(),
            &want,
            points,
            norm_x * (points as f64).sqrt(),
            &format!("rfft {shape:?} {axes:?}"),
        );
        let mut back = s.upload(&vec![f32::NAN; len]).unwrap();
        irfft(&s, &y, &mut back, fs.clone(), FftNorm::Backward).unwrap();
        let back: Vec<Complex<f32>> = back.to_vec().unwrap().into_iter().map(|v| Complex::new(v, 0.0)).collect();
        assert_close(&back, &xc, points, norm_x, &format!("irfft(rfft) {shape:?} {axes:?} (real axis {last})"));
    }
}

fn strides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

#[test]
fn bad_input_is_an_error_naming_it_and_leaves_the_output() {
    let s = Device::<Cpu>::open(0).unwrap().stream();
    let x = s.upload(&[Complex::new(1.0f32, 0.0); 8]).unwrap();
    let mut y = s.upload(&[Complex::new(5.0f32, 5.0); 8]).unwrap();
    let err = fft(&s, &x, &mut y, FftShape::new(&[4]), FftNorm::Backward).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { expected: 4, actual: 8, .. }), "{err}");
    let err = fft(&s, &x, &mut y, FftShape::new(&[2, 4]).along(&[2]), FftNorm::Backward).unwrap_err();
    assert!(err.to_string().contains("axis 2 is out of range"), "{err}");
    let mut short = s.alloc::<Complex<f32>>(4).unwrap();
    let err =
        rfft(&s, &s.upload(&[1.0f32; 8]).unwrap(), &mut short, FftShape::new(&[8]), FftNorm::Backward).unwrap_err();
    assert!(matches!(err, Error::LengthMismatch { expected: 5, actual: 4, .. }), "{err}");
    assert_eq!(y.to_vec().unwrap(), vec![Complex::new(5.0f32, 5.0); 8]);
}

#[test]
fn f64_transforms_are_accurate_to_f64() {
    let s = Device::<Cpu>::open(0).unwrap().stream();
    let n = 1009; // a prime
    let x64 = random(n, 3);
    let x = s.upload(&x64).unwrap();
    let mut y = s.alloc::<C64>(n).unwrap();
    fft(&s, &x, &mut y, FftShape::new(&[n]), FftNorm::Backward).unwrap();
    let want = dft(&x64, &[n], &[0], -1.0, 1.0);
    let norm_x = x64.iter().map(|v| v.norm_sqr()).sum::<f64>().sqrt();
    for (g, w) in y.to_vec().unwrap().iter().zip(&want) {
        assert!((g - w).norm() < 1e-12 * norm_x * (n as f64).sqrt(), "{g} vs {w}");
    }
}

#[test]
fn arrays_transform_strided_views_in_place_and_shift() {
    use kiln_kernels::array::Array;
    use ndarray::s;
    let st = Device::<Cpu>::open(0).unwrap().stream();
    let (rows, cols) = (6usize, 10usize);
    let x64 = random(rows * cols, 11);
    let x32: Vec<Complex<f32>> = x64.iter().map(|v| Complex::new(v.re as f32, v.im as f32)).collect();
    let xr: Vec<C64> = x32.iter().map(|v| C64::new(v.re as f64, v.im as f64)).collect();
    let a = Array::from_vec(&st, &[rows, cols], &x32).unwrap();
    // Every other column, transformed down the columns (a strided view, not copied).
    let view = a.slice(s![.., ..;2]).unwrap();
    let got = view.fft(0, FftNorm::Backward).unwrap();
    assert_eq!(got.shape(), &[rows, cols / 2]);
    let picked: Vec<C64> =
        (0..rows).flat_map(|r| (0..cols / 2).map(move |c| (r, c))).map(|(r, c)| xr[r * cols + 2 * c]).collect();
    let want = dft(&picked, &[rows, cols / 2], &[0], -1.0, 1.0);
    let norm = picked.iter().map(|v| v.norm_sqr()).sum::<f64>().sqrt();
    assert_close(&got.to_vec().unwrap(), &want, rows, norm * (rows as f64).sqrt(), "strided columns");
    // The transposed array's 2-D transform is the transpose of the 2-D transform.
    let t = a.t().fft2(FftNorm::Ortho).unwrap();
    let full = dft(&xr, &[rows, cols], &[0, 1], -1.0, 1.0 / ((rows * cols) as f64).sqrt());
    let transposed: Vec<C64> =
        (0..cols).flat_map(|c| (0..rows).map(move |r| (r, c))).map(|(r, c)| full[r * cols + c]).collect();
    let norm = xr.iter().map(|v| v.norm_sqr()).sum::<f64>().sqrt();
    assert_close(&t.to_vec().unwrap(), &transposed, rows * cols, norm, "fft2 of a transpose");
    // Rows in reverse order (a negative stride: copied to row-major first).
    let reversed = a.slice(s![..;-1, ..]).unwrap().fft(1, FftNorm::Backward).unwrap().to_vec().unwrap();
    let rows_fft = dft(&xr, &[rows, cols], &[1], -1.0, 1.0);
    let want: Vec<C64> = (0..rows).rev().flat_map(|r| rows_fft[r * cols..(r + 1) * cols].to_vec()).collect();
    assert_close(&reversed, &want, cols, norm * (cols as f64).sqrt(), "reversed rows");
    // A broadcast row (stride 0 down the columns) and a single row (an axis of one index).
    let row = Array::from_vec(&st, &[cols], &x32[..cols]).unwrap();
    let wide = row.broadcast_to(&[3, cols]).unwrap().fft(0, FftNorm::Backward).unwrap().to_vec().unwrap();
    for (i, v) in wide.iter().enumerate() {
        let want = if i < cols { x32[i] * 3.0 } else { Complex::new(0.0, 0.0) };
        assert!((v - want).norm() < 1e-5, "broadcast: {i}: {v} vs {want}");
    }
    let one = a.slice(s![2..3, ..]).unwrap().fft(0, FftNorm::Backward).unwrap().to_vec().unwrap();
    assert_eq!(one, x32[2 * cols..3 * cols].to_vec());
    // Real transforms of a 2-D array, and back.
    let re: Vec<f32> = x32.iter().map(|v| v.re).collect();
    let r = Array::from_vec(&st, &[rows, cols], &re).unwrap();
    let f = r.rfftn(&[0, 1], FftNorm::Backward).unwrap();
    assert_eq!(f.shape(), &[rows, cols / 2 + 1]);
    let back = f.irfftn(&[0, 1], cols, FftNorm::Backward).unwrap().to_vec().unwrap();
    for (g, w) in back.iter().zip(&re) {
        assert!((g - w).abs() < 1e-5, "{g} vs {w}");
    }
    assert!(f.irfft(cols + 3, 1, FftNorm::Backward).is_err());
    // fftshift rolls each axis by half its length; ifftshift undoes it.
    let shifted = a.fftshift(&[0, 1]).unwrap().to_vec().unwrap();
    for r0 in 0..rows {
        for c0 in 0..cols {
            let (r1, c1) = ((r0 + rows / 2) % rows, (c0 + cols / 2) % cols);
            assert_eq!(shifted[r1 * cols + c1], x32[r0 * cols + c0]);
        }
    }
    let odd = Array::from_vec(&st, &[5], &[0i32, 1, 2, 3, 4]).unwrap();
    assert_eq!(odd.fftshift(&[0]).unwrap().to_vec().unwrap(), [3, 4, 0, 1, 2]);
    assert_eq!(odd.ifftshift(&[0]).unwrap().to_vec().unwrap(), [2, 3, 4, 0, 1]);
    assert!(odd.fftshift(&[1]).is_err());
    let freq = Array::<_, f64>::fftfreq(&st, 8, 0.5).unwrap().to_vec().unwrap();
    assert_eq!(freq, [0.0, 0.25, 0.5, 0.75, -1.0, -0.75, -0.5, -0.25]);
}
