//! CPU implementation of the Philox fills: blocks ciphered [`LANES`] at a
//! time, word by word across the blocks, so that each round runs on
//! vectors, in a function built also for AVX2 and AVX-512 and chosen at
//! run time (the values' conversions inlined into it); the same operations
//! per block as [`super::philox4x32_10`], so the same bits.

use kiln_core::{Element, Result};
use multiversion::multiversion;
use rayon::prelude::*;

use super::{Draw, M, W};

/// Blocks per rayon task: large enough that scheduling costs nothing.
const CHUNK_BLOCKS: usize = 4096;
/// Blocks ciphered together.
const LANES: usize = 16;

/// `dst` filled from the stream of key (`seed_lo`, `seed_hi`) at the
/// counter `ctr_hi:ctr_lo`; `one` and `zero` are the GPU kernels' (opaque
/// constants there, unused here).
#[allow(clippy::too_many_arguments)]
pub(crate) fn fill<T: Element, D: Draw<T>>(
    dst: &mut [T],
    seed_lo: u32,
    seed_hi: u32,
    ctr_lo: u32,
    ctr_hi: u32,
    _one: f32,
    _zero: u32,
    _n: u64,
) -> Result<()> {
    let key = [seed_lo, seed_hi];
    let ctr = u64::from(ctr_lo) | (u64::from(ctr_hi) << 32);
    let per = D::PER_BLOCK as usize;
    dst.par_chunks_mut(per * CHUNK_BLOCKS).enumerate().for_each(|(j, chunk)| {
        fill_chunk::<T, D>(chunk, ctr.wrapping_add((j * CHUNK_BLOCKS) as u64), key);
    });
    Ok(())
}

/// `chunk` filled from the blocks at counters `first, first + 1, ...`.
#[multiversion(targets("x86_64+avx512f+avx512vl+avx512cd+avx512bw+avx512dq", "x86_64+avx2"))]
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

#[cfg(test)]
mod tests {
    use super::super::{Normals, Uniforms, philox4x32_10};
    use super::*;

    /// The block-at-a-time fill the lanes replace.
    fn one_by_one<T: Element, D: Draw<T>>(n: usize, first: u64, key: [u32; 2]) -> Vec<T> {
        let per = D::PER_BLOCK as usize;
        let mut out = vec![T::default(); n];
        for (b, values) in out.chunks_mut(per).enumerate() {
            let c = first.wrapping_add(b as u64);
            let w = D::values(&philox4x32_10([c as u32, (c >> 32) as u32, 0, 0], key));
            values.copy_from_slice(&w[..values.len()]);
        }
        out
    }

    fn agree<T: Element + std::fmt::Debug, D: Draw<T>>(poison: T) {
        let key = [0x1234_5678, 0x9abc_def0];
        // Partial blocks and groups of lanes; counters carrying into the
        // high word and wrapping past the last block.
        for first in [0, 5, 0xffff_fff7, u64::MAX - 20] {
            for n in [1, 3, 4, 5, 63, 64, 65, 4 * LANES + 3, 1000] {
                let mut got = vec![poison; n];
                fill_chunk::<T, D>(&mut got, first, key);
                let want = one_by_one::<T, D>(n, first, key);
                let bits = |v: &[T]| v.iter().map(|x| bytemuck::bytes_of(x).to_vec()).collect::<Vec<_>>();
                assert!(bits(&got) == bits(&want), "{n} values from block {first:#x}");
            }
        }
    }

    #[test]
    fn lanes_give_the_blocks_of_the_scalar_cipher() {
        agree::<u32, Uniforms>(7);
        agree::<f32, Uniforms>(f32::NAN);
        agree::<f64, Uniforms>(f64::NAN);
        agree::<f32, Normals>(f32::NAN);
        agree::<f64, Normals>(f64::NAN);
    }
}
