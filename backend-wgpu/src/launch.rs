//! Kernel launches, following the WGSL ABI of kernels/README.md.
//!
//! - Buffer arguments bind in order at `@group(0) @binding(i)`, each from
//!   the view's first byte, its size rounded up to whole words (so
//!   `arrayLength` may count up to 3 bytes past a view of u8 or f16; kernels
//!   take their lengths as scalars). A view whose offset is not a multiple
//!   of `min_storage_buffer_offset_alignment` is copied into a temporary
//!   buffer, bound there, and (when writable) copied back after the
//!   dispatch. An empty view binds a small scratch buffer.
//! - A view larger than `max_storage_buffer_binding_size` is refused with
//!   `Unsupported` naming that limit: kiln does not split launches.
//! - Scalars are packed into one uniform at `@group(1) @binding(0)` (see
//!   [`crate::params`]).
//! - `LaunchConfig::block` sets the `block_x`, `block_y`, `block_z`
//!   overrides the module declares; the grid is `dispatch_workgroups`.
//! - Dynamic shared memory does not exist in WGSL: `Unsupported`.

use std::sync::Arc;

use kiln_core::{BackendKind, Error, LaunchConfig, RawArg, Result, Scalar};

use crate::bindings::{make_group, Range};
use crate::context::{Batch, Context};
use crate::errors::{describe, scoped};
use crate::kernel::{Pipeline, PipelineKey, WgpuKernel};
use crate::memory::WgpuBuffer;
use crate::params::{pack, Packed};
use crate::reflect::Member;
use crate::resources::{create_buffer, round4, STORAGE};
use crate::transfer::encode_copy;
use crate::Wgpu;

/// Size of the scratch binding for empty views: at least one element of
/// any array a kernel may declare.
const EMPTY_BINDING: u64 = 256;

/// One buffer argument.
struct BufferArg<'a> {
    buffer: &'a WgpuBuffer,
    offset: u64,
    len: u64,
    writable: bool,
    /// Its position among all arguments, for messages.
    position: usize,
    /// Whether its binding is `read_write` (as the kernel declares it, else as passed).
    bind_writable: bool,
    /// The least bytes the kernel's declaration needs bound.
    min_bytes: u64,
}

fn check_params(kernel: &str, members: &[Member], scalars: &[Scalar], packed: &Packed) -> Result<()> {
    let invalid = |reason: String| Err(Error::InvalidLaunch { kernel: kernel.to_string(), reason });
    if members.len() != scalars.len() {
        let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
        return invalid(format!(
            "the kernel's scalar struct has {} member(s) ({}) but the launch passes {} scalar argument(s)",
            members.len(),
            names.join(", "),
            scalars.len()
        ));
    }
    for (k, ((m, s), &offset)) in members.iter().zip(scalars).zip(&packed.offsets).enumerate() {
        if m.dtype != Some(s.dtype()) {
            let declared = m.dtype.map_or("not a scalar", |d| d.name());
            return invalid(format!(
                "scalar argument {k} is {} but the kernel's member `{}` is {declared}",
                s.dtype(),
                m.name
            ));
        }
        if m.offset != offset {
            return invalid(format!(
                "the kernel's member `{}` sits at byte {} of its struct, but the ABI packs scalar argument {k} at byte {offset}",
                m.name, m.offset
            ));
        }
    }
    Ok(())
}

/// A launch checked against its kernel and the device: the pipeline, the
/// buffer arguments as the kernel binds them, and the packed scalars.
pub(crate) struct Checked<'a> {
    pub(crate) pipeline: Arc<Pipeline>,
    buffers: Vec<BufferArg<'a>>,
    pub(crate) packed: Packed,
    pub(crate) grid: [u32; 3],
}

impl Checked<'_> {
    /// The storage bind group of the launch where every buffer argument
    /// binds where it is (no view needs staging); `None` otherwise.
    pub(crate) fn group_in_place(&self, ctx: &Context) -> Result<Option<wgpu::BindGroup>> {
        let mut bound: Vec<(wgpu::Buffer, Range)> = Vec::with_capacity(self.buffers.len());
        for (i, b) in self.buffers.iter().enumerate() {
            match in_place(ctx, i, b)? {
                Some(binding) => bound.push(binding),
                None => return Ok(None),
            }
        }
        let refs: Vec<(&wgpu::Buffer, Range)> = bound.iter().map(|(b, r)| (b, *r)).collect();
        let group = ctx.bindings.group(&ctx.device, &self.pipeline.buffers, &refs);
        group.map(Some).map_err(|e| Error::driver(BackendKind::Wgpu, "create_bind_group", describe(&e)))
    }
}

