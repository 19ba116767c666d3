//! Filling host memory with a repeated byte pattern.
//!
//! Large fills (past [`STREAM_FROM`]) write whole cache lines with
//! non-temporal stores on x86-64: a plain store first reads each line it
//! writes, so a fill of memory moves twice its bytes, and the C library's
//! `memset` only streams past a threshold set from the last-level cache's
//! size, which on large or virtual machines no buffer reaches. Smaller
//! fills stay in cache for whatever reads them next.

use rayon::prelude::*;

/// Bytes per parallel task (a multiple of every pattern length, 1 to 8 bytes).
const TASK: usize = 1 << 16;
/// Fills of this many bytes and more stream past the cache.
const STREAM_FROM: usize = 32 << 20;
/// Bytes of a repeated pattern block.
const BLOCK: usize = 4096;

/// Fill `d` with `pattern` repeated (its length dividing 64: an element's
/// size), in parallel.
pub(crate) fn fill(d: &mut [u8], pattern: &[u8]) {
    if pattern.is_empty() {
        return;
    }
    let block = Block {
        bytes: pattern.iter().copied().cycle().take(BLOCK / pattern.len() * pattern.len()).collect(),
        uniform: pattern.iter().all(|&b| b == pattern[0]),
    };
    let stream = d.len() >= STREAM_FROM && 64 % pattern.len() == 0;
    d.par_chunks_mut(TASK / block.bytes.len() * block.bytes.len()).for_each(|c| {
        if !(stream && stream_lines(c, &block)) {
            plain(c, &block.bytes, block.uniform);
        }
    });
}

/// The pattern repeated to about [`BLOCK`] bytes, and whether it is one byte repeated.
struct Block {
    bytes: Vec<u8>,
    uniform: bool,
}

/// `c` filled from `block` (which starts at the pattern's first byte) a
/// block at a time: one byte repeated (`uniform`) is a `memset`; otherwise
/// copies of a block, since a copy per element of a length known only at
/// run time is a call to `memcpy` per element.
fn plain(c: &mut [u8], block: &[u8], uniform: bool) {
    if uniform {
        if let Some(&b) = block.first() {
            c.fill(b);
        }
    } else {
        c.chunks_mut(block.len()).for_each(|e| e.copy_from_slice(&block[..e.len()]));
    }
}

/// `c` filled as [`plain`] would, its aligned lines with non-temporal
/// stores; false (and nothing written) where the machine has none.
fn stream_lines(c: &mut [u8], block: &Block) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        // The bytes before the first 64-byte boundary, then whole lines.
        let head = c.as_ptr().align_offset(64).min(c.len());
        let (first, rest) = c.split_at_mut(head);
        let lines = rest.len() / 64 * 64;
        let (middle, tail) = rest.split_at_mut(lines);
        let (uniform, block) = (block.uniform, &block.bytes[..]);
        plain(first, block, uniform);
        // Every line starts `head` bytes into the pattern's cycle (lines
        // are 64 bytes, a multiple of its length).
        let line = &block[head % 64..head % 64 + 64];
        let src = line.as_ptr().cast::<__m128i>();
        for dst in middle.chunks_exact_mut(64) {
            let to = dst.as_mut_ptr().cast::<__m128i>();
            for q in 0..4 {
                // SAFETY: SSE2 is part of x86-64. `line` and `dst` are 64
                // bytes each, so bytes 16q..16q + 16 lie inside both; `dst`
                // starts on a 64-byte boundary, so each store is 16-byte
                // aligned as `_mm_stream_si128` requires; the load is
                // unaligned. `dst` is borrowed exclusively.
                unsafe { _mm_stream_si128(to.add(q), _mm_loadu_si128(src.add(q))) };
            }
        }
        // The tail starts on a line boundary: `head + lines` bytes in.
        let tail_block = &block[(head + lines) % block.len()..];
        plain_from(tail, tail_block, block, uniform);
        // SAFETY: SSE is part of x86-64. Orders the streamed stores before
        // anything this thread does next (the task's end, which the stream
        // waits on before the fill counts as done).
        unsafe { _mm_sfence() };
        true
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (c, block);
        false
    }
}

/// `c` filled with the pattern starting at `start` (a suffix of `block`).
#[cfg(target_arch = "x86_64")]
fn plain_from(c: &mut [u8], start: &[u8], block: &[u8], uniform: bool) {
    let n = start.len().min(c.len());
    c[..n].copy_from_slice(&start[..n]);
    plain(&mut c[n..], block, uniform);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a fill must leave: the pattern repeated from the first byte.
    fn want(len: usize, pattern: &[u8]) -> Vec<u8> {
        pattern.iter().copied().cycle().take(len).collect()
    }

    #[test]
    fn streamed_and_plain_fills_repeat_the_pattern_from_the_first_byte() {
        let mut backing = vec![0xAAu8; STREAM_FROM + 3 * TASK + 200];
        for pattern in [&[7u8][..], &[1, 2], &[1, 2, 3, 4], &[9, 8, 7, 6, 5, 4, 3, 2]] {
            // Every start within a line, and lengths past the threshold and
            // below it, ending mid-line.
            for skew in [0, 1, 8, 13, 63] {
                for len in [STREAM_FROM + TASK + 77 - skew, 1000, 3] {
                    let len = len / pattern.len() * pattern.len();
                    backing.fill(0xAA);
                    fill(&mut backing[skew..skew + len], pattern);
                    assert!(
                        backing[skew..skew + len] == want(len, pattern)[..],
                        "{pattern:?}, skew {skew}, {len} bytes"
                    );
                    assert!(backing[..skew].iter().chain(&backing[skew + len..]).all(|&b| b == 0xAA), "outside");
                }
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn a_task_streams_its_lines_at_any_start() {
        let mut backing = vec![0u8; 4 * 64 + 200];
        let pattern = [1u8, 2, 3, 4, 5, 6, 7, 8];
        let block = Block { bytes: want(BLOCK, &pattern), uniform: false };
        for skew in 0..64 {
            for len in [0, 5, 64, 64 * 3 + 9, 4 * 64 + 100] {
                backing.fill(0);
                assert!(stream_lines(&mut backing[skew..skew + len], &block));
                assert_eq!(backing[skew..skew + len], want(len, &pattern)[..], "skew {skew}, {len} bytes");
            }
        }
    }
}
