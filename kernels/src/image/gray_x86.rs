//! Gray of interleaved pixels with AVX2: each 128-bit lane takes 16 pixels,
//! splits them into their channels with byte shuffles and weighs them in
//! 16- and 32-bit integers, giving the same bytes as [`gray_of`].
//!
//! [`gray_of`]: super::cpu::gray_of

use std::arch::x86_64::{
    __m256i, _mm_loadu_si128, _mm256_add_epi32, _mm256_loadu_si256, _mm256_madd_epi16, _mm256_mulhi_epu16,
    _mm256_or_si256, _mm256_packs_epi32, _mm256_packus_epi16, _mm256_set_m128i, _mm256_set1_epi16, _mm256_set1_epi32,
    _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_srli_epi16, _mm256_srli_epi32, _mm256_storeu_si256,
    _mm256_unpackhi_epi8, _mm256_unpackhi_epi16, _mm256_unpacklo_epi8, _mm256_unpacklo_epi16,
};

/// Pixels per step: 16 in each of a vector's two 128-bit lanes.
pub(super) const STEP: usize = 32;

/// `floor(x / 1000)` for `x <= 255 * 1000` as the vector code takes it:
/// `floor(floor(x / 8) / 125)`, the second by a multiply-high in 16 bits.
#[cfg(test)]
pub(super) fn div1000(x: u32) -> u32 {
    ((x >> 3) * RECIP_125 as u32) >> (16 + RECIP_SHIFT)
}

/// `floor(y / 125) = (y * RECIP_125) >> (16 + RECIP_SHIFT)` for every
/// `y < 2^15`: `RECIP_125 = ceil(2^22 / 125)`, and its excess over
/// `2^22 / 125` (0.568) times `y` stays under `2^22 / 125`'s share of one.
const RECIP_125: u16 = 33555;
const RECIP_SHIFT: i32 = 6;

/// The byte shuffles that gather channel `channel` of 16 pixels of `ch`
/// bytes each out of the `ch` 16-byte blocks they span: `masks[channel][k]`
/// takes from block `k` the bytes of that channel lying in it to their
/// pixel's place, and zero elsewhere (a shuffle index with its top bit set).
const fn masks(ch: usize) -> [[[i8; 32]; 4]; 3] {
    let mut m = [[[-128i8; 32]; 4]; 3];
    let mut channel = 0;
    while channel < 3 {
        let mut px = 0;
        while px < 16 {
            let at = ch * px + channel;
            let (block, byte) = (at / 16, (at % 16) as i8);
            m[channel][block][px] = byte;
            m[channel][block][px + 16] = byte;
            px += 1;
        }
        channel += 1;
    }
    m
}

