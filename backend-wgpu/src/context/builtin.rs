//! kiln's own kernels: byte-granular fills and copies (sources in `wgsl/`).
//!
//! wgpu's `clear_buffer` and `copy_buffer_to_buffer` take only offsets and
//! sizes in whole 4-byte words, and only clear to zero. Every fill (zeros
//! too: a launch stays in the launches' compute pass, see
//! [`encode_fill`](crate::transfer::encode_fill)) and the copies those
//! cannot do (u8 and f16 ranges at any offset) run through these kernels,
//! bound in chunks so that no binding passes the device's storage binding
//! limit.

use kiln_core::{BackendKind, Error, Result};

use super::{Batch, Context};
use crate::errors::{describe, scoped};
use crate::resources::{binding, checks_for, round4, storage_entry};

/// Workgroup size of both kernels (fixed in their sources).
const GROUP: u64 = 256;

/// Most bytes one dispatch covers, whatever the adapter allows: the byte
/// kernel's offsets are 32-bit.
const MAX_CHUNK: u64 = 1 << 30;

/// One compiled built-in kernel with its bind group layouts.
struct Builtin {
    pipeline: wgpu::ComputePipeline,
    buffers: wgpu::BindGroupLayout,
}

impl Builtin {
    fn new(ctx: &Context, name: &str, source: &str, storage: &[wgpu::BindGroupLayoutEntry]) -> Result<Self> {
        let device = &ctx.device;
        let build = || {
            let desc =
                wgpu::ShaderModuleDescriptor { label: Some(name), source: wgpu::ShaderSource::Wgsl(source.into()) };
            // SAFETY: both kernels index only words of their bindings: the
            // range arithmetic in `fill` and `copy` below sizes each binding
            // to cover every word a dispatch touches, and their loops end.
            let module = unsafe { device.create_shader_module_trusted(desc, checks_for(None)) };
            let buffers = device
                .create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor { label: Some(name), entries: storage });
            let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(name),
                bind_group_layouts: &[Some(&buffers), Some(&ctx.bindings.params)],
                immediate_size: 0,
            });
            let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(name),
                layout: Some(&layout),
                module: &module,
                entry_point: Some(name),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                cache: None,
            });
            Builtin { pipeline, buffers }
        };
        match scoped(device, build) {
            (builtin, None) => Ok(builtin),
            (_, Some(e)) => Err(Error::Compile {
                backend: BackendKind::Wgpu,
                kernel: name.to_string(),
                options: Vec::new(),
                log: describe(&e),
            }),
        }
    }

    /// Record one dispatch over `words` words with `buffers` at group 0 and `params` at group 1.
    fn dispatch(
        &self,
        ctx: &Context,
        batch: &mut Batch,
        buffers: &[wgpu::BindingResource<'_>],
        params: &[u32],
        words: u64,
    ) -> Result<()> {
        let bytes: Vec<u8> = params.iter().flat_map(|p| p.to_le_bytes()).collect();
        let (group1, offset) = ctx.params(batch, &bytes)?;
        let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers
            .iter()
            .enumerate()
            .map(|(i, r)| wgpu::BindGroupEntry { binding: i as u32, resource: r.clone() })
            .collect();
        let group0 = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &self.buffers,
            entries: &entries,
        });
        let groups = words.div_ceil(GROUP).clamp(1, u64::from(ctx.limits.max_compute_workgroups_per_dimension));
        let pass = batch.pass(&ctx.device);
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &group0, &[]);
        pass.set_bind_group(1, &group1, &[offset]);
        pass.dispatch_workgroups(groups as u32, 1, 1);
        Ok(())
    }
}

/// The built-in kernels of one device.
pub(crate) struct Builtins {
    fill: Builtin,
    copy: Builtin,
    fill4: Builtin,
    copy4: Builtin,
}

/// Bytes of one vector of the vector kernels.
const VEC: u64 = 16;

/// `pattern` rotated so that it starts at byte `at` of a fill that starts
/// its pattern at byte `start`.
fn pattern_from(pattern: &[u8], start: u64, at: u64) -> Vec<u8> {
    let n = pattern.len() as u64;
    (0..n).map(|k| pattern[((at + k - start) % n) as usize]).collect()
}

