//! Standard normal values from Philox words by the Box-Muller transform,
//! written so that every backend computes the same bits.
//!
//! Two words give two normals: `r = sqrt(-2 ln u)` from the first, the
//! angle `2 pi v` from the second, and `(r cos, r sin)`. The logarithm,
//! square root, sine and cosine are kiln's own: the argument is reduced
//! with integer operations, the functions are polynomials evaluated by
//! Horner's rule, and the square root is Newton's iteration from an
//! integer first guess. Only operations IEEE 754 rounds exactly are used
//! (`+`, `*`, exact conversions), each rounded on its own, so no compiler
//! may contract or reassociate them: CUDA uses the `__fmul_rn` and
//! `__fadd_rn` intrinsics, the CPU Rust's arithmetic (never fused). The
//! functions are accurate to about an ulp (`f32`: a degree-9
//! polynomial for `ln(1+t)/t`, error 5e-9; `f64`: degree 19, 6e-17; Taylor
//! series of sine and cosine to below half an ulp).
//!
//! - `f32`: `u = (a | 1) * 2^-32` (odd multiples of 2^-32, so `u` is never
//!   0 and `|z| <= 6.66`, as cuRAND's), the angle `2 pi b 2^-32`; `u - 1`
//!   and the angle within its quadrant are cut to 24 significant bits.
//! - `f64`: `u` from the 64 bits of two words the same way (`|z| <= 9.42`),
//!   the angle from the other two; cut to 53 significant bits.

/// `ln(1+t)/t` on `[sqrt(1/2) - 1, sqrt(2) - 1]`, lowest power first
/// (Chebyshev fit; `f32` relative error 5.4e-9).
pub(crate) const LN_F32: [f32; 10] = [
    f32::from_bits(0x3f800000),
    f32::from_bits(0xbefffffc),
    f32::from_bits(0x3eaaaaaf),
    f32::from_bits(0xbe800212),
    f32::from_bits(0x3e4ccf43),
    f32::from_bits(0xbe2a11d8),
    f32::from_bits(0x3e116788),
    f32::from_bits(0xbe07d81b),
    f32::from_bits(0x3e0323c3),
    f32::from_bits(0xbd9899ad),
];

/// The same for `f64` (relative error 6.4e-17).
pub(crate) const LN_F64: [f64; 20] = [
    1.0,
    -0.499_999_999_999_999_2,
    0.333_333_333_333_259_1,
    -0.250_000_000_000_335_95,
    0.200_000_000_020_569_25,
    -0.166_666_666_634_914_7,
    0.142_857_140_651_980_32,
    -0.124_999_999_968_139_93,
    0.111_111_229_285_474_65,
    -0.100_000_127_998_036_08,
    0.090_905_588_635_650_67,
    -0.083_326_497_130_038_6,
    0.076_981_390_596_095_8,
    -0.071_593_077_630_025_2,
    0.066_169_161_037_298_39,
    -0.060_449_322_486_518_76,
    0.060_023_626_245_968_1,
    -0.067_934_849_252_535_36,
    0.062_497_443_299_152_1,
    -0.027_579_154_885_274_428,
];

/// `sin(pi g / 2) / g` in powers of `g^2` (Taylor).
pub(crate) const SIN_F32: [f32; 5] = [
    f32::from_bits(0x3fc90fdb),
    f32::from_bits(0xbf255de7),
    f32::from_bits(0x3da335e3),
    f32::from_bits(0xbb996966),
    f32::from_bits(0x39283c1a),
];
/// `cos(pi g / 2)` in powers of `g^2` (Taylor).
pub(crate) const COS_F32: [f32; 6] = [
    f32::from_bits(0x3f800000),
    f32::from_bits(0xbf9de9e6),
    f32::from_bits(0x3e81e0f8),
    f32::from_bits(0xbcaae9e4),
    f32::from_bits(0x3a70fa83),
    f32::from_bits(0xb7d368f9),
];
/// `sin(pi g / 2) / g` in powers of `g^2`, `f64`.
pub(crate) const SIN_F64: [f64; 9] = [
    std::f64::consts::FRAC_PI_2,
    -0.645_964_097_506_246_3,
    0.079_692_626_246_167_05,
    -0.004_681_754_135_318_688,
    0.000_160_441_184_787_359_83,
    -3.598_843_235_212_085e-6,
    5.692_172_921_967_927e-8,
    -6.688_035_109_811_468e-10,
    6.066_935_731_106_195_5e-12,
];
/// `cos(pi g / 2)` in powers of `g^2`, `f64`.
pub(crate) const COS_F64: [f64; 10] = [
    1.0,
    -1.233_700_550_136_169_7,
    0.253_669_507_901_048_03,
    -0.020_863_480_763_352_96,
    0.000_919_260_274_839_426_6,
    -2.520_204_237_306_060_7e-5,
    4.710_874_778_818_172e-7,
    -6.386_603_083_791_852e-9,
    6.565_963_114_979_473e-11,
    -5.294_400_200_734_623e-13,
];

