//! Copies between host and device and within the device, and fills.
//!
//! wgpu copies whole 4-byte words only, never within one buffer, and clears
//! only to zero. Ranges that fit are one wgpu command; the others (u8 and
//! f16 views at odd positions, same-buffer copies, non-zero patterns) go
//! through a temporary buffer and kiln's byte kernels (`context/builtin.rs`).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use kiln_core::{BackendKind, Error, Result};

use crate::context::{Batch, Context, Marker};
use crate::memory::{HostMemory, WgpuBuffer};
use crate::resources::{create_buffer, round4, STORAGE};
use crate::staging::{size_for, Direction, IN_FLIGHT};

fn is_word(n: u64) -> bool {
    n.is_multiple_of(4)
}

/// A device buffer for intermediate data, `len` bytes rounded up to words.
fn temporary(ctx: &Context, batch: &mut Batch, len: u64) -> Result<wgpu::Buffer> {
    let size = round4(len).max(4);
    batch.stage(size);
    create_buffer(&ctx.device, &ctx.info.name, "temporary buffer", size, STORAGE, false)
}

/// Copies of whole words at least this long between two buffers of a GPU
/// (not a software one, whose buffer copy is a `memcpy`) run as a 16-byte
/// vector kernel.
const KERNEL_COPY_BYTES: u64 = 1 << 20;

/// Record a copy of `len` bytes from `src[src_offset..]` to `dst[dst_offset..]`
/// for any offsets and length; when the buffers are the same the ranges
/// must not overlap.
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode_copy(
    ctx: &Context,
    batch: &mut Batch,
    src: &wgpu::Buffer,
    src_offset: u64,
    dst: &wgpu::Buffer,
    dst_offset: u64,
    len: u64,
) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    let words = is_word(src_offset) && is_word(dst_offset) && is_word(len);
    if src != dst {
        if words && len >= KERNEL_COPY_BYTES && ctx.info.kind.is_gpu() {
            // Some drivers copy buffers far below the memory's rate (NVIDIA's
            // Vulkan: 833 GB/s on an H100 where a kernel reaches 2400).
            if ctx.builtins()?.copy_words(ctx, batch, src, src_offset, dst, dst_offset, len)? {
                return Ok(());
            }
        }
        if words {
            batch.encoder(&ctx.device).copy_buffer_to_buffer(src, src_offset, dst, dst_offset, len);
        } else {
            ctx.builtins()?.copy(ctx, batch, src, src_offset, dst, dst_offset, len)?;
        }
        return Ok(());
    }
    // One buffer: wgpu copies only between distinct buffers, so go through a
    // temporary holding the source range widened to whole words.
    let start = src_offset / 4 * 4;
    let size = round4(src_offset + len) - start;
    let temp = temporary(ctx, batch, size)?;
    batch.encoder(&ctx.device).copy_buffer_to_buffer(src, start, &temp, 0, size);
    encode_copy(ctx, batch, &temp, src_offset - start, dst, dst_offset, len)
}

/// Upload `data` into `dst[dst_offset..]`: the bytes go into mapped
/// staging buffers now, and copies from them are recorded in stream order.
/// A large upload goes in [`CHUNK`](crate::staging::CHUNK)s, each submitted as it is filled, with
/// at most [`IN_FLIGHT`] of them waiting for the device (see `staging.rs`).
pub(crate) fn write(ctx: &Context, dst: &WgpuBuffer, dst_offset: u64, data: &[u8]) -> Result<()> {
    if data.is_empty() {
        return Ok(());
    }
    let len = data.len() as u64;
    if !(is_word(dst_offset) && is_word(len)) {
        return write_bytes(ctx, dst, dst_offset, data);
    }
    let size = size_for(len);
    let pieces = data.chunks(size as usize);
    let count = pieces.len();
    let kept = ctx.staging.for_transfer(Direction::Upload, size);
    let mut in_flight: VecDeque<Marker> = VecDeque::new();
    for (k, piece) in pieces.enumerate() {
        if in_flight.len() >= IN_FLIGHT {
            if let Some(oldest) = in_flight.pop_front() {
                ctx.wait(&oldest, &format!("upload of {len} bytes"))?;
            }
        }
        let staging = kept.take(&ctx.device, &ctx.info.name, Direction::Upload, size)?;
        {
            let mut view = staging.get_mapped_range_mut(..).map_err(|e| map_error("upload staging buffer", &e))?;
            view.slice(..piece.len()).copy_from_slice(piece);
        }
        staging.unmap();
        let at = dst_offset + (k as u64) * size;
        ctx.record("upload to device buffer", |batch| {
            batch.stage(piece.len() as u64);
            batch.encoder(&ctx.device).copy_buffer_to_buffer(&staging, 0, &dst.raw, at, piece.len() as u64);
            // Once copied out of, the buffer is mapped again and kept.
            let (kept, buffer) = (kept.clone(), staging.clone());
            batch.map_on_submit_as(&ctx.device, &staging, wgpu::MapMode::Write, move |r| {
                if r.is_ok() {
                    kept.give(buffer);
                }
            });
            Ok(())
        })?;
        // Pieces of a large upload go to the device as they are filled; the
        // last (or only) one stays in the batch like any other command.
        if k + 1 < count {
            in_flight.push_back(ctx.flush()?);
        }
    }
    Ok(())
}

