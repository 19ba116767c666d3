//! CPU implementation of the radix sort's three kernels: the same passes,
//! per-tile histograms and stable scatter as the GPUs' three-phase sort,
//! over fewer and larger tiles (about four per thread).

use kiln_core::{Error, HostArgs, Result};
use rayon::prelude::*;

use super::SortKey;
use super::cpu_scatter::{Direct, Sink, Streamed, runs};
use super::types::{FLAG_GEN_INDEX, FLAG_MAP, FLAG_NO_KEYS, FLAG_UNMAP, FLAG_VALUES};

/// Sorts of this many keys and more scatter through [`Streamed`] sinks:
/// their output does not stay in cache for the next pass anyway.
const STREAM_FROM: usize = if cfg!(test) { 1 << 12 } else { 1 << 23 };

/// The scalars every phase receives.
struct Scalars {
    n: usize,
    /// Keys per tile (the last may have fewer).
    tile: usize,
    tiles: usize,
    shift: u32,
    flags: u32,
}

/// The arguments every phase receives, taken by type.
struct Phase<'a, K> {
    keys_in: &'a [K],
    vals_in: &'a [u32],
    keys_out: &'a mut [K],
    vals_out: &'a mut [u32],
    hist: &'a mut [u32],
    totals: &'a mut [u32],
    s: Scalars,
}

/// `run` with the phase's arguments: (keys_in, vals_in, keys_out, vals_out,
/// hist, totals, n, tiles, shift, flags).
fn phase<K: SortKey>(args: &mut HostArgs<'_>, run: impl FnOnce(Phase<'_, K>) -> Result<()>) -> Result<()> {
    args.call(
        |keys_in: &[K],
         vals_in: &[u32],
         keys_out: &mut [K],
         vals_out: &mut [u32],
         hist: &mut [u32],
         totals: &mut [u32],
         n: u64,
         tiles: u32,
         shift: u32,
         flags: u32| {
            let (n, tiles) = (n as usize, tiles as usize);
            // The launch counted `tiles` tiles of `cpu_tile(n)` keys; tiles
            // of this size are as many.
            let tile = n.div_ceil(tiles.max(1)).max(1);
            if tiles != n.div_ceil(tile) {
                return Err(Error::invalid("radix sort (CPU)", format!("{tiles} tiles for {n} keys")));
            }
            let s = Scalars { n, tile, tiles, shift, flags };
            run(Phase { keys_in, vals_in, keys_out, vals_out, hist, totals, s })
        },
    )
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
    phase::<K>(args, |p| upsweep_into::<K, DESC>(p.keys_in, p.hist, &p.s))
}

