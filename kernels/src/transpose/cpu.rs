//! CPU implementation of transpose.

use kiln_core::{Element, Error, Result};
use rayon::prelude::*;

use crate::stream_store;

/// Elements past each row of a tile's buffer, so that a buffer's column
/// does not fall in one cache set.
const PAD: usize = 8;
/// The longest run of a row a tile reads, and of a column it writes, in
/// bytes: on two threads, 8192^2 f32 ran at 21 GB/s in runs of 512 bytes
/// and 16.5 GB/s in runs of 1 KiB.
const RUN_BYTES: usize = 512;
/// Outputs of this many bytes and more are written past the cache. A
/// transpose's scattered runs make every plain store fetch its line first:
/// on two threads, with inputs and outputs out of cache, 1024^2 f32 took
/// 1.2 ms with plain stores and 0.34 ms streamed, 2048^2 f32 5.4 and 1.3 ms.
const STREAM_FROM: usize = 1 << 20;
/// Output rows a tile's buffer is transposed into at a time.
const GROUP: usize = 4;

/// `out[c * rows + r] = input[r * cols + c]`.
pub(crate) fn transpose<T: Element>(input: &[T], out: &mut [T], rows: u64, cols: u64) -> Result<()> {
    let (rows, cols) = (rows as usize, cols as usize);
    if rows == 0 || cols == 0 {
        return Ok(());
    }
    let n = rows.checked_mul(cols).filter(|&n| n <= input.len() && n <= out.len());
    let Some(n) = n else {
        return Err(Error::invalid(
            "transpose on the CPU",
            format!("{rows} x {cols} elements do not fit the input ({}) and output ({})", input.len(), out.len()),
        ));
    };
    // The largest tile whose runs stay within RUN_BYTES, while the tasks
    // stay at least two per thread.
    let per_task = cols / (2 * rayon::current_num_threads());
    let fits = |side: usize| per_task >= side && side * size_of::<T>() <= RUN_BYTES;
    let out = &mut out[..n];
    let stream = n * size_of::<T>() >= STREAM_FROM;
    if fits(512) {
        tiles::<T, 512>(input, out, rows, cols, stream);
    } else if fits(256) {
        tiles::<T, 256>(input, out, rows, cols, stream);
    } else if fits(128) {
        tiles::<T, 128>(input, out, rows, cols, stream);
    } else if fits(64) {
        tiles::<T, 64>(input, out, rows, cols, stream);
    } else {
        tiles::<T, 32>(input, out, rows, cols, stream);
    }
    Ok(())
}

/// `out[c * rows + r] = input[r * cols + c]` for the `rows x cols` matrix
/// `input` (`out` holds exactly its elements), in tiles of `TILE x TILE`.
/// With `stream`, output runs that start and end on cache lines are
/// written past the cache.
fn tiles<T: Element, const TILE: usize>(input: &[T], out: &mut [T], rows: usize, cols: usize, stream: bool) {
    let stride = TILE + PAD;
    // Runs start at `c * rows + r0` with `r0` a multiple of TILE: they lie
    // on lines when the output does and both strides are whole lines.
    let line = |elements: usize| (elements * size_of::<T>()).is_multiple_of(64);
    let stream = stream && out.as_ptr().align_offset(64) == 0 && line(rows) && line(TILE);
    // Each task: TILE output rows (input columns c0..), tile by tile along
    // them. A tile's input rows are copied whole into a buffer first: rows
    // of a power-of-two length lie in one cache set, so a tile read column
    // by column straight from them would evict its own lines. The buffer
    // is then transposed GROUP columns at a time into whole output runs.
    out.par_chunks_mut(rows * TILE).enumerate().for_each(|(block, chunk)| {
        let c0 = block * TILE;
        let w = chunk.len() / rows;
        let mut tile = vec![T::default(); TILE * stride];
        let mut runs = vec![T::default(); GROUP * TILE];
        for r0 in (0..rows).step_by(TILE) {
            let h = (r0 + TILE).min(rows) - r0;
            for (r, t) in (r0..r0 + h).zip(tile.chunks_exact_mut(stride)) {
                t[..w].copy_from_slice(&input[r * cols + c0..r * cols + c0 + w]);
            }
            for dc0 in (0..w).step_by(GROUP) {
                group(&tile, stride, dc0, &mut runs);
                for (dc, run) in (dc0..w).zip(runs.chunks_exact(TILE)) {
                    stream_store::write(&mut chunk[dc * rows + r0..dc * rows + r0 + h], &run[..h], stream);
                }
            }
        }
        if stream {
            stream_store::fence();
        }
    });
}

/// `runs[k * tile + r] = buffer[r * stride + dc0 + k]` for every `k <
/// GROUP` and `r < tile`, where `tile = runs.len() / GROUP` is a multiple of
/// 4 and `buffer` holds `tile` rows of `stride >= dc0 + GROUP` elements.
/// Four- and eight-byte elements move four rows at a time in vector
/// registers; others one at a time.
fn group<T: Element>(buffer: &[T], stride: usize, dc0: usize, runs: &mut [T]) {
    // (Each cast succeeds only where the elements are that wide and
    // aligned for it, as every kiln element of that size is.)
    #[cfg(target_arch = "x86_64")]
    match size_of::<T>() {
        4 => {
            let words = (bytemuck::try_cast_slice::<T, u32>(buffer), bytemuck::try_cast_slice_mut::<T, u32>(runs));
            if let (Ok(buffer), Ok(runs)) = words {
                return x86::words(buffer, stride, dc0, runs);
            }
        }
        8 => {
            let doubles = (bytemuck::try_cast_slice::<T, u64>(buffer), bytemuck::try_cast_slice_mut::<T, u64>(runs));
            if let (Ok(buffer), Ok(runs)) = doubles {
                return x86::doubles(buffer, stride, dc0, runs);
            }
        }
        _ => {}
    }
    let tile = runs.len() / GROUP;
    for (k, run) in runs.chunks_exact_mut(tile).enumerate() {
        for (o, row) in run.iter_mut().zip(buffer.chunks_exact(stride)) {
            *o = row[dc0 + k];
        }
    }
}

