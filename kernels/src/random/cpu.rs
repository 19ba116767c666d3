//! CPU implementation of the Philox fills.

use kiln_core::{Element, HostArgs, Result};
use rayon::prelude::*;

use super::{philox4x32_10, Draw};

/// Blocks per rayon task: large enough that scheduling costs nothing.
const CHUNK_BLOCKS: usize = 4096;

/// `dst` filled from the stream at the counter; arguments (dst, seed_lo,
/// seed_hi, ctr_lo, ctr_hi, one, zero, n).
pub(crate) fn fill<T: Element, D: Draw<T>>(args: &mut HostArgs<'_>) -> Result<()> {
    let key = [args.scalar::<u32>(1)?, args.scalar::<u32>(2)?];
    let ctr = u64::from(args.scalar::<u32>(3)?) | (u64::from(args.scalar::<u32>(4)?) << 32);
    let per = D::PER_BLOCK as usize;
    args.output::<T>(0)?.par_chunks_mut(per * CHUNK_BLOCKS).enumerate().for_each(|(j, chunk)| {
        for (b, values) in chunk.chunks_mut(per).enumerate() {
            let c = ctr.wrapping_add((j * CHUNK_BLOCKS + b) as u64);
            let w = D::values(&philox4x32_10([c as u32, (c >> 32) as u32, 0, 0], key));
            values.copy_from_slice(&w[..values.len()]);
        }
    });
    Ok(())
}
