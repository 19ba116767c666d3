//! Streams: handles onto the device's single queue.

use std::sync::Arc;

use kiln_core::{LaunchConfig, Priority, RawArg, RawStream, Result};

use crate::context::Context;
use crate::{transfer, Wgpu, WgpuBuffer, WgpuEvent, WgpuHostBuffer, WgpuKernel};

/// A kiln stream on wgpu.
///
/// Every stream of a device records into the same batch of the same queue,
/// in program order (see the crate docs), so work on one stream is ordered
/// after everything enqueued before it on *any* stream: stream order and
/// event waits hold without extra synchronization, at the cost of no
/// overlap between streams. Priorities are accepted and kept, and have no
/// effect.
pub struct WgpuStream {
    ctx: Arc<Context>,
    priority: Priority,
}

impl WgpuStream {
    pub(crate) fn new(ctx: Arc<Context>, priority: Priority) -> Self {
        WgpuStream { ctx, priority }
    }

    /// The device the stream records for.
    pub(crate) fn context(&self) -> &Arc<Context> {
        &self.ctx
    }
}

impl RawStream for WgpuStream {
    type B = Wgpu;

    fn priority(&self) -> Priority {
        self.priority
    }

    fn alloc(&self, bytes: usize) -> Result<WgpuBuffer> {
        self.ctx.faults.check_lost()?;
        WgpuBuffer::new(&self.ctx, bytes)
    }

    unsafe fn write(&self, dst: &WgpuBuffer, dst_offset: usize, src: &[u8]) -> Result<()> {
        transfer::write(&self.ctx, dst, dst_offset as u64, src)
    }

    unsafe fn read(&self, src: &WgpuBuffer, src_offset: usize, dst: &mut [u8]) -> Result<()> {
        transfer::read(&self.ctx, src, src_offset as u64, dst)
    }

    unsafe fn write_async(
        &self,
        dst: &WgpuBuffer,
        dst_offset: usize,
        src: &WgpuHostBuffer,
        src_offset: usize,
        bytes: usize,
    ) -> Result<()> {
        // SAFETY: the range is inside `src` and the host does not write it
        // while the copy is pending, by the caller's contract. The bytes are
        // staged at once, so the host may in fact reuse them on return.
        let data = unsafe { src.mem.range(src_offset, bytes) };
        transfer::write(&self.ctx, dst, dst_offset as u64, data)
    }

    unsafe fn read_async(
        &self,
        src: &WgpuBuffer,
        src_offset: usize,
        dst: &WgpuHostBuffer,
        dst_offset: usize,
        bytes: usize,
    ) -> Result<()> {
        // SAFETY: the range is inside `dst`, and the host leaves it alone
        // until an event recorded after this copy has completed, by this
        // method's contract.
        unsafe { transfer::read_async(&self.ctx, src, src_offset as u64, &dst.mem, dst_offset, bytes as u64) }
    }

    unsafe fn copy(
        &self,
        src: &WgpuBuffer,
        src_offset: usize,
        dst: &WgpuBuffer,
        dst_offset: usize,
        bytes: usize,
    ) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        self.ctx.record("device copy", |batch| {
            transfer::encode_copy(
                &self.ctx,
                batch,
                &src.raw,
                src_offset as u64,
                &dst.raw,
                dst_offset as u64,
                bytes as u64,
            )
        })
    }

    unsafe fn fill(&self, dst: &WgpuBuffer, offset: usize, bytes: usize, pattern: &[u8]) -> Result<()> {
        if !matches!(pattern.len(), 1 | 2 | 4 | 8 | 16) {
            return Err(kiln_core::Error::invalid(
                "fill",
                format!("a pattern of {} bytes; it must be 1, 2, 4, 8 or 16", pattern.len()),
            ));
        }
        transfer::fill(&self.ctx, dst, offset as u64, bytes as u64, pattern)
    }

    unsafe fn launch(&self, kernel: &WgpuKernel, config: &LaunchConfig, args: &[RawArg<'_, Wgpu>]) -> Result<()> {
        // SAFETY: forwarded from this method's contract.
        unsafe { crate::launch::launch(&self.ctx, kernel, config, args) }
    }

    fn record(&self, event: &WgpuEvent) -> Result<()> {
        event.record()
    }

    fn wait(&self, _event: &WgpuEvent) -> Result<()> {
        // One queue in program order: whatever the event marks was enqueued
        // before anything this stream enqueues from now on, and runs first.
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        // A stream has no queue of its own: waiting for it is waiting for the device.
        self.ctx.synchronize("Stream::synchronize")
    }
}
