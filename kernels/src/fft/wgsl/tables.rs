//! The constants a plan's kernels read, computed on the host in f64 and
//! rounded once to the transform's precision: the twiddles of the
//! in-workgroup stages and of the kernels' spans, Bluestein's chirp and
//! the transform of its filter, and the twiddles that fold a half-length
//! complex transform into a real one. Every angle is `2 pi e / n` with the
//! integer `e` reduced mod `n` first (Bluestein's `j^2` mod `2n` in
//! 128-bit arithmetic), so that no angle carries an accumulated error.

use std::collections::HashMap;
use std::f64::consts::FRAC_PI_2;

use kiln_core::Complex;

/// `exp(+-2 pi i e / n)` (`+` for `inverse`), accurate to the last bit of
/// f64 or near: the angle is reduced in integers to its quarter turn and
/// to at most an eighth of a turn from it, so that quarter turns are exact
/// and symmetric angles give symmetric values.
pub(super) fn unit(e: u128, n: u128, inverse: bool) -> Complex<f64> {
    let e = e % n;
    // 4e = q n + r: q quarter turns, then (pi / 2) (r / n).
    let (q, r) = ((4 * e) / n, (4 * e) % n);
    let (c, s) = if 2 * r <= n {
        let phi = FRAC_PI_2 * (r as f64 / n as f64);
        (phi.cos(), phi.sin())
    } else {
        let phi = FRAC_PI_2 * ((n - r) as f64 / n as f64);
        (phi.sin(), phi.cos())
    };
    let (c, s) = match q {
        0 => (c, s),
        1 => (-s, c),
        2 => (-c, -s),
        _ => (s, -c),
    };
    Complex::new(c, if inverse { s } else { -s })
}

/// The span twiddles' split: for kernels of span `l` over lines of `r`,
/// exponents `e < l r` read as `e = hi s + lo` with `s` this power of two
/// near `sqrt(l r)`, from a table of `s` and one of `ceil(l r / s)`.
pub(super) fn span_split(l: usize, r: usize) -> usize {
    let ls = (l * r) as f64;
    (ls.sqrt().ceil() as usize).next_power_of_two()
}

/// A plan's table under construction: offsets into one array of
/// complex f64 values.
#[derive(Default)]
pub(super) struct Builder {
    pub data: Vec<Complex<f64>>,
    subs: HashMap<(Vec<usize>, bool), u32>,
}

impl Builder {
    /// Append `values`; their offset.
    fn push(&mut self, values: impl IntoIterator<Item = Complex<f64>>) -> u32 {
        let at = self.data.len() as u32;
        self.data.extend(values);
        at
    }

    /// The in-workgroup stages' twiddles of a line of `radices` in
    /// direction `inverse`: for each stage after the first (span `L`, the
    /// product of the radices before it, radix `r`), `w_{L r}^{i k}` at
    /// `(i - 1) L + k` for `i` in `1..r`, `k` in `0..L`, the stages one
    /// after another. Made once per plan for each line.
    pub(super) fn sub(&mut self, radices: &[usize], inverse: bool) -> u32 {
        if let Some(&at) = self.subs.get(&(radices.to_vec(), inverse)) {
            return at;
        }
        let at = self.data.len() as u32;
        let mut l = 1usize;
        for &r in radices {
            if l > 1 {
                for i in 1..r {
                    for k in 0..l {
                        self.data.push(unit((i * k) as u128, (l * r) as u128, inverse));
                    }
                }
            }
            l *= r;
        }
        self.subs.insert((radices.to_vec(), inverse), at);
        at
    }

    /// A kernel's span twiddles `w_{l r}^e`, split as [`span_split`] says:
    /// the offsets of the low table and of the high one.
    pub(super) fn span(&mut self, l: usize, r: usize, inverse: bool) -> (u32, u32) {
        let ls = (l * r) as u128;
        let s = span_split(l, r);
        let lo = self.push((0..s as u128).map(|e| unit(e, ls, inverse)));
        let hi = self.push((0..(l * r).div_ceil(s) as u128).map(|h| unit(h * s as u128, ls, inverse)));
        (lo, hi)
    }

    /// Bluestein's chirp for length `n`: `exp(-+ pi i j^2 / n)`, `j < n`
    /// (`-` forward), with `j^2` reduced mod `2n` in integers.
    pub(super) fn chirp(&mut self, n: usize, inverse: bool) -> u32 {
        let n2 = 2 * n as u128;
        self.push((0..n as u128).map(|j| unit((j * j) % n2, n2, inverse)))
    }

