//! CPU implementation of the radix sort's three kernels: the same tiles,
//! histograms and scatter as the GPUs, so the CPU runs the same passes.

use kiln_core::{HostArgs, Result};
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
    for (t, c) in counts.iter().enumerate() {
        for (d, &v) in c.iter().enumerate() {
            hist[d * s.tiles + t] = v;
        }
    }
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

/// The stable scatter: each key to base[d] + hist[d][tile] + (earlier keys of d in its tile).
pub(crate) fn downsweep<K: SortKey, const DESC: bool>(args: &mut HostArgs<'_>) -> Result<()> {
    let s = scalars(args)?;
    let (keys_in, vals_in) = (args.input::<K>(0)?, args.input::<u32>(1)?);
    let (hist, totals) = (args.output::<u32>(4)?, args.output::<u32>(5)?);
    let keys_out = args.output::<K>(2)?;
    let vals_out = args.output::<u32>(3)?;
    let mut base = [0u32; 256];
    let mut sum = 0u32;
    for (b, &t) in base.iter_mut().zip(totals.iter()) {
        *b = sum;
        sum += t;
    }
    for (t, tile) in keys_in[..s.n].chunks(CPU_TILE).enumerate() {
        let mut next: [u32; 256] = std::array::from_fn(|d| base[d] + hist[d * s.tiles + t]);
        for (i, &k) in tile.iter().enumerate() {
            let idx = t * CPU_TILE + i;
            let b = bits::<K, DESC>(k, s.flags);
            let d = ((b >> s.shift) & 255) as usize;
            let dst = next[d] as usize;
            next[d] += 1;
            if s.flags & FLAG_NO_KEYS == 0 {
                let out = if s.flags & FLAG_UNMAP != 0 { unbits::<K, DESC>(b) } else { b };
                keys_out[dst] = K::from_raw(out);
            }
            if s.flags & FLAG_VALUES != 0 {
                vals_out[dst] = if s.flags & FLAG_GEN_INDEX != 0 { idx as u32 } else { vals_in[idx] };
            }
        }
    }
    Ok(())
}
