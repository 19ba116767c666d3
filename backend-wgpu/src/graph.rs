//! Graphs on wgpu: a capture's steps checked and bound once, replayed by
//! recording their commands into the batch with nothing made or looked up.
//!
//! wgpu has no compute bundles, so a replay still records each dispatch
//! (one compute pass for a run of launches, as any batch). What the graph
//! saves is kiln's per-launch work: checking the arguments against the
//! kernel's declarations, finding the pipeline and the cached bind group,
//! and packing the scalars, which were done at instantiation. The scalars
//! of every launch sit in one uniform buffer of the graph, each at its own
//! dynamic offset, written once.
//!
//! A step that cannot be prepared so (a view at an unaligned offset, which
//! a launch stages through a temporary; a vendor product, which wgpu has
//! none of) leaves the graph to kiln's step-by-step replay.
//!
//! One queue runs every stream of the device in program order, so lanes,
//! marks and joins need nothing: the steps replay in the order given, which
//! respects their dependencies.

use std::collections::HashMap;
use std::sync::Arc;

use kiln_core::{GraphOp, GraphStep, RawGraph, Result};

use crate::context::Context;
use crate::kernel::Pipeline;
use crate::launch::check;
use crate::resources::create_buffer;
use crate::transfer::{encode_copy, encode_fill};
use crate::{Wgpu, WgpuBuffer, WgpuStream};

/// One prepared step.
enum Step {
    Dispatch {
        pipeline: Arc<Pipeline>,
        buffers: wgpu::BindGroup,
        /// The scalars' bind group and dynamic offset.
        params: Option<(wgpu::BindGroup, u32)>,
        grid: [u32; 3],
    },
    Copy {
        src: wgpu::Buffer,
        src_offset: u64,
        dst: wgpu::Buffer,
        dst_offset: u64,
        bytes: u64,
    },
    Fill {
        dst: wgpu::Buffer,
        offset: u64,
        bytes: u64,
        pattern: Vec<u8>,
    },
}

/// What a dispatch binds: its pipeline, storage group, and scalars' group and offset.
type Bound<'a> = (&'a Arc<Pipeline>, &'a wgpu::BindGroup, Option<&'a (wgpu::BindGroup, u32)>);

/// An instantiated graph of one device.
pub(crate) struct WgpuGraph {
    ctx: Arc<Context>,
    steps: Vec<Step>,
    /// The scalars of every launch, kept with the bind groups that name it.
    _params: Option<wgpu::Buffer>,
}