/// Enqueue a launch of `kernel`.
///
/// # Safety
/// - Every buffer in `args` belongs to `ctx`'s device and `kernel` was compiled there.
/// - `config` passed [`LaunchConfig::validate`] against the device's limits.
/// - The kernel stays inside its arguments' ranges and writes only writable
///   ones; no writable range overlaps another argument's.
pub(crate) unsafe fn launch(
    ctx: &Context,
    kernel: &WgpuKernel,
    config: &LaunchConfig,
    args: &[RawArg<'_, Wgpu>],
) -> Result<()> {
    let Some(checked) = check(ctx, kernel, config, args)? else { return Ok(()) };
    let name = kiln_core::RawKernel::name(kernel);
    let invalid = |reason: String| Error::InvalidLaunch { kernel: name.to_string(), reason };
    let Checked { pipeline, grid, .. } = &checked;
    // Nothing is recorded until every resource exists: a launch that fails
    // leaves nothing in the batch that would spoil its submission. Bind
    // groups come from the cache; what is made here is checked where it is
    // made, so a launch that makes nothing pushes no error scope.
    ctx.record_unscoped(|batch| {
        let bound = bind(ctx, batch, &checked).map_err(|e| invalid(format!("binding its arguments failed: {e}")))?;
        for (src, offset, temp, len) in &bound.stage_in {
            encode_copy(ctx, batch, src, *offset, temp, 0, *len)?;
        }
        {
            let pass = batch.pass(&ctx.device);
            pass.set_pipeline(&pipeline.pipeline);
            pass.set_bind_group(0, &bound.buffers, &[]);
            if let Some((g, offset)) = &bound.params {
                pass.set_bind_group(1, g, &[*offset]);
            }
            pass.dispatch_workgroups(grid[0], grid[1], grid[2]);
        }
        for (temp, dst, offset, len) in &bound.copy_back {
            encode_copy(ctx, batch, temp, 0, dst, *offset, *len)?;
        }
        Ok(())
    })
}

/// Check a launch of `kernel` against the kernel's declarations and the
/// device's limits, and find its pipeline; `None` for an empty grid, which
/// launches nothing.
pub(crate) fn check<'a>(
    ctx: &Context,
    kernel: &WgpuKernel,
    config: &LaunchConfig,
    args: &[RawArg<'a, Wgpu>],
) -> Result<Option<Checked<'a>>> {
    let name = kiln_core::RawKernel::name(kernel);
    let invalid = |reason: String| Error::InvalidLaunch { kernel: name.to_string(), reason };
    if config.shared_mem_bytes > 0 {
        return Err(Error::unsupported(
            BackendKind::Wgpu,
            format!("launch of kernel `{name}` with {} bytes of dynamic shared memory", config.shared_mem_bytes),
            "WGSL has no dynamic workgroup memory; size `var<workgroup>` arrays in the source",
        ));
    }
    if config.is_empty() {
        return Ok(None);
    }
    let reflection = &kernel.reflection;
    let max_shared = ctx.limits.max_compute_workgroup_storage_size;
    if reflection.workgroup_bytes > u64::from(max_shared) {
        return Err(invalid(format!(
            "it declares {} bytes of var<workgroup> memory; this device allows {max_shared} \
             (max_compute_workgroup_storage_size)",
            reflection.workgroup_bytes
        )));
    }
    let mut buffers = Vec::new();
    let mut scalars = Vec::new();
    for (position, arg) in args.iter().enumerate() {
        match arg {
            RawArg::Buffer { buffer, offset, len, writable, .. } => buffers.push(BufferArg {
                buffer,
                offset: *offset as u64,
                len: *len as u64,
                writable: *writable,
                position,
                bind_writable: *writable,
                min_bytes: 0,
            }),
            RawArg::Scalar(s) => scalars.push(*s),
        }
    }

    // Bindings: every one the kernel uses must be passed, and a binding it
    // writes must be passed writable. One it only reads may be passed either way.
    for decl in &reflection.buffers {
        let binding = decl.binding;
        let Some(b) = buffers.get_mut(binding as usize) else {
            return Err(invalid(format!(
                "the kernel uses @group(0) @binding({binding}) (`{}`) but the launch passes {} buffer argument(s)",
                decl.name,
                buffers.len()
            )));
        };
        if decl.writable && !b.writable {
            return Err(invalid(format!(
                "buffer argument {binding} (argument {}) is passed read-only, but the kernel declares `{}` \
                 var<storage, read_write>; pass it writable (&mut)",
                b.position, decl.name
            )));
        }
        // An empty view binds a scratch buffer: only non-empty ones can be too small.
        if b.len > 0 && round4(b.len) < decl.min_bytes {
            return Err(invalid(format!(
                "buffer argument {binding} (argument {}) has {} bytes, but the kernel's `{}` needs at least {}",
                b.position, b.len, decl.name, decl.min_bytes
            )));
        }
        b.bind_writable = decl.writable;
        b.min_bytes = decl.min_bytes;
    }
    let max_binding = ctx.limits.max_storage_buffer_binding_size;
    for (i, b) in buffers.iter().enumerate() {
        if round4(b.len) > max_binding {
            return Err(Error::unsupported(
                BackendKind::Wgpu,
                format!("buffer argument {i} of kernel `{name}` ({} bytes)", b.len),
                format!(
                    "it is larger than this adapter's max_storage_buffer_binding_size ({max_binding} bytes); \
                     kiln does not split a binding, so launch on views of at most that size"
                ),
            ));
        }
    }

    // Scalars.
    let packed = pack(&scalars, name)?;
    let params = match &reflection.params {
        Some(members) => {
            check_params(name, members, &scalars, &packed)?;
            true
        }
        None => false,
    };
    let max_uniform = ctx.limits.max_uniform_buffer_binding_size.min(64 * 1024);
    if params && packed.bytes.len() as u64 > max_uniform {
        return Err(invalid(format!("{} bytes of scalar arguments; at most {max_uniform} fit", packed.bytes.len())));
    }

    // Block shape: axes fixed in the source must match the launch.
    let block = [config.block.x, config.block.y, config.block.z];
    for (axis, (fixed, b)) in reflection.fixed.iter().zip(block).enumerate() {
        if let Some(f) = fixed {
            if *f != b {
                return Err(invalid(format!(
                    "the kernel's @workgroup_size is {f} along {} but the launch's block is {}; declare \
                     `override {}` and use it in @workgroup_size",
                    ["x", "y", "z"][axis],
                    config.block,
                    crate::reflect::BLOCK_OVERRIDES[axis]
                )));
            }
        }
    }

    let pipeline = kernel
        .pipeline(ctx, &PipelineKey { block, writable: buffers.iter().map(|b| b.bind_writable).collect(), params })?;
    let grid = [config.grid.x, config.grid.y, config.grid.z];
    Ok(Some(Checked { pipeline, buffers, packed, grid }))
}