/// `ln 2` split so that `k * LN2_HI` is exact for `|k| <= 64`.
pub(crate) const LN2_HI_F32: f32 = f32::from_bits(0x3f317200);
pub(crate) const LN2_LO_F32: f32 = f32::from_bits(0x35bfbe8e);
pub(crate) const LN2_HI_F64: f64 = 0.693_147_180_559_208_2;
pub(crate) const LN2_LO_F64: f64 = 7.371_002_565_167_799e-13;

/// The largest 32-bit mantissa (`[2^31, 2^32)`) at or below `sqrt(2) 2^31`.
pub(crate) const SQRT2_Q31: u32 = 3_037_000_499;
/// The largest 64-bit mantissa at or below `sqrt(2) 2^63`.
pub(crate) const SQRT2_Q63: u64 = 13_043_817_825_332_782_212;

/// Horner's rule, lowest power first: `p = p * x + c`, each step rounded twice.
#[inline(always)]
fn horner32(c: &[f32], x: f32) -> f32 {
    c[..c.len() - 1].iter().rev().fold(c[c.len() - 1], |p, &k| p * x + k)
}

#[inline(always)]
fn horner64(c: &[f64], x: f64) -> f64 {
    c[..c.len() - 1].iter().rev().fold(c[c.len() - 1], |p, &k| p * x + k)
}

/// `2^e`, exactly, for `e` in `[-126, 127]`.
#[inline(always)]
fn pow2_f32(e: i32) -> f32 {
    f32::from_bits(((e + 127) as u32) << 23)
}

/// `2^e`, exactly, for `e` in `[-1022, 1023]`.
#[inline(always)]
fn pow2_f64(e: i32) -> f64 {
    f64::from_bits(((e + 1023) as u64) << 52)
}

/// The reduced argument of `ln(u)`, `u = mi 2^-(W-1) 2^k` with the W-bit
/// mantissa `mi` (top bit set): `u = (1 + t) 2^k'` with `1 + t` within
/// `[sqrt(1/2), sqrt(2)]`, `t` given exactly as `-1^neg ti 2^sh`.
struct Reduced<I> {
    ti: I,
    neg: bool,
    sh: i32,
    k: i32,
}

#[inline(always)]
fn reduce32(mi: u32, k: i32) -> Reduced<u32> {
    if mi > SQRT2_Q31 {
        Reduced { ti: mi.wrapping_neg(), neg: true, sh: -32, k: k + 1 }
    } else {
        Reduced { ti: mi - 0x8000_0000, neg: false, sh: -31, k }
    }
}

#[inline(always)]
fn reduce64(mi: u64, k: i32) -> Reduced<u64> {
    if mi > SQRT2_Q63 {
        Reduced { ti: mi.wrapping_neg(), neg: true, sh: -64, k: k + 1 }
    } else {
        Reduced { ti: mi - (1 << 63), neg: false, sh: -63, k }
    }
}

/// `v 2^sh` in `f32`, `v` cut to its top 24 bits (exact for 24 bits or fewer).
#[inline(always)]
fn cut_f32(v: u64, sh: i32) -> f32 {
    if v == 0 {
        return 0.0;
    }
    let lz = v.leading_zeros();
    ((v << lz) >> 40) as u32 as f32 * pow2_f32(40 - lz as i32 + sh)
}