/// [`upsweep`]'s work.
fn upsweep_into<K: SortKey, const DESC: bool>(keys: &[K], hist: &mut [u32], s: &Scalars) -> Result<()> {
    let counts: Vec<[u32; 256]> = keys[..s.n]
        .par_chunks(s.tile)
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

/// Each row of hist becomes its exclusive prefix sum; `totals[d]` its sum.
pub(crate) fn scan<K: SortKey>(args: &mut HostArgs<'_>) -> Result<()> {
    phase::<K>(args, |p| scan_counts(p.hist, p.totals, &p.s))
}

/// [`scan`]'s work.
fn scan_counts(hist: &mut [u32], totals: &mut [u32], s: &Scalars) -> Result<()> {
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

/// The stable scatter: each key to `base[d] + hist[d][tile]` + (earlier keys
/// of d in its tile), the tiles in parallel.
///
/// The output is first cut into the (digit, tile) runs the counts give, so
/// each tile writes only its own runs; keys changed since the upsweep
/// counted them (by another stream) make a tile overflow a run, which is an
/// error, or leave part of the output unwritten.
pub(crate) fn downsweep<K: SortKey, const DESC: bool>(args: &mut HostArgs<'_>) -> Result<()> {
    phase::<K>(args, downsweep_into::<K, DESC>)
}

/// [`downsweep`]'s work.
fn downsweep_into<K: SortKey, const DESC: bool>(p: Phase<'_, K>) -> Result<()> {
    let Phase { keys_in, vals_in, keys_out, vals_out, hist, totals, s } = p;
    let counts = run_counts(hist, totals, s.tiles)?;
    let (write_keys, move_vals) = (s.flags & FLAG_NO_KEYS == 0, s.flags & FLAG_VALUES != 0);
    let short =
        |what: &str, len: usize| Error::invalid("radix sort scatter (CPU)", format!("{len} {what} for {} keys", s.n));
    let keys_in = keys_in.get(..s.n).ok_or_else(|| short("keys", keys_in.len()))?;
    let vals_in = if move_vals && s.flags & FLAG_GEN_INDEX == 0 {
        vals_in.get(..s.n).ok_or_else(|| short("values", vals_in.len()))?
    } else {
        &[]
    };
    let unwritten = || (0..s.tiles * 256).map(|_| <&mut [u32]>::default()).collect::<Vec<_>>();
    let mut key_runs =
        if write_keys { runs(bytemuck::cast_slice_mut(keys_out), &counts, s.tiles, s.n)? } else { unwritten() };
    let mut val_runs = if move_vals { runs(vals_out, &counts, s.tiles, s.n)? } else { unwritten() };
    let scatter = match (write_keys, move_vals, s.n >= STREAM_FROM) {
        (true, false, false) => scatter_tile::<K, DESC, true, false, Direct>,
        (true, true, false) => scatter_tile::<K, DESC, true, true, Direct>,
        (false, true, false) => scatter_tile::<K, DESC, false, true, Direct>,
        (true, false, true) => scatter_tile::<K, DESC, true, false, Streamed>,
        (true, true, true) => scatter_tile::<K, DESC, true, true, Streamed>,
        (false, true, true) => scatter_tile::<K, DESC, false, true, Streamed>,
        (false, false, _) => return Ok(()),
    };
    keys_in
        .par_chunks(s.tile)
        .zip(key_runs.par_chunks_mut(256))
        .zip(val_runs.par_chunks_mut(256))
        .enumerate()
        .try_for_each(|(t, ((tile, keys), vals))| scatter(tile, t * s.tile, &s, keys, vals, vals_in))
}

/// The keys per (digit, tile) run, `counts[d * tiles + t]`, from the
/// scanned counters; an error if they do not rise.
fn run_counts(hist: &[u32], totals: &[u32], tiles: usize) -> Result<Vec<u32>> {
    let bad = || Error::invalid("radix sort scatter (CPU)", format!("counters of {tiles} tiles out of order"));
    let (hist, totals) = (hist.get(..256 * tiles).ok_or_else(bad)?, totals.get(..256).ok_or_else(bad)?);
    let mut counts = vec![0u32; 256 * tiles];
    if tiles == 0 {
        return Ok(counts);
    }
    for ((row, &total), out) in hist.chunks(tiles).zip(totals).zip(counts.chunks_mut(tiles)) {
        for (t, c) in out.iter_mut().enumerate() {
            let next = row.get(t + 1).copied().unwrap_or(total);
            *c = next.checked_sub(row[t]).ok_or_else(bad)?;
        }
    }
    Ok(counts)
}

/// A sink over one tile's runs of one output.
trait NewSink<'r, 'a>: Sink {
    fn over(runs: &'r mut [&'a mut [u32]]) -> Self;
}

impl<'r, 'a> NewSink<'r, 'a> for Direct<'r, 'a> {
    fn over(runs: &'r mut [&'a mut [u32]]) -> Self {
        Direct::new(runs)
    }
}

impl<'r, 'a> NewSink<'r, 'a> for Streamed<'r, 'a> {
    fn over(runs: &'r mut [&'a mut [u32]]) -> Self {
        Streamed::new(runs)
    }
}