/// The bytes of `pattern` seen from an 8-byte-aligned position `base` of a
/// range that starts at `start`: byte `k` of the result is the pattern byte
/// at position `base + k`, as two little-endian words.
fn pattern_words(pattern: &[u8], start: u64, base: u64) -> (u32, u32) {
    let n = pattern.len() as u64;
    let mut bytes = [0u8; 8];
    for (k, b) in bytes.iter_mut().enumerate() {
        let phase = ((base + k as u64) % n + n - start % n) % n;
        *b = pattern[phase as usize];
    }
    (
        u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]),
        u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]),
    )
}

impl Builtins {
    pub(crate) fn new(ctx: &Context) -> Result<Self> {
        Ok(Builtins {
            fill: Builtin::new(
                ctx,
                "kiln_fill_bytes",
                include_str!("../wgsl/fill_bytes.wgsl"),
                &[storage_entry(0, false)],
            )?,
            copy: Builtin::new(
                ctx,
                "kiln_copy_bytes",
                include_str!("../wgsl/copy_bytes.wgsl"),
                &[storage_entry(0, true), storage_entry(1, false)],
            )?,
            fill4: Builtin::new(
                ctx,
                "kiln_fill_vec4",
                include_str!("../wgsl/fill_vec4.wgsl"),
                &[storage_entry(0, false)],
            )?,
            copy4: Builtin::new(
                ctx,
                "kiln_copy_vec4",
                include_str!("../wgsl/copy_vec4.wgsl"),
                &[storage_entry(0, true), storage_entry(1, false)],
            )?,
        })
    }

    /// Alignment of the bases the vector kernels bind from: a binding
    /// offset the device accepts that is also a whole vector.
    fn vec_align(ctx: &Context) -> u64 {
        Self::align(ctx).max(VEC)
    }

    /// Record a fill of `dst[offset..offset + len]` with `pattern` repeated
    /// from `offset` on: the 16-byte-aligned middle with 16-byte stores
    /// (when the pattern's length divides 16), the ends with the byte kernel.
    pub(crate) fn fill(
        &self,
        ctx: &Context,
        batch: &mut Batch,
        dst: &wgpu::Buffer,
        offset: u64,
        len: u64,
        pattern: &[u8],
    ) -> Result<()> {
        let end = offset + len;
        let (a, b) = (offset.next_multiple_of(VEC), end / VEC * VEC);
        if b <= a || !VEC.is_multiple_of(pattern.len() as u64) {
            return self.fill_bytes(ctx, batch, dst, offset, len, pattern);
        }
        if a > offset {
            self.fill_bytes(ctx, batch, dst, offset, a - offset, pattern)?;
        }
        let (align, chunk) = (Self::vec_align(ctx), Self::chunk(ctx));
        let mut at = a;
        while at < b {
            let n = chunk.min(b - at);
            let base = at / align * align;
            let (lo0, hi0) = pattern_words(pattern, offset, at);
            let (lo1, hi1) = pattern_words(pattern, offset, at + 8);
            let count = n / VEC;
            let params = [((at - base) / VEC) as u32, count as u32, 0, 0, lo0, hi0, lo1, hi1];
            self.fill4.dispatch(ctx, batch, &[binding(dst, base, at + n - base)], &params, count)?;
            at += n;
        }
        if end > b {
            self.fill_bytes(ctx, batch, dst, b, end - b, pattern_from(pattern, offset, b).as_slice())?;
        }
        Ok(())
    }