/// `o[i] = gray_of(p[CH i], p[CH i + 1], p[CH i + 2])` for the first
/// `STEP`-multiple of pixels that both `o` and `p` hold; returns how many
/// pixels it wrote. Only for a CPU with AVX2 (callers detect it first).
#[target_feature(enable = "avx2")]
pub(super) fn gray<const CH: usize>(o: &mut [u8], p: &[u8]) -> usize {
    const { assert!(CH == 3 || CH == 4) };
    let masks = const { masks(CH) };
    let steps = (o.len() / STEP).min(p.len() / (STEP * CH));
    let zero = _mm256_setzero_si256();
    let (w_rg, w_b) = (_mm256_set1_epi32((587 << 16) | 299), _mm256_set1_epi32(114));
    let recip = _mm256_set1_epi16(RECIP_125 as i16);
    for (o, p) in o.chunks_exact_mut(STEP).zip(p.chunks_exact(STEP * CH)).take(steps) {
        // Lane 0 holds pixels 0..16 of the step, lane 1 pixels 16..32.
        let block = |k: usize| {
            let (lo, hi) = (&p[16 * k..16 * k + 16], &p[16 * CH + 16 * k..16 * CH + 16 * k + 16]);
            // SAFETY: each slice holds the 16 bytes an unaligned load reads.
            unsafe { _mm256_set_m128i(_mm_loadu_si128(hi.as_ptr().cast()), _mm_loadu_si128(lo.as_ptr().cast())) }
        };
        let blocks: [__m256i; CH] = std::array::from_fn(block);
        let [r, g, b] = std::array::from_fn(|channel| {
            blocks.iter().zip(&masks[channel]).fold(zero, |acc, (&v, m)| {
                // SAFETY: `m` holds the 32 bytes an unaligned load reads.
                let m = unsafe { _mm256_loadu_si256(m.as_ptr().cast()) };
                _mm256_or_si256(acc, _mm256_shuffle_epi8(v, m))
            })
        });
        // 16 pixels of a lane in two halves of 8: 16-bit channels, then
        // (r, g) and (b, 0) pairs weighed into 32-bit sums of at most
        // 255000, divided by 8 into 16 bits and then by 125.
        let half = |r: __m256i, g: __m256i, b: __m256i| {
            let sum = |rg: __m256i, b0: __m256i| {
                let x = _mm256_add_epi32(_mm256_madd_epi16(rg, w_rg), _mm256_madd_epi16(b0, w_b));
                _mm256_srli_epi32::<3>(x)
            };
            let lo = sum(_mm256_unpacklo_epi16(r, g), _mm256_unpacklo_epi16(b, zero));
            let hi = sum(_mm256_unpackhi_epi16(r, g), _mm256_unpackhi_epi16(b, zero));
            _mm256_srli_epi16::<RECIP_SHIFT>(_mm256_mulhi_epu16(_mm256_packs_epi32(lo, hi), recip))
        };
        let lo = half(_mm256_unpacklo_epi8(r, zero), _mm256_unpacklo_epi8(g, zero), _mm256_unpacklo_epi8(b, zero));
        let hi = half(_mm256_unpackhi_epi8(r, zero), _mm256_unpackhi_epi8(g, zero), _mm256_unpackhi_epi8(b, zero));
        // SAFETY: `o` holds the 32 bytes an unaligned store writes.
        unsafe { _mm256_storeu_si256(o.as_mut_ptr().cast(), _mm256_packus_epi16(lo, hi)) };
    }
    steps * STEP
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::image::cpu::gray_of;

    #[test]
    fn the_division_is_exact_for_every_weighed_sum() {
        for x in 0..=255_000 {
            assert_eq!(div1000(x), x / 1000, "x = {x}");
        }
    }

    fn check<const CH: usize>() {
        if !is_x86_feature_detected!("avx2") {
            return;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(CH as u64);
        for n in [0, 1, 31, 32, 33, 64, 95, 1000] {
            let p: Vec<u8> = (0..n * CH).map(|_| rng.random()).collect();
            let mut o = vec![0xA5u8; n + 3];
            // SAFETY: AVX2 was detected above.
            let done = unsafe { gray::<CH>(&mut o[..n], &p) };
            assert_eq!(done, n / STEP * STEP);
            for (i, px) in p.chunks_exact(CH).take(done).enumerate() {
                assert_eq!(o[i], gray_of(px[0], px[1], px[2]), "pixel {i} of {n} ({CH} channels)");
            }
            assert!(o[done..].iter().all(|&v| v == 0xA5), "wrote past {done} of {n}");
        }
        // Every channel's extremes.
        let p: Vec<u8> = (0..STEP * CH).map(|i| [0, 255][(i / CH + i % CH) % 2]).collect();
        let mut o = [0u8; STEP];
        // SAFETY: AVX2 was detected above.
        unsafe { gray::<CH>(&mut o, &p) };
        for (i, px) in p.chunks_exact(CH).enumerate() {
            assert_eq!(o[i], gray_of(px[0], px[1], px[2]));
        }
    }

    #[test]
    fn rgb_matches_the_scalar_weights() {
        check::<3>();
    }

    #[test]
    fn rgba_matches_the_scalar_weights() {
        check::<4>();
    }
}