/// Prepare `steps` on `ctx`'s device; `None` where one of them cannot be.
///
/// # Safety
/// As [`RawDevice::instantiate_graph`](kiln_core::RawDevice::instantiate_graph).
pub(crate) unsafe fn instantiate(ctx: &Arc<Context>, steps: &[GraphStep<'_, Wgpu>]) -> Result<Option<WgpuGraph>> {
    let mut prepared = Vec::with_capacity(steps.len());
    // Per launch with scalars: its step, slot size and bytes.
    let mut scalars: Vec<(usize, u64, Vec<u8>)> = Vec::new();
    for step in steps {
        match &step.op {
            GraphOp::Launch { kernel, config, args } => {
                let Some(checked) = check(ctx, kernel, config, args)? else { continue };
                let Some(buffers) = checked.group_in_place(ctx)? else { return Ok(None) };
                if checked.pipeline.params {
                    let (slot, _) = ctx.params_slot(checked.packed.bytes.len() as u64);
                    scalars.push((prepared.len(), slot, checked.packed.bytes.clone()));
                }
                let (pipeline, grid) = (checked.pipeline.clone(), checked.grid);
                prepared.push(Step::Dispatch { pipeline, buffers, params: None, grid });
            }
            GraphOp::Copy { src, src_offset, dst, dst_offset, bytes } if *bytes > 0 => prepared.push(Step::Copy {
                src: src.raw.clone(),
                src_offset: *src_offset as u64,
                dst: dst.raw.clone(),
                dst_offset: *dst_offset as u64,
                bytes: *bytes as u64,
            }),
            GraphOp::Fill { dst, offset, bytes, pattern } if *bytes > 0 => prepared.push(Step::Fill {
                dst: dst.raw.clone(),
                offset: *offset as u64,
                bytes: *bytes as u64,
                pattern: pattern.to_vec(),
            }),
            GraphOp::Copy { .. } | GraphOp::Fill { .. } | GraphOp::Mark(_) | GraphOp::Join(_) => {}
            GraphOp::Gemm(_) => return Ok(None),
        }
    }
    let params = bind_scalars(ctx, &mut prepared, &scalars)?;
    Ok(Some(WgpuGraph { ctx: ctx.clone(), steps: prepared, _params: params }))
}

/// Write every launch's scalars into one uniform buffer, each at an offset
/// its binding may start at, and give each launch its bind group and offset.
fn bind_scalars(ctx: &Context, steps: &mut [Step], scalars: &[(usize, u64, Vec<u8>)]) -> Result<Option<wgpu::Buffer>> {
    if scalars.is_empty() {
        return Ok(None);
    }
    let (_, align) = ctx.params_slot(0);
    // Launches with the same scalars share their bytes, so that a run of
    // like launches replays with no change of binding between them.
    let mut bytes: Vec<u8> = Vec::new();
    let mut offsets = Vec::with_capacity(scalars.len());
    let mut placed: HashMap<&[u8], u32> = HashMap::new();
    for (_, _, packed) in scalars {
        let at = *placed.entry(packed).or_insert_with(|| {
            let at = bytes.len().next_multiple_of(align as usize);
            bytes.resize(at, 0);
            bytes.extend_from_slice(packed);
            at as u32
        });
        offsets.push(at);
    }
    // A slot's binding may reach past its bytes, the last one's past them all.
    let largest = scalars.iter().map(|(_, slot, _)| *slot).max().unwrap_or(0);
    let last = offsets.iter().copied().max().unwrap_or(0);
    let size = (bytes.len() as u64).max(u64::from(last) + largest).next_multiple_of(4);
    let usage = wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST;
    let buffer = create_buffer(&ctx.device, &ctx.info.name, "graph kernel scalars", size, usage, false)?;
    ctx.queue.write_buffer(&buffer, 0, &bytes);
    let mut groups: HashMap<u64, wgpu::BindGroup> = HashMap::new();
    for ((step, slot, _), offset) in scalars.iter().zip(offsets) {
        let group = match groups.get(slot) {
            Some(g) => g.clone(),
            None => {
                let g = ctx.params_group(&buffer, *slot)?;
                groups.insert(*slot, g.clone());
                g
            }
        };
        if let Step::Dispatch { params, .. } = &mut steps[*step] {
            *params = Some((group, offset));
        }
    }
    Ok(Some(buffer))
}

impl RawGraph<Wgpu> for WgpuGraph {
    unsafe fn launch(&self, stream: &WgpuStream, _buffers: &[&WgpuBuffer]) -> Result<()> {
        // The commands recorded hold the buffers they use until the device
        // is done with them (wgpu's own tracking), and the graph's storages
        // outlive the graph.
        let ctx = &self.ctx;
        debug_assert!(Arc::ptr_eq(ctx, stream.context()));
        ctx.record("graph replay", |batch| {
            // What the open pass has bound from this replay's previous
            // dispatch; another step ends the pass, and the state with it.
            let mut bound: Option<Bound<'_>> = None;
            for step in &self.steps {
                match step {
                    Step::Dispatch { pipeline, buffers, params, grid } => {
                        let pass = batch.pass(&ctx.device);
                        let last = bound.replace((pipeline, buffers, params.as_ref()));
                        if last.is_none_or(|(p, _, _)| !Arc::ptr_eq(p, pipeline)) {
                            pass.set_pipeline(&pipeline.pipeline);
                        }
                        if last.is_none_or(|(_, b, _)| b != buffers) {
                            pass.set_bind_group(0, buffers, &[]);
                        }
                        if let Some((group, offset)) = params {
                            let same =
                                |p: Option<&(wgpu::BindGroup, u32)>| p.is_some_and(|(g, o)| g == group && o == offset);
                            if !last.is_some_and(|(_, _, p)| same(p)) {
                                pass.set_bind_group(1, group, &[*offset]);
                            }
                        }
                        pass.dispatch_workgroups(grid[0], grid[1], grid[2]);
                    }
                    Step::Copy { src, src_offset, dst, dst_offset, bytes } => {
                        bound = None;
                        encode_copy(ctx, batch, src, *src_offset, dst, *dst_offset, *bytes)?
                    }
                    Step::Fill { dst, offset, bytes, pattern } => {
                        bound = None;
                        encode_fill(ctx, batch, dst, *offset, *bytes, pattern)?
                    }
                }
            }
            Ok(())
        })
    }
}
