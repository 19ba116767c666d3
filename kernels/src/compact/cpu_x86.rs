//! Compaction of 4-byte elements with AVX-512: sixteen elements tested by
//! one vector comparison, and the kept ones (or their indices) packed to
//! the front of a register and stored through a small block, in order.
//! The comparisons are the scalar ones lane by lane: ordered for `>`, `<`
//! and `==` (false with a NaN), unordered for `!=` (true with a NaN), and
//! `-0.0 == 0.0`.

use std::arch::x86_64::{
    __m512i, __mmask16, _CMP_EQ_OQ, _CMP_GT_OQ, _CMP_LT_OQ, _CMP_NEQ_UQ, _mm512_add_epi32, _mm512_castsi512_ps,
    _mm512_cmp_ps_mask, _mm512_cmpeq_epi32_mask, _mm512_cmpeq_epu32_mask, _mm512_cmpgt_epi32_mask,
    _mm512_cmpgt_epu32_mask, _mm512_cmplt_epi32_mask, _mm512_cmplt_epu32_mask, _mm512_cmpneq_epi32_mask,
    _mm512_cmpneq_epu32_mask, _mm512_loadu_si512, _mm512_maskz_compress_epi32, _mm512_set1_epi32, _mm512_setr_epi32,
    _mm512_storeu_si512,
};

use kiln_core::DType;

use super::Predicate;
use crate::stream_store;

/// Elements one comparison tests.
const LANES: usize = 16;
/// Elements packed through the staging block between copies into the
/// output (a run): a host-side run length, unrelated to the GPU block size
/// (`launch::BLOCK`).
const RUN: usize = 256;
/// Kept elements gathered before they are written out together.
const STAGE: usize = 2048;

/// How lanes of four bytes compare.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Lanes {
    F32,
    I32,
    U32,
}

impl Lanes {
    /// The lanes of `dtype`, if it is a 4-byte type compared here.
    pub(super) fn of(dtype: DType) -> Option<Lanes> {
        match dtype {
            DType::F32 => Some(Lanes::F32),
            DType::I32 => Some(Lanes::I32),
            DType::U32 => Some(Lanes::U32),
            _ => None,
        }
    }
}

/// Which lanes of `v` pass `pred` (whose operand is in every lane of `p`).
#[inline]
#[target_feature(enable = "avx512f")]
fn test(lanes: Lanes, pred: Predicate<()>, v: __m512i, p: __m512i) -> __mmask16 {
    match lanes {
        Lanes::F32 => {
            let (v, p) = (_mm512_castsi512_ps(v), _mm512_castsi512_ps(p));
            match pred {
                Predicate::GreaterThan(()) => _mm512_cmp_ps_mask::<_CMP_GT_OQ>(v, p),
                Predicate::LessThan(()) => _mm512_cmp_ps_mask::<_CMP_LT_OQ>(v, p),
                Predicate::EqualTo(()) => _mm512_cmp_ps_mask::<_CMP_EQ_OQ>(v, p),
                Predicate::NotEqualTo(()) | Predicate::NonZero => _mm512_cmp_ps_mask::<_CMP_NEQ_UQ>(v, p),
            }
        }
        Lanes::I32 => match pred {
            Predicate::GreaterThan(()) => _mm512_cmpgt_epi32_mask(v, p),
            Predicate::LessThan(()) => _mm512_cmplt_epi32_mask(v, p),
            Predicate::EqualTo(()) => _mm512_cmpeq_epi32_mask(v, p),
            Predicate::NotEqualTo(()) | Predicate::NonZero => _mm512_cmpneq_epi32_mask(v, p),
        },
        Lanes::U32 => match pred {
            Predicate::GreaterThan(()) => _mm512_cmpgt_epu32_mask(v, p),
            Predicate::LessThan(()) => _mm512_cmplt_epu32_mask(v, p),
            Predicate::EqualTo(()) => _mm512_cmpeq_epu32_mask(v, p),
            Predicate::NotEqualTo(()) | Predicate::NonZero => _mm512_cmpneq_epu32_mask(v, p),
        },
    }
}

/// What [`keep`] writes (the kept indices, or the values), and whether
/// past the cache.
#[derive(Clone, Copy)]
pub(super) struct Write {
    pub(super) indices: bool,
    pub(super) stream: bool,
}

