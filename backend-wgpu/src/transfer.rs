//! Copies between host and device and within the device, and fills.
//!
//! wgpu copies whole 4-byte words only, never within one buffer, and clears
//! only to zero. Ranges that fit are one wgpu command; the others (u8 and
//! f16 views at odd positions, same-buffer copies, non-zero patterns) go
//! through a temporary buffer and kiln's byte kernels (`context/builtin.rs`).

use std::sync::{Arc, Mutex};

use kiln_core::{BackendKind, Error, Result};

use crate::context::{Batch, Context};
use crate::memory::{HostMemory, WgpuBuffer};
use crate::resources::{create_buffer, round4, STORAGE};

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

/// Upload `data` into `dst[dst_offset..]`: the bytes go into a mapped
/// staging buffer now, and a copy from it is recorded in stream order.
pub(crate) fn write(ctx: &Context, dst: &WgpuBuffer, dst_offset: u64, data: &[u8]) -> Result<()> {
    if data.is_empty() {
        return Ok(());
    }
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
        if is_word(dst_offset) && is_word(len) {
            batch.encoder(&ctx.device).copy_buffer_to_buffer(&staging, 0, &dst.raw, dst_offset, len);
            Ok(())
        } else {
            // The byte kernel reads a storage buffer, which a mappable one cannot be.
            let temp = temporary(ctx, batch, size)?;
            batch.encoder(&ctx.device).copy_buffer_to_buffer(&staging, 0, &temp, 0, size);
            encode_copy(ctx, batch, &temp, 0, &dst.raw, dst_offset, len)
        }
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

/// Copy `src[offset..offset + dst.len()]` into `dst`, blocking until the
/// device has run everything enqueued before and the data is here.
pub(crate) fn read(ctx: &Context, src: &WgpuBuffer, offset: u64, dst: &mut [u8]) -> Result<()> {
    if dst.is_empty() {
        return ctx.synchronize("read-back of 0 bytes");
    }
    let len = dst.len() as u64;
    let status: Arc<Mutex<Option<std::result::Result<(), wgpu::BufferAsyncError>>>> = Arc::default();
    let (readback, skip, marker) = {
        let mut batch = ctx.batch()?;
        let (readback, skip) = stage_read(ctx, &mut batch, src, offset, len)?;
        let slot = status.clone();
        batch.map_on_submit(&ctx.device, &readback, move |r| {
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(r);
        });
        let marker = ctx.submit(&mut batch)?;
        (readback, skip, marker)
    };
    // Complete only once the map callback above has returned (and those of
    // earlier submissions, whose errors the `take` below reports).
    ctx.wait(&marker, &format!("read-back of {len} bytes"))?;
    let mapped = status.lock().unwrap_or_else(|p| p.into_inner()).take();
    match mapped {
        Some(Ok(())) => {}
        Some(Err(e)) => return Err(map_error("read-back buffer", &e)),
        None => return Err(map_error("read-back buffer", &"the mapping did not complete with its submission")),
    }
    {
        let view = readback.get_mapped_range(..).map_err(|e| map_error("read-back buffer", &e))?;
        let bytes = view.get(skip as usize..(skip + len) as usize);
        dst.copy_from_slice(bytes.ok_or_else(|| map_error("read-back buffer", &"shorter than the range read"))?);
    }
    readback.unmap();
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
    ctx.record("fill", |batch| {
        if pattern.iter().all(|&b| b == 0) && is_word(offset) && is_word(len) {
            batch.encoder(&ctx.device).clear_buffer(&dst.raw, offset, Some(len));
        } else {
            ctx.builtins()?.fill(ctx, batch, &dst.raw, offset, len, pattern)?;
        }
        Ok(())
    })
}
