//! CPU implementation of transpose.

use kiln_core::{Element, Error, HostArgs, Result};
use rayon::prelude::*;

use crate::prefetch;

/// Elements past each row of a tile's buffer, so that a buffer's column
/// does not fall in one cache set.
const PAD: usize = 8;
/// The largest tile buffer, in bytes (on a thread's stack).
const MAX_TILE_BYTES: usize = 288 << 10;

/// `out[c * rows + r] = in[r * cols + c]`; arguments (in, out, rows, cols).
pub(crate) fn transpose<T: Element>(args: &mut HostArgs<'_>) -> Result<()> {
    let input = args.input::<T>(0)?;
    let rows = args.scalar::<u64>(2)? as usize;
    let cols = args.scalar::<u64>(3)? as usize;
    let out = args.output::<T>(1)?;
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
    // Large tiles read and write long runs of each row, while the tasks
    // stay at least two per thread and a tile's buffer small enough for a
    // thread's stack.
    let per_task = cols / (2 * rayon::current_num_threads());
    let fits = |side: usize| per_task >= side && side * (side + PAD) * size_of::<T>() <= MAX_TILE_BYTES;
    let out = &mut out[..n];
    if fits(256) {
        tiles::<T, 256, { 256 * (256 + PAD) }>(input, out, rows, cols);
    } else if fits(128) {
        tiles::<T, 128, { 128 * (128 + PAD) }>(input, out, rows, cols);
    } else if fits(64) {
        tiles::<T, 64, { 64 * (64 + PAD) }>(input, out, rows, cols);
    } else {
        tiles::<T, 32, { 32 * (32 + PAD) }>(input, out, rows, cols);
    }
    Ok(())
}

/// `out[c * rows + r] = input[r * cols + c]` for the `rows x cols` matrix
/// `input` (`out` holds exactly its elements), in tiles of `TILE x TILE`
/// copied through a buffer of `TILE` rows of `TILE + PAD` (`LEN` in all).
fn tiles<T: Element, const TILE: usize, const LEN: usize>(input: &[T], out: &mut [T], rows: usize, cols: usize) {
    const { assert!(LEN == TILE * (TILE + PAD)) };
    let stride = TILE + PAD;
    // Each task: TILE output rows (input columns c0..), tile by tile along
    // them. A tile's input rows are copied whole into a buffer first: rows
    // of a power-of-two length lie in one cache set, so a tile read column
    // by column straight from them would evict its own lines.
    out.par_chunks_mut(rows * TILE).enumerate().for_each(|(block, chunk)| {
        let c0 = block * TILE;
        let w = chunk.len() / rows;
        let mut tile = [T::default(); LEN];
        for r0 in (0..rows).step_by(TILE) {
            let r1 = (r0 + TILE).min(rows);
            for (r, t) in (r0..r1).zip(tile.chunks_exact_mut(stride)) {
                t[..w].copy_from_slice(&input[r * cols + c0..r * cols + c0 + w]);
            }
            for (dc, out_row) in chunk.chunks_exact_mut(rows).enumerate() {
                // The next tile's input rows lie a row's length apart, so
                // no hardware prefetcher sees them coming: ask for one row
                // per output row written.
                if let Some(ahead) = input.get((r1 + dc) * cols + c0..(r1 + dc) * cols + c0 + w) {
                    prefetch::lines(ahead);
                }
                for (o, t) in out_row[r0..r1].iter_mut().zip(tile.chunks_exact(stride)) {
                    *o = t[dc];
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    fn check<const TILE: usize, const LEN: usize>(rng: &mut ChaCha8Rng) {
        for (rows, cols) in [(1, 1), (1, 300), (300, 1), (TILE, TILE), (TILE + 1, 2 * TILE - 1), (517, 263)] {
            let input: Vec<u32> = (0..rows * cols).map(|_| rng.random()).collect();
            let mut out = vec![u32::MAX; rows * cols];
            tiles::<u32, TILE, LEN>(&input, &mut out, rows, cols);
            for r in 0..rows {
                for c in 0..cols {
                    assert_eq!(
                        out[c * rows + r],
                        input[r * cols + c],
                        "({r}, {c}) of {rows} x {cols}, tiles of {TILE}"
                    );
                }
            }
        }
    }

    #[test]
    fn every_tile_size_transposes_every_shape() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        check::<32, { 32 * (32 + PAD) }>(&mut rng);
        check::<64, { 64 * (64 + PAD) }>(&mut rng);
        check::<128, { 128 * (128 + PAD) }>(&mut rng);
        check::<256, { 256 * (256 + PAD) }>(&mut rng);
    }
}