/// `v 2^sh` in `f64`, `v` cut to its top 53 bits.
#[inline(always)]
fn cut_f64(v: u64, sh: i32) -> f64 {
    if v == 0 {
        return 0.0;
    }
    let lz = v.leading_zeros();
    exact_f64((v << lz) >> 11) * pow2_f64(11 - lz as i32 + sh)
}

/// `ln(1 + t) + k ln 2` in `f32`, `t = -1^neg ti 2^sh` cut to its top 24 bits.
#[inline(always)]
fn ln_f32(ti: u64, neg: bool, sh: i32, k: i32) -> f32 {
    let t = cut_f32(ti, sh);
    let t = if neg { -t } else { t };
    let kf = k as f32;
    kf * LN2_HI_F32 + (t * horner32(&LN_F32, t) + kf * LN2_LO_F32)
}

/// `1 / sqrt(l)`, `l > 0`: Newton's iteration from the integer first guess.
#[inline(always)]
fn rsqrt_f32(l: f32) -> f32 {
    let h = 0.5 * l;
    let mut y = f32::from_bits(0x5f37_59df - (l.to_bits() >> 1));
    for _ in 0..3 {
        y *= -h * y * y + 1.5;
    }
    y
}

/// The angle within its quadrant, `x / 2^32` of a quarter turn, folded to
/// at most half of one (`2^32 - x` where `x` is past the half, `swap` then
/// says sine and cosine trade places).
#[inline(always)]
fn quarter(x: u32) -> (u32, bool) {
    let swap = x >= 0x8000_0000;
    (if swap { x.wrapping_neg() } else { x }, swap)
}

/// `(cos, sin)` of the angle in quadrant `q` whose in-quadrant sine and
/// cosine are `(s, c)`.
#[inline(always)]
fn rotate<T: Copy + std::ops::Neg<Output = T>>(q: u32, s: T, c: T) -> (T, T) {
    match q & 3 {
        0 => (c, s),
        1 => (-s, c),
        2 => (-c, -s),
        _ => (s, -c),
    }
}

/// Two `f32` normals from the words `a` (radius) and `b` (angle).
#[inline(always)]
pub(crate) fn pair_f32(a: u32, b: u32) -> [f32; 2] {
    let x = a | 1;
    let e = x.leading_zeros();
    let red = reduce32(x << e, -1 - e as i32);
    let l = -2.0 * ln_f32(u64::from(red.ti), red.neg, red.sh, red.k);
    let r = l * rsqrt_f32(l);
    let (gi, swap) = quarter(b << 2);
    let g = cut_f32(u64::from(gi), -32);
    let g2 = g * g;
    let s = g * horner32(&SIN_F32, g2);
    let c = horner32(&COS_F32, g2);
    let (s, c) = if swap { (c, s) } else { (s, c) };
    let (cos, sin) = rotate(b >> 30, s, c);
    [r * cos, r * sin]
}

/// A 53-bit integer as `f64`, exactly, from its two words.
#[inline(always)]
fn exact_f64(v: u64) -> f64 {
    f64::from((v >> 32) as u32) * 4_294_967_296.0 + f64::from(v as u32)
}

/// Two `f64` normals from the words `w` (radius from `w[0], w[1]`, angle
/// from `w[2], w[3]`).
#[inline(always)]
pub(crate) fn pair_f64(w: &[u32; 4]) -> [f64; 2] {
    let x = ((u64::from(w[0]) << 32) | u64::from(w[1])) | 1;
    let e = x.leading_zeros();
    let red = reduce64(x << e, -1 - e as i32);
    let t = cut_f64(red.ti, red.sh);
    let t = if red.neg { -t } else { t };
    let kf = f64::from(red.k);
    let l = -2.0 * (kf * LN2_HI_F64 + (t * horner64(&LN_F64, t) + kf * LN2_LO_F64));
    // Newton's iteration from the f32 root of the same logarithm.
    let l32 = -2.0 * ln_f32(red.ti, red.neg, red.sh, red.k);
    let h = 0.5 * l;
    let mut y = f64::from(rsqrt_f32(l32));
    for _ in 0..3 {
        y *= -h * y * y + 1.5;
    }
    let r = l * y;
    let (gi, swap) = quarter64(((u64::from(w[2]) << 32) | u64::from(w[3])) << 2);
    let g = cut_f64(gi, -64);
    let g2 = g * g;
    let s = g * horner64(&SIN_F64, g2);
    let c = horner64(&COS_F64, g2);
    let (s, c) = if swap { (c, s) } else { (s, c) };
    let (cos, sin) = rotate(w[2] >> 30, s, c);
    [r * cos, r * sin]
}

