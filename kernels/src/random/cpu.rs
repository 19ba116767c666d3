//! CPU implementation of the Philox fills: blocks ciphered [`LANES`] at a
//! time, word by word across the blocks, so that each round and each
//! value's arithmetic runs on vectors (built also for AVX2 and AVX-512,
//! chosen at run time); the same operations per block as
//! [`super::philox4x32_10`], so the same bits.

use kiln_core::{Element, HostArgs, Result};
use multiversion::multiversion;
use rayon::prelude::*;

use super::{Draw, M, W};

/// Blocks per rayon task: large enough that scheduling costs nothing.
const CHUNK_BLOCKS: usize = 4096;
/// Blocks ciphered together.
const LANES: usize = 16;

/// `dst` filled from the stream at the counter; arguments (dst, seed_lo,
/// seed_hi, ctr_lo, ctr_hi, one, zero, n).
pub(crate) fn fill<T: Element, D: Draw<T>>(args: &mut HostArgs<'_>) -> Result<()> {
    let key = [args.scalar::<u32>(1)?, args.scalar::<u32>(2)?];
    let ctr = u64::from(args.scalar::<u32>(3)?) | (u64::from(args.scalar::<u32>(4)?) << 32);
    let per = D::PER_BLOCK as usize;
    args.output::<T>(0)?.par_chunks_mut(per * CHUNK_BLOCKS).enumerate().for_each(|(j, chunk)| {
        fill_chunk::<T, D>(chunk, ctr.wrapping_add((j * CHUNK_BLOCKS) as u64), key);
    });
    Ok(())
}

/// `chunk` filled from the blocks at counters `first, first + 1, ...`.
#[multiversion(targets("x86_64+avx512f+avx512vl+avx512cd+avx512bw+avx512dq+fma", "x86_64+avx2+fma"))]
fn fill_chunk<T: Element, D: Draw<T>>(chunk: &mut [T], first: u64, key: [u32; 2]) {
    let per = D::PER_BLOCK as usize;
    for (g, out) in chunk.chunks_mut(per * LANES).enumerate() {
        let w = blocks(first.wrapping_add((g * LANES) as u64), key);
        let mut values = [[T::default(); 4]; LANES];
        for (j, v) in values.iter_mut().enumerate() {
            *v = D::values(&[w[0][j], w[1][j], w[2][j], w[3][j]]);
        }
        for (o, v) in out.chunks_mut(per).zip(&values) {
            o.copy_from_slice(&v[..o.len()]);
        }
    }
}

/// The Philox4x32-10 blocks of counters `first ..first + LANES`, word by
/// word: `w[i][j]` is word `i` of block `first + j`.
#[inline(always)]
fn blocks(first: u64, key: [u32; 2]) -> [[u32; LANES]; 4] {
    let [mut c0, mut c1, mut c2, mut c3] = [[0u32; LANES]; 4];
    for (j, (lo, hi)) in c0.iter_mut().zip(&mut c1).enumerate() {
        let x = first.wrapping_add(j as u64);
        (*lo, *hi) = (x as u32, (x >> 32) as u32);
    }
    let mut k = key;
    for _ in 0..10 {
        for (((w0, w1), w2), w3) in c0.iter_mut().zip(&mut c1).zip(&mut c2).zip(&mut c3) {
            let p0 = u64::from(M[0]) * u64::from(*w0);
            let p1 = u64::from(M[1]) * u64::from(*w2);
            (*w0, *w1, *w2, *w3) =
                ((p1 >> 32) as u32 ^ *w1 ^ k[0], p1 as u32, (p0 >> 32) as u32 ^ *w3 ^ k[1], p0 as u32);
        }
        k = [k[0].wrapping_add(W[0]), k[1].wrapping_add(W[1])];
    }
    [c0, c1, c2, c3]
}
