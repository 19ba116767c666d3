//! CPU implementation of transpose.

use kiln_core::{Element, HostArgs, Result};
use rayon::prelude::*;

/// Output rows handled together: their reads of one input row stay in one
/// cache line run, so blocks of output rows cost one pass over the input.
const BLOCK_ROWS: usize = 16;

/// `out[c * rows + r] = in[r * cols + c]`; arguments (in, out, rows, cols).
pub(crate) fn transpose<T: Element>(args: &mut HostArgs<'_>) -> Result<()> {
    let input = args.input::<T>(0)?;
    let rows = args.scalar::<u64>(2)? as usize;
    let cols = args.scalar::<u64>(3)? as usize;
    let out = args.output::<T>(1)?;
    if rows == 0 || cols == 0 {
        return Ok(());
    }
    // Each chunk is BLOCK_ROWS output rows (input columns c0..c0 + BLOCK_ROWS).
    out.par_chunks_mut(rows * BLOCK_ROWS).enumerate().for_each(|(block, chunk)| {
        let c0 = block * BLOCK_ROWS;
        for r in 0..rows {
            let row = &input[r * cols..(r + 1) * cols];
            for (dc, out_row) in chunk.chunks_mut(rows).enumerate() {
                out_row[r] = row[c0 + dc];
            }
        }
    });
    Ok(())
}
