//! The CPU histogram's counters taken eight at a time with AVX2: a group's
//! values are loaded, binned in vector registers by the same formula as the
//! scalar counter functions, and stored as counter indices for the
//! increments. Bins by a power-of-two width (integers) and float bins are
//! done here; an integer width that is not a power of two keeps the scalar
//! division by multiplication. Its functions are only for a CPU with AVX2
//! (callers detect it first).

use std::arch::x86_64::{
    __m256i, _CMP_GE_OQ, _CMP_LT_OQ, _mm_cvtsi32_si128, _mm_loadl_epi64, _mm256_and_ps, _mm256_blendv_epi8,
    _mm256_castps_si256, _mm256_cmp_ps, _mm256_cmpeq_epi32, _mm256_cvtepu8_epi32, _mm256_cvttps_epi32, _mm256_loadu_ps,
    _mm256_loadu_si256, _mm256_max_epu32, _mm256_min_epi32, _mm256_mul_ps, _mm256_set1_epi32, _mm256_set1_ps,
    _mm256_srl_epi32, _mm256_storeu_si256, _mm256_sub_epi32, _mm256_sub_ps,
};

use super::BinParams;

/// Values binned per step.
const STEP: usize = 8;

/// An integer input loaded eight values at a time as 32-bit lanes (the
/// value's bits, as `HistogramInput::value_bits`).
pub(super) trait Lanes: Copy {
    /// Eight values from `at` widened to 32 bits.
    ///
    /// # Safety
    /// `at` must point to eight readable values, and the CPU must have AVX2.
    unsafe fn load(at: *const Self) -> __m256i;
}

impl Lanes for u8 {
    #[inline(always)]
    unsafe fn load(at: *const u8) -> __m256i {
        // SAFETY: the caller gives eight readable bytes and AVX2.
        unsafe { _mm256_cvtepu8_epi32(_mm_loadl_epi64(at.cast())) }
    }
}

impl Lanes for i32 {
    #[inline(always)]
    unsafe fn load(at: *const i32) -> __m256i {
        // SAFETY: the caller gives eight readable values and AVX2.
        unsafe { _mm256_loadu_si256(at.cast()) }
    }
}

/// The counter indices of `group`'s integers into `slots`, each the bin
/// `(v - a) >> shift` where `v - a <= b` (modulo 2^32) and `bins` otherwise,
/// as the scalar counter function.
#[target_feature(enable = "avx2")]
pub(super) fn shifted<T: Lanes, const N: usize>(group: &[T; N], p: &BinParams, slots: &mut [u32; N]) {
    let (a, b, bins) = (_mm256_set1_epi32(p.a as i32), _mm256_set1_epi32(p.b as i32), _mm256_set1_epi32(p.bins as i32));
    let shift = _mm_cvtsi32_si128(p.shift as i32);
    for k in (0..N - N % STEP).step_by(STEP) {
        // SAFETY: `k + STEP <= N`, so both the eight values read and the
        // eight indices written lie inside the arrays; the CPU has AVX2.
        unsafe {
            let d = _mm256_sub_epi32(T::load(group.as_ptr().add(k)), a);
            let inside = _mm256_cmpeq_epi32(_mm256_max_epu32(d, b), b);
            let bin = _mm256_blendv_epi8(bins, _mm256_srl_epi32(d, shift), inside);
            _mm256_storeu_si256(slots.as_mut_ptr().add(k).cast(), bin);
        }
    }
}

/// The counter indices of `group`'s floats: `min(trunc((v - lo) * scale),
/// bins - 1)` in f32 where `lo <= v < hi` (false for NaN), `bins`
/// otherwise, as the scalar counter function.
#[target_feature(enable = "avx2")]
pub(super) fn floats<const N: usize>(group: &[f32; N], p: &BinParams, slots: &mut [u32; N]) {
    let (lo, hi) = (_mm256_set1_ps(f32::from_bits(p.a)), _mm256_set1_ps(f32::from_bits(p.b)));
    let scale = _mm256_set1_ps(p.scale);
    let (last, bins) = (_mm256_set1_epi32(p.bins as i32 - 1), _mm256_set1_epi32(p.bins as i32));
    for k in (0..N - N % STEP).step_by(STEP) {
        // SAFETY: as in `shifted`. A value inside [lo, hi) has
        // `(v - lo) * scale` in [0, bins] or just past it, so its signed
        // truncation is its unsigned one; other values take `bins`.
        unsafe {
            let v = _mm256_loadu_ps(group.as_ptr().add(k));
            let q = _mm256_min_epi32(_mm256_cvttps_epi32(_mm256_mul_ps(_mm256_sub_ps(v, lo), scale)), last);
            let inside = _mm256_and_ps(_mm256_cmp_ps::<_CMP_GE_OQ>(v, lo), _mm256_cmp_ps::<_CMP_LT_OQ>(v, hi));
            let bin = _mm256_blendv_epi8(bins, q, _mm256_castps_si256(inside));
            _mm256_storeu_si256(slots.as_mut_ptr().add(k).cast(), bin);
        }
    }
}
