//! CPU implementation of the radix sort's three kernels: the same tiles,
//! histograms and scatter as the GPUs, so the CPU runs the same passes.

use std::sync::atomic::{AtomicU32, Ordering};

use kiln_core::{Error, HostArgs, Result};
use rayon::prelude::*;

use super::plan::CPU_TILE;
use super::program::{FLAG_GEN_INDEX, FLAG_MAP, FLAG_NO_KEYS, FLAG_UNMAP, FLAG_VALUES};
use super::SortKey;

/// The arguments every phase receives: (keys_in, vals_in, keys_out,
/// vals_out, hist, totals, n, tiles, shift, flags).
struct Scalars {
    n: usize,
    tiles: usize,
    shift: u32,
    flags: u32,
}

fn scalars(args: &HostArgs<'_>) -> Result<Scalars> {
    Ok(Scalars {
        n: args.scalar::<u64>(6)? as usize,
        tiles: args.scalar::<u32>(7)? as usize,
        shift: args.scalar::<u32>(8)?,
        flags: args.scalar::<u32>(9)?,
    })
}

/// The pass's pattern of `key`: mapped (and for a descending sort
/// complemented) when the pass reads the caller's keys, as is otherwise.
fn bits<K: SortKey, const DESC: bool>(key: K, flags: u32) -> u32 {
    let raw = key.raw();
    match (flags & FLAG_MAP != 0, DESC) {
        (false, _) => raw,
        (true, false) => K::map(raw),
        (true, true) => !K::map(raw),
    }
}

/// The caller's key bits of a pattern.
fn unbits<K: SortKey, const DESC: bool>(pattern: u32) -> u32 {
    K::unmap(if DESC { !pattern } else { pattern })
}

/// hist[d * tiles + t] = count of digit d in tile t.
pub(crate) fn upsweep<K: SortKey, const DESC: bool>(args: &mut HostArgs<'_>) -> Result<()> {
    let s = scalars(args)?;
    let keys = args.input::<K>(0)?;
    let hist = args.output::<u32>(4)?;
    let counts: Vec<[u32; 256]> = keys[..s.n]
        .par_chunks(CPU_TILE)
        .map(|tile| {
            let mut c = [0u32; 256];
            for &k in tile {
                c[((bits::<K, DESC>(k, s.flags) >> s.shift) & 255) as usize] += 1;
            }
            c
        })
        .collect();
    if s.tiles == 0 {
        return Ok(());
    }
    let have = hist.len();
    let rows = hist
        .get_mut(..256 * s.tiles)
        .ok_or_else(|| Error::invalid("radix sort upsweep (CPU)", format!("{have} counters for {} tiles", s.tiles)))?;
    // One digit's row of every tile per task.
    rows.par_chunks_mut(s.tiles).enumerate().for_each(|(d, row)| {
        for (slot, c) in row.iter_mut().zip(&counts) {
            *slot = c[d];
        }
    });
    Ok(())
}

/// Each row of hist becomes its exclusive prefix sum; totals[d] its sum.
pub(crate) fn scan(args: &mut HostArgs<'_>) -> Result<()> {
    let s = scalars(args)?;
    let hist = args.output::<u32>(4)?;
    let totals = args.output::<u32>(5)?;
    if s.tiles == 0 {
        totals.fill(0);
        return Ok(());
    }
    hist.par_chunks_mut(s.tiles).zip(totals.par_iter_mut()).for_each(|(row, total)| {
        let mut sum = 0u32;
        for v in row.iter_mut() {
            let c = *v;
            *v = sum;
            sum += c;
        }
        *total = sum;
    });
    Ok(())
}

/// The stable scatter: each key to base[d] + hist[d][tile] + (earlier keys
/// of d in its tile), the tiles in parallel.
///
/// The tiles' output ranges are disjoint when the keys are what the upsweep
/// counted. Written through relaxed atomic stores (plain stores on the
/// machines kiln runs on), so that keys changed meanwhile by another stream,
/// which would make two tiles meet, give unspecified output, never a data
/// race; a destination past the end is an error.
pub(crate) fn downsweep<K: SortKey, const DESC: bool>(args: &mut HostArgs<'_>) -> Result<()> {
    let s = scalars(args)?;
    let (keys_in, vals_in) = (args.input::<K>(0)?, args.input::<u32>(1)?);
    let (hist, totals) = (args.output::<u32>(4)?, args.output::<u32>(5)?);
    let (hist, totals) = (&*hist, &*totals);
    let keys_out = words(args.output::<K>(2)?);
    let vals_out = words(args.output::<u32>(3)?);
    let mut base = [0u32; 256];
    let mut sum = 0u32;
    for (b, &t) in base.iter_mut().zip(totals.iter()) {
        *b = sum;
        sum = sum.wrapping_add(t);
    }
    let (write_keys, move_vals) = (s.flags & FLAG_NO_KEYS == 0, s.flags & FLAG_VALUES != 0);
    let (keys_len, vals_len) = (keys_out.len(), vals_out.len());
    keys_in[..s.n].par_chunks(CPU_TILE).enumerate().try_for_each(|(t, tile)| {
        let mut next: [u32; 256] = std::array::from_fn(|d| base[d].wrapping_add(hist[d * s.tiles + t]));
        for (i, &k) in tile.iter().enumerate() {
            let idx = t * CPU_TILE + i;
            let b = bits::<K, DESC>(k, s.flags);
            let d = ((b >> s.shift) & 255) as usize;
            let dst = next[d] as usize;
            next[d] = next[d].wrapping_add(1);
            if dst >= s.n || (write_keys && dst >= keys_len) || (move_vals && dst >= vals_len) {
                return Err(Error::invalid(
                    "radix sort scatter (CPU)",
                    format!("key {idx} goes to {dst}, past {} keys: the keys changed during the sort", s.n),
                ));
            }
            if write_keys {
                let out = if s.flags & FLAG_UNMAP != 0 { unbits::<K, DESC>(b) } else { b };
                keys_out[dst].store(out, Ordering::Relaxed);
            }
            if move_vals {
                let v = if s.flags & FLAG_GEN_INDEX != 0 { idx as u32 } else { vals_in[idx] };
                vals_out[dst].store(v, Ordering::Relaxed);
            }
        }
        Ok(())
    })
}

/// A slice of 4-byte keys or values as atomic words.
fn words<T: bytemuck::Pod>(s: &mut [T]) -> &[AtomicU32] {
    const { assert!(size_of::<T>() == 4 && align_of::<T>() == 4) };
    // SAFETY: T is 4 bytes at 4-byte alignment, as AtomicU32 is, and every
    // bit pattern is a valid T (Pod); the exclusive borrow is held for the
    // result's lifetime, so nothing else reads or writes the memory meanwhile.
    unsafe { std::slice::from_raw_parts(s.as_mut_ptr().cast::<AtomicU32>(), s.len()) }
}