/// Upload `data` to a range that is not whole words: through a fresh
/// staging buffer and a temporary, with kiln's byte kernels.
fn write_bytes(ctx: &Context, dst: &WgpuBuffer, dst_offset: u64, data: &[u8]) -> Result<()> {
    let len = data.len() as u64;
    let size = round4(len);
    let usage = wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC;
    let staging = create_buffer(&ctx.device, &ctx.info.name, "upload staging buffer", size, usage, true)?;
    {
        let mut view = staging.get_mapped_range_mut(..).map_err(|e| map_error("upload staging buffer", &e))?;
        view.slice(..data.len()).copy_from_slice(data);
    }
    staging.unmap();
    ctx.record("upload to device buffer", |batch| {
        batch.stage(size);
        // The byte kernel reads a storage buffer, which a mappable one cannot be.
        let temp = temporary(ctx, batch, size)?;
        batch.encoder(&ctx.device).copy_buffer_to_buffer(&staging, 0, &temp, 0, size);
        encode_copy(ctx, batch, &temp, 0, &dst.raw, dst_offset, len)
    })
}

fn map_error(what: &str, e: &dyn std::fmt::Display) -> Error {
    Error::driver(BackendKind::Wgpu, format!("map {what}"), e)
}

/// A read-back buffer holding `src[offset..offset + len]` widened to whole
/// words, the copy into it recorded; returns it and where the range starts in it.
fn stage_read(
    ctx: &Context,
    batch: &mut Batch,
    src: &WgpuBuffer,
    offset: u64,
    len: u64,
) -> Result<(wgpu::Buffer, u64)> {
    let start = offset / 4 * 4;
    let size = round4(offset + len) - start;
    let usage = wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST;
    let readback = create_buffer(&ctx.device, &ctx.info.name, "read-back buffer", size, usage, false)?;
    batch.stage(size);
    batch.encoder(&ctx.device).copy_buffer_to_buffer(&src.raw, start, &readback, 0, size);
    Ok((readback, offset - start))
}

/// One piece of a blocking read-back in flight: its kept buffer, the
/// outcome of its mapping, its submission, and where its bytes go.
struct Piece {
    buffer: wgpu::Buffer,
    status: Arc<Mutex<Option<std::result::Result<(), wgpu::BufferAsyncError>>>>,
    marker: Marker,
    /// Bytes of the piece's words to skip, and the range of `dst` they fill.
    skip: usize,
    to: std::ops::Range<usize>,
}

/// Copy `src[offset..offset + dst.len()]` into `dst`, blocking until the
/// device has run everything enqueued before and the data is here. The
/// words holding the range go through kept read-back buffers, a large
/// range in [`CHUNK`](crate::staging::CHUNK)s with up to [`IN_FLIGHT`] on the device while the
/// host copies out of the oldest.
pub(crate) fn read(ctx: &Context, src: &WgpuBuffer, offset: u64, dst: &mut [u8]) -> Result<()> {
    if dst.is_empty() {
        return ctx.synchronize("read-back of 0 bytes");
    }
    let len = dst.len() as u64;
    let what = format!("read-back of {len} bytes");
    let (start, end) = (offset / 4 * 4, round4(offset + len));
    let size = size_for(end - start);
    let kept = ctx.staging.for_transfer(Direction::ReadBack, size);
    let mut in_flight: VecDeque<Piece> = VecDeque::new();
    let mut from = start;
    while from < end || !in_flight.is_empty() {
        if from < end && in_flight.len() < IN_FLIGHT {
            let words = size.min(end - from);
            let buffer = kept.take(&ctx.device, &ctx.info.name, Direction::ReadBack, size)?;
            let status: Arc<Mutex<Option<std::result::Result<(), wgpu::BufferAsyncError>>>> = Arc::default();
            let marker = {
                let mut batch = ctx.batch()?;
                batch.stage(words);
                batch.encoder(&ctx.device).copy_buffer_to_buffer(&src.raw, from, &buffer, 0, words);
                let slot = status.clone();
                batch.map_on_submit(&ctx.device, &buffer, move |r| {
                    *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
                });
                ctx.submit(&mut batch)?
            };
            // The piece's bytes of the range: words [from, from + words) less
            // what lies before `offset` or after its end.
            let (lo, hi) = (from.max(offset), (from + words).min(offset + len));
            let to = (lo - offset) as usize..(hi - offset) as usize;
            in_flight.push_back(Piece { buffer, status, marker, skip: (lo - from) as usize, to });
            from += words;
            continue;
        }
        let Some(piece) = in_flight.pop_front() else { break };
        // Complete only once the map callback above has returned (and those of
        // earlier submissions, whose errors the `take` below reports).
        ctx.wait(&piece.marker, &what)?;
        let mapped = piece.status.lock().unwrap_or_else(|p| p.into_inner()).take();
        match mapped {
            Some(Ok(())) => {}
            Some(Err(e)) => return Err(map_error("read-back buffer", &e)),
            None => return Err(map_error("read-back buffer", &"the mapping did not complete with its submission")),
        }
        {
            let view = piece.buffer.get_mapped_range(..).map_err(|e| map_error("read-back buffer", &e))?;
            let bytes = view.get(piece.skip..piece.skip + piece.to.len());
            let bytes = bytes.ok_or_else(|| map_error("read-back buffer", &"shorter than the range read"))?;
            dst[piece.to.clone()].copy_from_slice(bytes);
        }
        piece.buffer.unmap();
        kept.give(piece.buffer);
    }
    ctx.faults.take()
}