/// [`group`] for four- and eight-byte elements, in SSE2 registers (part of
/// every x86-64).
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m128i, _mm_loadu_si128, _mm_storeu_si128, _mm_unpackhi_epi32, _mm_unpackhi_epi64, _mm_unpacklo_epi32,
        _mm_unpacklo_epi64,
    };

    use super::GROUP;

    /// The first 16 bytes of `s`, as a vector.
    #[inline(always)]
    fn load<T: bytemuck::Pod>(s: &[T]) -> __m128i {
        let s: &[u8] = bytemuck::cast_slice(s);
        let s = &s[..16];
        // SAFETY: SSE2 is part of x86-64; `s` holds the 16 bytes read, and
        // the load is unaligned.
        unsafe { _mm_loadu_si128(s.as_ptr().cast()) }
    }

    /// `v` into the first 16 bytes of `s`.
    #[inline(always)]
    fn store<T: bytemuck::Pod>(s: &mut [T], v: __m128i) {
        let s: &mut [u8] = bytemuck::cast_slice_mut(s);
        let s = &mut s[..16];
        // SAFETY: SSE2 is part of x86-64; `s` holds the 16 bytes written,
        // borrowed exclusively, and the store is unaligned.
        unsafe { _mm_storeu_si128(s.as_mut_ptr().cast(), v) }
    }

    /// [`super::group`] of 32-bit words, a 4 x 4 block at a time.
    pub(super) fn words(buffer: &[u32], stride: usize, dc0: usize, runs: &mut [u32]) {
        const { assert!(GROUP == 4) };
        let tile = runs.len() / GROUP;
        for r in (0..tile).step_by(4) {
            let row = |i: usize| load(&buffer[(r + i) * stride + dc0..]);
            let (a, b, c, d) = (row(0), row(1), row(2), row(3));
            // SAFETY: SSE2 is part of x86-64; these only shuffle registers.
            let (ab_lo, cd_lo, ab_hi, cd_hi) = unsafe {
                (_mm_unpacklo_epi32(a, b), _mm_unpacklo_epi32(c, d), _mm_unpackhi_epi32(a, b), _mm_unpackhi_epi32(c, d))
            };
            // SAFETY: as above.
            let columns = unsafe {
                [
                    _mm_unpacklo_epi64(ab_lo, cd_lo),
                    _mm_unpackhi_epi64(ab_lo, cd_lo),
                    _mm_unpacklo_epi64(ab_hi, cd_hi),
                    _mm_unpackhi_epi64(ab_hi, cd_hi),
                ]
            };
            for (k, column) in columns.into_iter().enumerate() {
                store(&mut runs[k * tile + r..], column);
            }
        }
    }

    /// [`super::group`] of 64-bit words, a 2 x 2 block at a time.
    pub(super) fn doubles(buffer: &[u64], stride: usize, dc0: usize, runs: &mut [u64]) {
        let tile = runs.len() / GROUP;
        for r in (0..tile).step_by(2) {
            for k in (0..GROUP).step_by(2) {
                let (a, b) = (load(&buffer[r * stride + dc0 + k..]), load(&buffer[(r + 1) * stride + dc0 + k..]));
                // SAFETY: SSE2 is part of x86-64; these only shuffle registers.
                let (first, second) = unsafe { (_mm_unpacklo_epi64(a, b), _mm_unpackhi_epi64(a, b)) };
                store(&mut runs[k * tile + r..], first);
                store(&mut runs[(k + 1) * tile + r..], second);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use half::f16;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// Every shape around `TILE` transposed by `tiles`, with and without
    /// streaming, into an output poisoned first, against the definition
    /// (compared bit for bit, so that any float bits may be inputs).
    fn check<T: Element, const TILE: usize>(rng: &mut ChaCha8Rng) {
        let shapes =
            [(1, 1), (1, 300), (300, 1), (TILE, TILE), (TILE + 1, 2 * TILE - 1), (517, 263), (64, 3 * TILE + 5)];
        let bits = |x: &T| bytemuck::bytes_of(x).to_vec();
        for (rows, cols) in shapes {
            let mut input = vec![T::default(); rows * cols];
            rng.fill(bytemuck::cast_slice_mut::<T, u8>(&mut input));
            for stream in [false, true] {
                // An output on a line, as the backend allocates, so that
                // line-long runs are streamed.
                let mut backing = vec![0xA5u8; (rows * cols + 64) * size_of::<T>()];
                let skip = backing.as_ptr().align_offset(64);
                let out: &mut [T] = bytemuck::cast_slice_mut(&mut backing[skip..skip + rows * cols * size_of::<T>()]);
                tiles::<T, TILE>(&input, out, rows, cols, stream);
                for r in 0..rows {
                    for c in 0..cols {
                        assert_eq!(
                            bits(&out[c * rows + r]),
                            bits(&input[r * cols + c]),
                            "({r}, {c}) of {rows} x {cols}, tiles of {TILE}, {} bytes, streamed {stream}",
                            size_of::<T>()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn every_tile_size_transposes_every_shape() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        check::<u32, 32>(&mut rng);
        check::<f32, 64>(&mut rng);
        check::<u32, 128>(&mut rng);
        check::<u64, 32>(&mut rng);
        check::<f64, 64>(&mut rng);
        check::<u8, 64>(&mut rng);
        check::<u8, 512>(&mut rng);
        check::<f16, 256>(&mut rng);
    }
}
