//! `f32` prefixes in f64 with vector instructions: four elements at a time
//! widened to f64 and scanned in registers (two shifted additions), then
//! the carry entering them added and the last lane carried on. The chains
//! of a chunk run side by side, so no chain waits on its own additions.
//! Each output is still one f64 sum rounded once to f32; only the order of
//! the f64 additions inside a group of four differs from one at a time.
//! Its functions are only for a CPU with AVX2 (callers detect it
//! first).

use std::arch::x86_64::{
    __m256d, _mm_cvtsd_f64, _mm_loadu_ps, _mm_storeu_ps, _mm256_add_pd, _mm256_blend_pd, _mm256_castpd256_pd128,
    _mm256_cvtpd_ps, _mm256_cvtps_pd, _mm256_permute4x64_pd, _mm256_set1_pd, _mm256_setzero_pd,
};

use super::prefix::CHAINS;

/// Elements one register holds in f64.
const LANES: usize = 4;

/// The f64 sums of the `CHAINS` parts of `xs`: `len / CHAINS` elements
/// each, the last part also the remainder. Each part's sum is taken in
/// sixteen interleaved f64 sums joined at the end.
#[target_feature(enable = "avx2")]
pub(super) fn part_sums(xs: &[f32]) -> [f64; CHAINS] {
    let part = xs.len() / CHAINS;
    std::array::from_fn(|k| {
        let end = if k == CHAINS - 1 { xs.len() } else { (k + 1) * part };
        let mut acc = [0.0f64; 16];
        let xs = &xs[k * part..end];
        let mut groups = xs.chunks_exact(16);
        for (i, g) in groups.by_ref().enumerate() {
            crate::prefetch::stream(xs, i * 16);
            for (a, &v) in acc.iter_mut().zip(g) {
                *a += v as f64;
            }
        }
        let rest: f64 = groups.remainder().iter().map(|&v| v as f64).sum();
        acc.iter().sum::<f64>() + rest
    })
}

/// Scan the chunk `xs` into `ys` from the prefix `start` entering it, part
/// by part as [`part_sums`] splits it, each part from its entering prefix
/// (`start` and the sums of the parts before it, `sums`).
#[target_feature(enable = "avx2")]
pub(super) fn scan_chains(exclusive: bool, xs: &[f32], ys: &mut [f32], start: f64, sums: &[f64; CHAINS]) {
    let part = xs.len() / CHAINS;
    let mut entering = [start; CHAINS];
    for k in 1..CHAINS {
        entering[k] = entering[k - 1] + sums[k - 1];
    }
    let mut carry = entering.map(|e| _mm256_set1_pd(e));
    let groups = part / LANES;
    for g in 0..groups {
        for (k, c) in carry.iter_mut().enumerate() {
            let at = k * part + g * LANES;
            *c = step(exclusive, &xs[at..at + LANES], &mut ys[at..at + LANES], *c);
        }
    }
    // What is left of each part, one element at a time.
    for (k, c) in carry.iter().enumerate() {
        let end = if k == CHAINS - 1 { xs.len() } else { (k + 1) * part };
        let mut acc = _mm_cvtsd_f64(_mm256_castpd256_pd128(*c));
        for (y, &v) in ys[k * part + groups * LANES..end].iter_mut().zip(&xs[k * part + groups * LANES..end]) {
            if exclusive {
                *y = acc as f32;
                acc += v as f64;
            } else {
                acc += v as f64;
                *y = acc as f32;
            }
        }
    }
}

/// Four elements `x` scanned into `y` from `carry` (in every lane);
/// returns the carry leaving them (in every lane).
#[inline]
#[target_feature(enable = "avx2")]
fn step(exclusive: bool, x: &[f32], y: &mut [f32], carry: __m256d) -> __m256d {
    assert!(x.len() == LANES && y.len() == LANES);
    // SAFETY: `x` holds the four f32 an unaligned load reads.
    let v = _mm256_cvtps_pd(unsafe { _mm_loadu_ps(x.as_ptr()) });
    let zero = _mm256_setzero_pd();
    // [a, b, c, d] + [0, a, b, c], then + [0, 0, a, a + b].
    let v = _mm256_add_pd(v, _mm256_blend_pd::<0b0001>(_mm256_permute4x64_pd::<0b10_01_00_00>(v), zero));
    let v = _mm256_add_pd(v, _mm256_blend_pd::<0b0011>(_mm256_permute4x64_pd::<0b01_00_00_00>(v), zero));
    let r = _mm256_add_pd(v, carry);
    let out = if exclusive { _mm256_blend_pd::<0b0001>(_mm256_permute4x64_pd::<0b10_01_00_00>(r), carry) } else { r };
    // SAFETY: `y` holds the four f32 an unaligned store writes.
    unsafe { _mm_storeu_ps(y.as_mut_ptr(), _mm256_cvtpd_ps(out)) };
    _mm256_permute4x64_pd::<0b11_11_11_11>(r)
}