#[inline(always)]
fn quarter64(x: u64) -> (u64, bool) {
    let swap = x >= 1 << 63;
    (if swap { x.wrapping_neg() } else { x }, swap)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same transform in plain f64 with the standard library's
    /// functions, from the same radius and angle inputs.
    fn reference_f32(a: u32, b: u32) -> [f64; 2] {
        let u = f64::from(a | 1) / 4_294_967_296.0;
        let r = (-2.0 * if u > 0.5 { (u - 1.0).ln_1p() } else { u.ln() }).sqrt();
        let th = std::f64::consts::TAU * f64::from(b) / 4_294_967_296.0;
        [r * th.cos(), r * th.sin()]
    }

    fn words(n: usize) -> impl Iterator<Item = [u32; 4]> {
        (0..n as u32).map(|c| crate::random::philox4x32_10([c, 0, 0, 0], [9, 9]))
    }

    #[test]
    fn f32_normals_are_box_muller_to_a_few_ulps() {
        let edges =
            [[0u32, 0], [u32::MAX, u32::MAX], [1, 1 << 30], [0x8000_0000, 0xC000_0000], [0xFFFF_FF00, 0x2000_0000]];
        let random = words(100_000).flat_map(|w| [[w[0], w[1]], [w[2], w[3]]]);
        for [a, b] in edges.into_iter().chain(random) {
            let got = pair_f32(a, b);
            let want = reference_f32(a, b);
            for k in 0..2 {
                let err = (f64::from(got[k]) - want[k]).abs();
                let bound = 4e-7 * want[k].abs() + 3e-7;
                assert!(err <= bound, "a={a:#x} b={b:#x} k={k}: {} vs {}", got[k], want[k]);
            }
        }
        assert!(pair_f32(0, 0)[0] > 6.6 && pair_f32(0, 0)[0] < 6.7);
    }

    #[test]
    fn f64_normals_are_box_muller_to_a_few_ulps() {
        for w in words(100_000).chain([[0, 0, 0, 0], [u32::MAX; 4], [u32::MAX, 7, 0x4000_0000, 0]]) {
            let got = pair_f64(&w);
            let x = ((u64::from(w[0]) << 32) | u64::from(w[1])) | 1;
            // u = x 2^-64; near 1 through ln_1p of 1 - u, exact in 64 bits.
            let ln_u = if w[0] >= 0x8000_0000 {
                (-(x.wrapping_neg() as f64) / 18_446_744_073_709_551_616.0).ln_1p()
            } else {
                (x as f64 / 18_446_744_073_709_551_616.0).ln()
            };
            let r = (-2.0 * ln_u).sqrt();
            let hi = (u64::from(w[2]) << 32) | u64::from(w[3]);
            let th = std::f64::consts::TAU * (hi as f64 / 18_446_744_073_709_551_616.0);
            let want = [r * th.cos(), r * th.sin()];
            for k in 0..2 {
                let err = (got[k] - want[k]).abs();
                assert!(err <= 2e-15 * want[k].abs() + 2e-15 * r, "{w:x?} k={k}: {} vs {}", got[k], want[k]);
            }
        }
    }

    #[test]
    fn normals_have_the_moments_of_a_standard_normal() {
        let n = 400_000.0;
        let v: Vec<f64> = words(100_000)
            .flat_map(|w| {
                let [a, b] = pair_f32(w[0], w[1]);
                let [c, d] = pair_f64(&w);
                [f64::from(a), f64::from(b), c, d]
            })
            .collect();
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
        let tail = v.iter().filter(|x| x.abs() > 1.96).count() as f64 / n;
        assert!(mean.abs() < 5.0 / n.sqrt(), "mean {mean}");
        assert!((var - 1.0).abs() < 5.0 * (2.0 / n).sqrt(), "variance {var}");
        assert!((tail - 0.05).abs() < 5.0 * (0.05 * 0.95 / n).sqrt(), "two-sided 5% tail {tail}");
    }
}