/// Scatter one tile (its first key is key `first`) into its runs of keys
/// (`KEYS`) and of values (`VALS`: `vals_in`'s, or the keys' positions),
/// through sinks of kind `S`.
fn scatter_tile<'r, 'a, K: SortKey, const DESC: bool, const KEYS: bool, const VALS: bool, S: NewSink<'r, 'a>>(
    tile: &[K],
    first: usize,
    s: &Scalars,
    key_runs: &'r mut [&'a mut [u32]],
    val_runs: &'r mut [&'a mut [u32]],
    vals_in: &[u32],
) -> Result<()> {
    let (unmap, positions) = (s.flags & FLAG_UNMAP != 0, s.flags & FLAG_GEN_INDEX != 0);
    let vals_in = if VALS && !positions { &vals_in[first..first + tile.len()] } else { &[] };
    let (mut keys, mut vals) = (S::over(key_runs), S::over(val_runs));
    for (i, &k) in tile.iter().enumerate() {
        let b = bits::<K, DESC>(k, s.flags);
        let d = ((b >> s.shift) & 255) as usize;
        if KEYS {
            keys.push(d, if unmap { unbits::<K, DESC>(b) } else { b })?;
        }
        if VALS {
            vals.push(d, if positions { (first + i) as u32 } else { vals_in[i] })?;
        }
    }
    keys.finish()?;
    vals.finish()
}

#[cfg(test)]
mod tests {
    use kiln_core::Device;
    use kiln_cpu::Cpu;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use crate::sort::{SortKey, SortOrder, argsort, sort_into, sort_pairs};

    /// The stable order of `keys` by their sortable patterns, as positions.
    fn reference<K: SortKey>(keys: &[K], order: SortOrder) -> Vec<u32> {
        let mut perm: Vec<u32> = (0..keys.len() as u32).collect();
        let pattern = |i: &u32| {
            let p = K::map(keys[*i as usize].raw());
            if order == SortOrder::Descending { !p } else { p }
        };
        perm.sort_by_key(pattern);
        perm
    }

    fn check<K: SortKey>(draw: impl Fn(&mut ChaCha8Rng) -> K) {
        let dev = Device::<Cpu>::open(0).unwrap();
        let s = dev.stream();
        let mut rng = ChaCha8Rng::seed_from_u64(0x5EED);
        // Past the streamed threshold; with runs shorter and longer than a line.
        for n in [super::STREAM_FROM, 3 * 4096 + 5, 100_003] {
            let keys: Vec<K> = (0..n).map(|_| draw(&mut rng)).collect();
            let values: Vec<u32> = (0..n).map(|_| rng.random()).collect();
            for order in [SortOrder::Ascending, SortOrder::Descending] {
                let perm = reference(&keys, order);
                let want_keys: Vec<u32> = perm.iter().map(|&i| K::unmap(K::map(keys[i as usize].raw()))).collect();
                let want_values: Vec<u32> = perm.iter().map(|&i| values[i as usize]).collect();
                let input = s.upload(&keys).unwrap();
                let mut out = s.upload(&vec![K::from_raw(0xDEAD_BEEF); n]).unwrap();
                sort_into(&s, &input, &mut out, order).unwrap();
                let got: Vec<u32> = out.to_vec().unwrap().into_iter().map(K::raw).collect();
                assert!(got == want_keys, "sort_into of {n} {} keys ({order})", K::DTYPE);
                let (mut k, mut v) = (s.upload(&keys).unwrap(), s.upload(&values).unwrap());
                sort_pairs(&s, &mut k, &mut v, order).unwrap();
                let got: Vec<u32> = k.to_vec().unwrap().into_iter().map(K::raw).collect();
                assert!(got == want_keys, "sort_pairs keys of {n} {} keys ({order})", K::DTYPE);
                assert!(v.to_vec().unwrap() == want_values, "sort_pairs values of {n} {} keys ({order})", K::DTYPE);
                let mut positions = s.upload(&vec![u32::MAX; n]).unwrap();
                argsort(&s, &input, &mut positions, order).unwrap();
                assert!(positions.to_vec().unwrap() == perm, "argsort of {n} {} keys ({order})", K::DTYPE);
            }
        }
    }

    #[test]
    fn streamed_sorts_match_a_stable_reference() {
        check::<u32>(|r| r.random());
        // Few distinct values: long runs of equal keys, where stability shows.
        check::<i32>(|r| r.random_range(-3..3));
        check::<f32>(|r| match r.random_range(0..8u32) {
            0 => f32::NAN,
            1 => -0.0,
            2 => f32::NEG_INFINITY,
            _ => r.random_range(-1e3..1e3),
        });
    }
}