/// Record a copy of `src[offset..offset + len]` into `dst[dst_offset..]`:
/// the data lands in a read-back buffer, and the callback that maps it
/// once its submission has run copies it into the host memory. That
/// callback runs in whichever thread next polls the device or submits; an
/// event recorded after this copy completes only once it has returned
/// ([`crate::completion`]). The callback holds `dst` (an `Arc`), so the
/// memory outlives it whatever happens to the host buffer meanwhile.
///
/// # Safety
/// - `dst_offset + len <= dst`'s length.
/// - The host neither reads nor writes `dst[dst_offset..dst_offset + len]`
///   until an event recorded after this call has completed.
pub(crate) unsafe fn read_async(
    ctx: &Context,
    src: &WgpuBuffer,
    offset: u64,
    dst: &Arc<HostMemory>,
    dst_offset: usize,
    len: u64,
) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    ctx.record("asynchronous read-back", |batch| {
        let (readback, skip) = stage_read(ctx, batch, src, offset, len)?;
        let (mem, faults, mapped) = (dst.clone(), ctx.faults.clone(), readback.clone());
        let n = len as usize;
        let on_mapped = move |r: std::result::Result<(), wgpu::BufferAsyncError>| {
            let copied = r.map_err(|e| e.to_string()).and_then(|()| {
                let view = mapped.get_mapped_range(..).map_err(|e| e.to_string())?;
                let bytes = view.get(skip as usize..skip as usize + n).ok_or("shorter than the range read")?;
                // SAFETY: the range is inside the host buffer, and the host
                // does not touch it until an event recorded after this copy
                // has completed (both by this function's contract), which
                // happens only after this callback has returned.
                unsafe { mem.range_mut(dst_offset, n) }.copy_from_slice(bytes);
                Ok(())
            });
            mapped.unmap();
            if let Err(e) = copied {
                faults.note(format!("asynchronous read-back of {n} bytes failed: {e}"));
            }
        };
        batch.map_on_submit(&ctx.device, &readback, on_mapped);
        Ok(())
    })
}

/// Record a fill of `dst[offset..offset + len]` with `pattern` repeated.
pub(crate) fn fill(ctx: &Context, dst: &WgpuBuffer, offset: u64, len: u64, pattern: &[u8]) -> Result<()> {
    if len == 0 {
        return Ok(());
    }
    ctx.record("fill", |batch| encode_fill(ctx, batch, &dst.raw, offset, len, pattern))
}

/// Record a fill of `dst[offset..offset + len]` (`len` > 0) with `pattern`
/// repeated. On a GPU, with kiln's fill kernel, zeros included: a launch in
/// the launches' compute pass, where wgpu's `clear_buffer` is a transfer
/// between passes with barriers on each side. Measured on an H200's Vulkan
/// driver (`benches/results/h200-2026-12-03-g-*`): a histogram of 1 Mi i32
/// (two fills, one launch) back to back took 12.7 us a call so, 18.9 with
/// clears, whose kernel alone took 9.1; the bench's 64 Mi histogram 100 us
/// against 107, its 1 Mi sort 99 against 117; the other patterns that zero
/// a buffer first did not move. On a software adapter (a CPU, whose clear
/// is a memset) whole words of zeros are still cleared.
pub(crate) fn encode_fill(
    ctx: &Context,
    batch: &mut Batch,
    dst: &wgpu::Buffer,
    offset: u64,
    len: u64,
    pattern: &[u8],
) -> Result<()> {
    let software = ctx.info.kind.is_software();
    if software && pattern.iter().all(|&b| b == 0) && is_word(offset) && is_word(len) {
        batch.encoder(&ctx.device).clear_buffer(dst, offset, Some(len));
        return Ok(());
    }
    ctx.builtins()?.fill(ctx, batch, dst, offset, len, pattern)
}
