//! CPU implementation of compaction, the reference: in parallel over fixed
//! chunks (each chunk's kept count, then each chunk writes its kept
//! elements from its offset), so the output keeps the input's order.

use kiln_core::{Error, HostArgs, Result};
use multiversion::multiversion;
use rayon::prelude::*;

use super::Predicate;
use crate::{prefetch, Number};

/// Elements per rayon task.
const CHUNK: usize = 1 << 16;

/// Arguments as the CUDA kernel takes them: (x, out, count, status, aggs,
/// incls, value, n); out[0..count) gets the kept elements (or their
/// indices when `INDICES`), count[0] their number, and nothing else is
/// written. `out` holds at least as many elements as `x` (the API checks).
pub(crate) fn copy_if<T: Number, const PRED: u8, const INDICES: bool>(args: &mut HostArgs<'_>) -> Result<()> {
    let value = args.scalar::<T>(6)?;
    // The predicate's kind is a constant here, so each test compiles to one comparison.
    let test = move |v: T| Predicate::from_code(PRED, value).test(v);
    let x = args.input::<T>(0)?;
    let counts: Vec<usize> = x.par_chunks(CHUNK).map(|c| c.iter().filter(|&&v| test(v)).count()).collect();
    let written = if INDICES {
        scatter(args.output::<u32>(1)?, x, &counts, |i, _| i as u32, &test)?
    } else {
        scatter(args.output::<T>(1)?, x, &counts, |_, v| v, &test)?
    };
    let count = args.output::<u64>(2)?;
    *count.first_mut().ok_or_else(|| Error::invalid("copy_if on the CPU", "the count buffer is empty"))? =
        written as u64;
    Ok(())
}

/// Write `value(i, x[i])` of every kept element into `out` in order, chunk
/// `k` from the sum of the counts before it; the number written.
fn scatter<T: Number, O: Copy + Default + Send>(
    out: &mut [O],
    x: &[T],
    counts: &[usize],
    value: impl Fn(usize, T) -> O + Sync,
    test: &(impl Fn(T) -> bool + Sync),
) -> Result<usize> {
    let total: usize = counts.iter().sum();
    if out.len() < total {
        return Err(Error::invalid(
            "copy_if on the CPU",
            format!("{total} elements kept, the output holds {}", out.len()),
        ));
    }
    // Each chunk's own part of the output, split off in order.
    let mut parts = Vec::with_capacity(counts.len());
    let mut rest = &mut out[..total];
    for &n in counts {
        let (part, tail) = rest.split_at_mut(n);
        parts.push(part);
        rest = tail;
    }
    parts
        .into_par_iter()
        .zip(x.par_chunks(CHUNK))
        .enumerate()
        .for_each(|(k, (part, chunk))| keep(part, chunk, k * CHUNK, &value, test));
    Ok(total)
}

/// Write `value(first + i, chunk[i])` of every kept element of `chunk`
/// into `part` in order; built also for AVX2 and chosen at run time.
#[multiversion(targets("x86_64+avx2"))]
fn keep<T: Number, O: Copy + Default, F: Fn(usize, T) -> O, P: Fn(T) -> bool>(
    part: &mut [O],
    chunk: &[T],
    first: usize,
    value: &F,
    test: &P,
) {
    // Without a branch per element (half of them mispredicted on mixed
    // data): each element is written to the next free slot of a small
    // block, which advances only when the element is kept.
    let mut block = [O::default(); BLOCK + 1];
    let mut written = 0;
    for (b, run) in chunk.chunks(BLOCK).enumerate() {
        if let Some(ahead) = chunk.get((b + AHEAD) * BLOCK..) {
            prefetch::lines(&ahead[..ahead.len().min(BLOCK)]);
        }
        let mut n = 0;
        for (i, &v) in run.iter().enumerate() {
            block[n] = value(first + b * BLOCK + i, v);
            n += usize::from(test(v));
        }
        part[written..written + n].copy_from_slice(&block[..n]);
        written += n;
    }
}

/// Elements of a chunk compacted through one block.
const BLOCK: usize = 256;
/// How many blocks ahead of the one compacted its input is asked for.
const AHEAD: usize = 2;