/// Write the kept elements of `chunk` (4-byte elements as bits), or their
/// indices counted from `first` when `indices`, into `part` in order.
/// `operand` is the predicate's operand as bits (0 for `NonZero`). Returns
/// how many it kept, or `None` (having written only inside `part`) when
/// `part` cannot hold them all. With `stream`, the whole lines of `part`
/// are written past the cache (for outputs too large to stay in it), and
/// the caller calls [`stream_store::fence`] after it, whatever it returns.
/// Only for a CPU with AVX-512 (callers detect it first).
#[target_feature(enable = "avx512f")]
pub(super) fn keep(
    lanes: Lanes,
    pred: Predicate<()>,
    operand: u32,
    Write { indices, stream }: Write,
    part: &mut [u32],
    chunk: &[u32],
    first: u32,
) -> Option<usize> {
    let p = _mm512_set1_epi32(operand as i32);
    let iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    // Kept elements gather in `block` until `STAGE` of them are written out
    // at once (past the cache when `stream`, so that only the lines at the
    // ends of each write are read first). Each group's packed lanes are
    // stored whole at the block's end: room for `STAGE` elements, a full
    // run and one more group.
    let mut block = [0u32; STAGE + RUN + LANES];
    let mut written = 0;
    let mut n = 0;
    let mut flush = |block: &[u32], written: &mut usize| -> Option<()> {
        stream_store::write(part.get_mut(*written..*written + block.len())?, block, stream);
        *written += block.len();
        Some(())
    };
    let mut runs = chunk.chunks_exact(RUN);
    for (b, run) in runs.by_ref().enumerate() {
        for (g, group) in run.chunks_exact(LANES).enumerate() {
            // SAFETY: `group` holds the 16 u32 an unaligned load reads.
            let v = unsafe { _mm512_loadu_si512(group.as_ptr().cast()) };
            let m = test(lanes, pred, v, p);
            let at = first.wrapping_add((b * RUN + g * LANES) as u32);
            let kept = if indices { _mm512_add_epi32(iota, _mm512_set1_epi32(at as i32)) } else { v };
            // SAFETY: `n < STAGE` when the run starts, so `n <= STAGE +
            // RUN - LANES - 1` here (at most 15 groups of 16 kept before
            // this one), and the 16 u32 stored lie inside `block`.
            unsafe {
                _mm512_storeu_si512(block[n..n + LANES].as_mut_ptr().cast(), _mm512_maskz_compress_epi32(m, kept))
            };
            n += m.count_ones() as usize;
        }
        if n >= STAGE {
            flush(&block[..n], &mut written)?;
            n = 0;
        }
    }
    flush(&block[..n], &mut written)?;
    // The last, partial run, one element at a time through the same test.
    let done = chunk.len() - runs.remainder().len();
    for (i, &v) in runs.remainder().iter().enumerate() {
        let m = test(lanes, pred, _mm512_set1_epi32(v as i32), p) & 1;
        if m != 0 {
            *part.get_mut(written)? = if indices { first.wrapping_add((done + i) as u32) } else { v };
            written += 1;
        }
    }
    Some(written)
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::Number;

    const PREDICATES: [Predicate<()>; 5] = [
        Predicate::GreaterThan(()),
        Predicate::LessThan(()),
        Predicate::EqualTo(()),
        Predicate::NotEqualTo(()),
        Predicate::NonZero,
    ];

    /// `keep` against the scalar predicate, over runs of every kind of
    /// length, for values and for indices.
    fn check<T: Number>(lanes: Lanes, values: &[T], operands: &[T]) {
        if !is_x86_feature_detected!("avx512f") {
            return;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        for (k, n) in
            [0, 1, 15, 16, 17, RUN - 1, RUN, RUN + 1, 3 * RUN + 40, 3 * STAGE + RUN + 9].into_iter().enumerate()
        {
            let stream = k % 2 == 1;
            let x: Vec<T> = (0..n).map(|_| values[rng.random_range(0..values.len())]).collect();
            let bits: &[u32] = bytemuck::cast_slice(&x);
            for &op in operands {
                for shape in PREDICATES {
                    let pred = match shape {
                        Predicate::GreaterThan(()) => Predicate::GreaterThan(op),
                        Predicate::LessThan(()) => Predicate::LessThan(op),
                        Predicate::EqualTo(()) => Predicate::EqualTo(op),
                        Predicate::NotEqualTo(()) => Predicate::NotEqualTo(op),
                        Predicate::NonZero => Predicate::NonZero,
                    };
                    let operand = if shape == Predicate::NonZero { 0 } else { bytemuck::cast::<T, u32>(op) };
                    let first = 1000u32;
                    let want: Vec<u32> = (0..n).filter(|&i| pred.test(x[i])).map(|i| first + i as u32).collect();
                    let mut part = vec![0xFFFF_FFFF; want.len()];
                    // SAFETY: AVX-512 was detected above.
                    let kept =
                        unsafe { keep(lanes, shape, operand, Write { indices: true, stream }, &mut part, bits, first) };
                    assert_eq!(kept, Some(want.len()), "{} of {n} {:?} kept", pred.name(), op);
                    assert_eq!(part, want, "indices, {} {:?}, {n} elements", pred.name(), op);
                    let want: Vec<u32> = want.iter().map(|&i| bits[(i - first) as usize]).collect();
                    part.fill(0xFFFF_FFFF);
                    // SAFETY: as above.
                    let kept = unsafe {
                        keep(lanes, shape, operand, Write { indices: false, stream }, &mut part, bits, first)
                    };
                    assert_eq!((kept, &part), (Some(want.len()), &want), "values, {} {:?}", pred.name(), op);
                    if let Some(short) = want.len().checked_sub(1) {
                        // SAFETY: as above.
                        let kept = unsafe {
                            keep(
                                lanes,
                                shape,
                                operand,
                                Write { indices: false, stream },
                                &mut part[..short],
                                bits,
                                first,
                            )
                        };
                        assert_eq!(kept, None, "a part one short is refused");
                    }
                }
            }
        }
    }

    #[test]
    fn f32_lanes_compare_as_ieee() {
        let values = [0.0f32, -0.0, 1.0, -1.0, 2.5, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MIN_POSITIVE];
        check::<f32>(Lanes::F32, &values, &[0.0, -0.0, 1.0, f32::NAN, f32::NEG_INFINITY]);
    }

    #[test]
    fn i32_lanes_compare_signed() {
        let values = [0i32, 1, -1, 7, i32::MIN, i32::MAX];
        check::<i32>(Lanes::I32, &values, &[0, -1, 7, i32::MIN]);
    }

    #[test]
    fn u32_lanes_compare_unsigned() {
        let values = [0u32, 1, 7, 0x8000_0000, u32::MAX];
        check::<u32>(Lanes::U32, &values, &[0, 7, 0x8000_0000, u32::MAX]);
    }
}
