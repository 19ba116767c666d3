//! CPU implementation of compaction, the reference: in parallel over fixed
//! chunks in one pass (each chunk's kept count, then the chunk writes its
//! kept elements from the sum of the counts before it), so the output keeps
//! the input's order.

use kiln_core::{Error, Result};
use multiversion::multiversion;
use std::sync::{Mutex, PoisonError};

use super::Predicate;
use crate::{Number, chain, prefetch};

/// Elements per rayon task.
const CHUNK: usize = 1 << 16;

/// `out[0..count)` = the elements of `x` that pass the predicate of kind
/// `PRED` against `value`, in order, and `count[0]` their number; nothing
/// else is written. The arguments are the CUDA kernel's (its look-back
/// state, `status`, `aggs` and `incls`, unused here); `out` holds at least
/// as many elements as `x` (the API checks).
#[allow(clippy::too_many_arguments)]
pub(crate) fn copy_if<T: Number, const PRED: u8>(
    x: &[T],
    out: &mut [T],
    count: &mut [u64],
    _status: &mut [u64],
    _aggs: &mut [u64],
    _incls: &mut [u64],
    value: T,
    _n: u64,
) -> Result<()> {
    let pred = Predicate::decode(PRED, value, "copy_if on the CPU")?;
    let test = move |v: T| pred.test(v);
    // Outputs that cannot stay in cache are written past it.
    let stream = size_of_val(x) >= crate::stream_store::STREAM_FROM;
    let written = scatter(out, x, &test, |part, chunk, first| {
        let vector = bytemuck::try_cast_slice_mut::<T, u32>(part)
            .is_ok_and(|bits| vector_keep::<T, PRED>(value, false, bits, chunk, first, stream));
        if !vector {
            keep(part, chunk, first, &|_, v| v, &test);
        }
    })?;
    put_count(count, written)
}

/// [`copy_if`] writing the indices of the kept elements.
#[allow(clippy::too_many_arguments)]
pub(crate) fn copy_if_indices<T: Number, const PRED: u8>(
    x: &[T],
    out: &mut [u32],
    count: &mut [u64],
    _status: &mut [u64],
    _aggs: &mut [u64],
    _incls: &mut [u64],
    value: T,
    _n: u64,
) -> Result<()> {
    // The predicate's kind is a constant here, so each test compiles to one comparison.
    let pred = Predicate::decode(PRED, value, "copy_if on the CPU")?;
    let test = move |v: T| pred.test(v);
    let stream = size_of_val(x) >= crate::stream_store::STREAM_FROM;
    let written = scatter(out, x, &test, |part, chunk, first| {
        if !vector_keep::<T, PRED>(value, true, part, chunk, first, stream) {
            keep(part, chunk, first, &|i, _| i as u32, &test);
        }
    })?;
    put_count(count, written)
}

/// `count[0] = written`.
fn put_count(count: &mut [u64], written: usize) -> Result<()> {
    *count.first_mut().ok_or_else(|| Error::invalid("copy_if on the CPU", "the count buffer is empty"))? =
        written as u64;
    Ok(())
}

/// Where the CPU has AVX-512 and `T` is a 4-byte type: write the kept
/// elements of `chunk` (or their indices from `first`) into `part` with
/// vector comparisons and packing, and return true. False, having written
/// nothing, where not.
fn vector_keep<T: Number, const PRED: u8>(
    value: T,
    indices: bool,
    part: &mut [u32],
    chunk: &[T],
    first: usize,
    stream: bool,
) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use super::cpu_x86::{self, Lanes, Write};
        let (Some(lanes), Ok(bits), Ok(chunk)) =
            (Lanes::of(T::DTYPE), bytemuck::try_cast::<T, u32>(value), bytemuck::try_cast_slice::<T, u32>(chunk))
        else {
            return false;
        };
        if !is_x86_feature_detected!("avx512f") {
            return false;
        }
        // `copy_if` has checked the code; an unknown one takes the scalar path.
        let Some(pred) = Predicate::from_code(PRED, ()) else {
            return false;
        };
        let operand = if pred == Predicate::NonZero { 0 } else { bits };
        // SAFETY: the CPU has AVX-512 (detected just above).
        let kept = unsafe { cpu_x86::keep(lanes, pred, operand, Write { indices, stream }, part, chunk, first as u32) };
        if stream {
            // Its streamed lines are ordered before the scalar path's
            // rewrite, if any, and before the chunk is handed on.
            crate::stream_store::fence();
        }
        // The count pass and the vector test agree, so every kept element
        // fits its part and fills it; the scalar path rewrites it otherwise.
        kept == Some(part.len())
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (value, indices, part, chunk, first, stream);
        false
    }
}

/// How many elements of `xs` pass `test`; its input asked for ahead of
/// the count, one line per 64 bytes counted.
fn count<T>(xs: &[T], test: impl Fn(T) -> bool) -> usize
where
    T: Copy,
{
    let line = (64 / size_of::<T>()).max(1);
    xs.chunks(line)
        .enumerate()
        .map(|(i, group)| {
            prefetch::stream(xs, i * line);
            group.iter().filter(|&&v| test(v)).count()
        })
        .sum()
}

/// Write each chunk's kept elements into `out` in order through `keep(part,
/// chunk, first)`, in one pass over memory ([`chain`]): a chunk's kept
/// elements are counted as it is read, its part of the output split off
/// after the parts of the chunks before it, and the chunk kept from cache.
/// Returns the number written.
fn scatter<T: Number, O: Send>(
    out: &mut [O],
    x: &[T],
    test: &(impl Fn(T) -> bool + Sync),
    keep: impl Fn(&mut [O], &[T], usize) + Sync,
) -> Result<usize> {
    if out.len() < x.len() {
        return Err(Error::invalid(
            "copy_if on the CPU",
            format!("the output holds {} elements, fewer than the {} of the input", out.len(), x.len()),
        ));
    }
    let chunk = |c: usize| &x[c * CHUNK..x.len().min((c + 1) * CHUNK)];
    // The output not yet split off; chunks split their parts in order.
    let rest = Mutex::new(out);
    let total = chain::in_order(
        x.len().div_ceil(CHUNK),
        0,
        |c| count(chunk(c), test),
        |_, &n, written| {
            let mut rest = rest.lock().unwrap_or_else(PoisonError::into_inner);
            let tail = std::mem::take(&mut *rest);
            let (part, tail) = tail.split_at_mut(n.min(tail.len()));
            *rest = tail;
            (written + n, part)
        },
        |c, _, _, part| keep(part, chunk(c), c * CHUNK),
    );
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
    let mut block = [O::default(); RUN + 1];
    let mut written = 0;
    for (b, run) in chunk.chunks(RUN).enumerate() {
        if let Some(ahead) = chunk.get((b + AHEAD) * RUN..) {
            prefetch::lines(&ahead[..ahead.len().min(RUN)]);
        }
        let mut n = 0;
        for (i, &v) in run.iter().enumerate() {
            block[n] = value(first + b * RUN + i, v);
            n += usize::from(test(v));
        }
        part[written..written + n].copy_from_slice(&block[..n]);
        written += n;
    }
}

/// Elements of a chunk compacted through the staging block at a time on
/// the CPU: a host-side run length, unrelated to the GPU block size
/// (`launch::BLOCK`).
const RUN: usize = 256;
/// How many runs ahead of the one compacted its input is asked for.
const AHEAD: usize = 2;