    /// Record a copy of `len` bytes (whole words) from `src[src_offset..]` to
    /// `dst[dst_offset..]` of two distinct buffers with 16-byte stores where
    /// both offsets sit alike in their 16-byte vectors (the ends with
    /// `copy_buffer_to_buffer`); `false`, recording nothing, where they do not.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn copy_words(
        &self,
        ctx: &Context,
        batch: &mut Batch,
        src: &wgpu::Buffer,
        src_offset: u64,
        dst: &wgpu::Buffer,
        dst_offset: u64,
        len: u64,
    ) -> Result<bool> {
        let head = (VEC - dst_offset % VEC) % VEC;
        if src_offset % VEC != dst_offset % VEC || len < head + VEC {
            return Ok(false);
        }
        let body = (len - head) / VEC * VEC;
        if head > 0 {
            batch.encoder(&ctx.device).copy_buffer_to_buffer(src, src_offset, dst, dst_offset, head);
        }
        let (align, chunk) = (Self::vec_align(ctx), Self::chunk(ctx));
        let mut done = head;
        while done < head + body {
            let n = chunk.min(head + body - done);
            let (s, d) = (src_offset + done, dst_offset + done);
            let (sb, db) = (s / align * align, d / align * align);
            let count = n / VEC;
            let params = [((s - sb) / VEC) as u32, ((d - db) / VEC) as u32, count as u32];
            let buffers = [binding(src, sb, s + n - sb), binding(dst, db, d + n - db)];
            self.copy4.dispatch(ctx, batch, &buffers, &params, count)?;
            done += n;
        }
        let tail = len - head - body;
        if tail > 0 {
            let at = head + body;
            batch.encoder(&ctx.device).copy_buffer_to_buffer(src, src_offset + at, dst, dst_offset + at, tail);
        }
        Ok(true)
    }

    /// Alignment of binding offsets (at least a word).
    fn align(ctx: &Context) -> u64 {
        u64::from(ctx.limits.min_storage_buffer_offset_alignment).max(4)
    }

    /// Bytes one dispatch covers: as many as a binding may hold once its
    /// offset is rounded down to the alignment and its end up to a word (so a whole fill or copy of
    /// up to that size is one dispatch, with no ramp and tail between
    /// chunks), whole vectors, at most `MAX_CHUNK`.
    fn chunk(ctx: &Context) -> u64 {
        let align = Self::vec_align(ctx);
        let limit = ctx.limits.max_storage_buffer_binding_size.min(ctx.limits.max_buffer_size);
        (limit.saturating_sub(2 * align) / align * align).clamp(align, MAX_CHUNK)
    }

    /// Record a fill of `dst[offset..offset + len]` with `pattern` repeated
    /// from `offset` on, one word per invocation. `dst` is allocated in whole words.
    fn fill_bytes(
        &self,
        ctx: &Context,
        batch: &mut Batch,
        dst: &wgpu::Buffer,
        offset: u64,
        len: u64,
        pattern: &[u8],
    ) -> Result<()> {
        let (align, chunk) = (Self::align(ctx), Self::chunk(ctx));
        let end = offset + len;
        let mut at = offset;
        while at < end {
            let n = chunk.min(end - at);
            let base = at / align * align;
            let size = round4(at + n) - base;
            let (first, stop) = (at - base, at - base + n);
            let (lo, hi) = pattern_words(pattern, offset, base);
            let words = (round4(stop) - first / 4 * 4) / 4;
            let params = [first as u32, stop as u32, (first / 4) as u32, words as u32, lo, hi];
            self.fill.dispatch(ctx, batch, &[binding(dst, base, size)], &params, words)?;
            at += n;
        }
        Ok(())
    }

    /// Record a copy of `len` bytes from `src[src_offset..]` to
    /// `dst[dst_offset..]`. The buffers are distinct (a buffer cannot be
    /// bound for reading and writing in one dispatch) and allocated in whole words.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn copy(
        &self,
        ctx: &Context,
        batch: &mut Batch,
        src: &wgpu::Buffer,
        src_offset: u64,
        dst: &wgpu::Buffer,
        dst_offset: u64,
        len: u64,
    ) -> Result<()> {
        let (align, chunk) = (Self::align(ctx), Self::chunk(ctx));
        let mut done = 0;
        while done < len {
            let n = chunk.min(len - done);
            let (s, d) = (src_offset + done, dst_offset + done);
            let (sb, db) = (s / align * align, d / align * align);
            let (s_size, d_size) = (round4(s + n) - sb, round4(d + n) - db);
            let first = d - db;
            let words = (round4(first + n) - first / 4 * 4) / 4;
            let params = [(s - sb) as u32, first as u32, n as u32, (first / 4) as u32, words as u32];
            self.copy.dispatch(ctx, batch, &[binding(src, sb, s_size), binding(dst, db, d_size)], &params, words)?;
            done += n;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::WgpuBuffer;
    use crate::transfer::{read, write};

    /// The first device kiln opens, if any.
    fn context() -> Option<std::sync::Arc<Context>> {
        crate::device::WgpuDevice::open(0, &[]).ok().map(|d| d.ctx.clone())
    }

    #[test]
    fn vector_copies_match_a_byte_copy_at_any_congruent_offsets() {
        let Some(ctx) = context() else { return };
        let n = 4096usize;
        let source: Vec<u8> = (0..n).map(|i| (i * 7 + 3) as u8).collect();
        let src = WgpuBuffer::new(&ctx, n).unwrap();
        write(&ctx, &src, 0, &source).unwrap();
        for (s_off, d_off, len) in [(0, 0, 4096), (16, 48, 1024), (4, 36, 2000), (12, 12, 20), (8, 8, 16), (4, 8, 64)] {
            let dst = WgpuBuffer::new(&ctx, n).unwrap();
            write(&ctx, &dst, 0, &vec![0xeeu8; n]).unwrap();
            let copied = ctx
                .record("test copy", |batch| {
                    ctx.builtins()?.copy_words(&ctx, batch, &src.raw, s_off, &dst.raw, d_off, len)
                })
                .unwrap();
            let mut got = vec![0u8; n];
            read(&ctx, &dst, 0, &mut got).unwrap();
            if s_off % VEC != d_off % VEC || len < (VEC - d_off % VEC) % VEC + VEC {
                assert!(!copied, "({s_off}, {d_off}, {len}) is not for the vector kernel");
                assert!(got.iter().all(|&b| b == 0xee), "nothing recorded");
                continue;
            }
            assert!(copied, "({s_off}, {d_off}, {len})");
            let (s, d, l) = (s_off as usize, d_off as usize, len as usize);
            let mut want = vec![0xeeu8; n];
            want[d..d + l].copy_from_slice(&source[s..s + l]);
            assert_eq!(got, want, "({s_off}, {d_off}, {len})");
        }
    }

    #[test]
    fn vector_fills_keep_the_pattern_phase_and_the_bytes_around() {
        let Some(ctx) = context() else { return };
        let n = 1024usize;
        for (pattern, off, len) in [
            (&[1u8, 2, 3, 4, 5, 6, 7, 8][..], 3u64, 1000u64),
            (&[9, 8][..], 17, 500),
            (&[7][..], 0, 1024),
            (&[1, 2, 3, 4][..], 6, 70),
        ] {
            let dst = WgpuBuffer::new(&ctx, n).unwrap();
            write(&ctx, &dst, 0, &vec![0xeeu8; n]).unwrap();
            ctx.record("test fill", |batch| ctx.builtins()?.fill(&ctx, batch, &dst.raw, off, len, pattern)).unwrap();
            let mut got = vec![0u8; n];
            read(&ctx, &dst, 0, &mut got).unwrap();
            let mut want = vec![0xeeu8; n];
            for k in 0..len as usize {
                want[off as usize + k] = pattern[k % pattern.len()];
            }
            assert_eq!(got, want, "{pattern:?} at {off}, {len} bytes");
        }
    }

    #[test]
    fn pattern_phase_follows_the_range_start() {
        let p = [1u8, 2, 3, 4, 5, 6, 7, 8];
        // A range starting at byte 16 seen from byte 16: the pattern as is.
        assert_eq!(pattern_words(&p, 16, 16), (0x04030201, 0x08070605));
        // Seen from byte 8 (earlier): the same, since 8 divides the shift.
        assert_eq!(pattern_words(&p, 16, 8), (0x04030201, 0x08070605));
        // A 2-byte pattern starting at byte 6, seen from byte 0: phase 0 at byte 6.
        assert_eq!(pattern_words(&[0xaa, 0xbb], 6, 0), (0xbbaabbaa, 0xbbaabbaa));
        // A 2-byte pattern starting at an odd byte flips the phase.
        assert_eq!(pattern_words(&[0xaa, 0xbb], 5, 0), (0xaabbaabb, 0xaabbaabb));
        // One byte: every byte is the pattern.
        assert_eq!(pattern_words(&[0x7f], 3, 0), (0x7f7f7f7f, 0x7f7f7f7f));
    }
}