/// What a launch binds, and the copies around its dispatch.
struct Bound {
    buffers: wgpu::BindGroup,
    /// The scalars' bind group and dynamic offset.
    params: Option<(wgpu::BindGroup, u32)>,
    /// Unaligned views to stage before the dispatch: (source, offset, temporary, bytes).
    stage_in: Vec<(wgpu::Buffer, u64, wgpu::Buffer, u64)>,
    /// Staged writable views to copy back after it: (temporary, destination, offset, bytes).
    copy_back: Vec<(wgpu::Buffer, wgpu::Buffer, u64, u64)>,
}

/// The binding of buffer argument `i` where it can bind where it is: a
/// scratch buffer for an empty view, the view itself at an aligned offset;
/// `None` for a view that must be staged.
fn in_place(ctx: &Context, i: usize, b: &BufferArg<'_>) -> Result<Option<(wgpu::Buffer, Range)>> {
    let align = u64::from(ctx.limits.min_storage_buffer_offset_alignment).max(4);
    if b.len == 0 {
        let bytes = round4(b.min_bytes).max(EMPTY_BINDING);
        let (scratch, id, bytes) = ctx.bindings.scratch(&ctx.device, &ctx.info.name, i, bytes)?;
        Ok(Some((scratch, (id, 0, bytes))))
    } else if b.offset.is_multiple_of(align) {
        Ok(Some((b.buffer.raw.clone(), (b.buffer.id, b.offset, round4(b.len)))))
    } else {
        Ok(None)
    }
}

/// The bind groups of a launch (cached where every view is bound in place;
/// made with temporaries for unaligned views), recording no command.
fn bind(ctx: &Context, batch: &mut Batch, checked: &Checked<'_>) -> Result<Bound> {
    let pipeline = &checked.pipeline;
    let mut bound: Vec<(wgpu::Buffer, Range)> = Vec::with_capacity(checked.buffers.len());
    let (mut stage_in, mut copy_back) = (Vec::new(), Vec::new());
    for (i, b) in checked.buffers.iter().enumerate() {
        if let Some(binding) = in_place(ctx, i, b)? {
            bound.push(binding);
            continue;
        }
        // Bound from an aligned-down offset the kernel would index the
        // wrong elements: it reads from 0. Stage the view instead.
        let size = round4(b.len);
        let temp = create_buffer(&ctx.device, &ctx.info.name, "unaligned view", size, STORAGE, false)?;
        batch.stage(size);
        stage_in.push((b.buffer.raw.clone(), b.offset, temp.clone(), b.len));
        if b.bind_writable {
            copy_back.push((temp.clone(), b.buffer.raw.clone(), b.offset, b.len));
        }
        bound.push((temp, (0, 0, size)));
    }
    let refs: Vec<(&wgpu::Buffer, Range)> = bound.iter().map(|(b, r)| (b, *r)).collect();
    let group = if stage_in.is_empty() {
        ctx.bindings.group(&ctx.device, &pipeline.buffers, &refs)
    } else {
        match scoped(&ctx.device, || make_group(&ctx.device, &pipeline.buffers, &refs)) {
            (g, None) => Ok(g),
            (_, Some(e)) => Err(e),
        }
    };
    let buffers = group.map_err(|e| Error::driver(BackendKind::Wgpu, "create_bind_group", describe(&e)))?;
    let params = if pipeline.params { Some(ctx.params(batch, &checked.packed.bytes)?) } else { None };
    Ok(Bound { buffers, params, stage_in, copy_back })
}