    /// The forward length-`m` transform of Bluestein's filter for length
    /// `n` (the conjugate chirp, `b[j] = b[m - j]`, zero between), divided
    /// by `m`, so that the inverse transform after it needs no scaling.
    pub(super) fn filter(&mut self, n: usize, m: usize, inverse: bool) -> u32 {
        let n2 = 2 * n as u128;
        let mut b = vec![Complex::new(0.0, 0.0); m];
        for j in 0..n {
            let w = unit((j as u128 * j as u128) % n2, n2, !inverse);
            b[j] = w;
            if j > 0 {
                b[m - j] = w;
            }
        }
        let f = host_fft(&b);
        let scale = 1.0 / m as f64;
        self.push(f.into_iter().map(|v| v * scale))
    }

    /// The twiddles folding a half-length transform into a real one of
    /// length `n`: `exp(-+2 pi i k / n)`, `k <= n / 2` (`-` for the forward
    /// real-to-complex transform).
    pub(super) fn pack(&mut self, n: usize, inverse: bool) -> u32 {
        self.push((0..=(n / 2) as u128).map(|k| unit(k, n as u128, inverse)))
    }
}

/// The forward DFT of `x` in f64 on the host (mixed radix, recursive over
/// the least prime factor, the twiddles from one table of exact angles);
/// for Bluestein's filter, whose length is smooth.
pub(super) fn host_fft(x: &[Complex<f64>]) -> Vec<Complex<f64>> {
    let n = x.len();
    let table: Vec<Complex<f64>> = (0..n as u128).map(|e| unit(e, n as u128, false)).collect();
    let mut out = vec![Complex::new(0.0, 0.0); n];
    fft_rec(x, 1, &mut out, &table, 1);
    out
}

/// `out` (length `n`) = the DFT of `x[0], x[stride], ...`, whose
/// twiddles `w_n^e` are `table[e tw]`.
fn fft_rec(x: &[Complex<f64>], stride: usize, out: &mut [Complex<f64>], table: &[Complex<f64>], tw: usize) {
    let n = out.len();
    if n == 1 {
        out[0] = x[0];
        return;
    }
    let p = (2..=n).find(|p| n.is_multiple_of(*p)).unwrap_or(n);
    let m = n / p;
    // The p decimated sub-transforms, one after another in `out`.
    for r in 0..p {
        fft_rec(&x[r * stride..], stride * p, &mut out[r * m..(r + 1) * m], table, tw * p);
    }
    let sub = out.to_vec();
    for k in 0..n {
        let mut acc = Complex::new(0.0, 0.0);
        for r in 0..p {
            acc += sub[r * m + k % m] * table[((r * k) % n) * tw];
        }
        out[k] = acc;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_are_exact_at_the_quarters_and_accurate_elsewhere() {
        assert_eq!(unit(0, 8, false), Complex::new(1.0, 0.0));
        assert_eq!(unit(4, 8, false), Complex::new(-1.0, 0.0));
        let q = unit(2, 8, false);
        assert_eq!(q, Complex::new(0.0, -1.0));
        assert_eq!(unit(3, 4, true), Complex::new(0.0, -1.0));
        let w = unit(1, 12, true);
        assert!((w.re - 0.75f64.sqrt()).abs() < 2e-16 && (w.im - 0.5).abs() < 2e-16);
        // A huge exponent reduces exactly.
        let big = unit((1u128 << 80) + 3, 1 << 40, false);
        assert!((big - unit(3, 1 << 40, false)).norm() < 1e-18);
    }

    #[test]
    fn the_host_fft_matches_the_definition() {
        for n in [1usize, 2, 3, 12, 30, 64, 7 * 8] {
            let x: Vec<Complex<f64>> = (0..n).map(|i| Complex::new((i as f64).sin(), (i as f64 * 0.3).cos())).collect();
            let got = host_fft(&x);
            for (k, g) in got.iter().enumerate() {
                let want: Complex<f64> =
                    x.iter().enumerate().map(|(j, v)| v * unit((j * k) as u128, n as u128, false)).sum();
                assert!((g - want).norm() < 1e-12 * n as f64, "n {n} k {k}");
            }
        }
    }
}
