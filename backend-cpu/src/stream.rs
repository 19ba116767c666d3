//! Eager streams: every operation runs on the calling thread when enqueued.

use kiln_core::{HostArg, HostArgs, LaunchConfig, Priority, RawArg, RawStream, Result};
use rayon::prelude::*;

use crate::memory::allocate;
use crate::{Cpu, CpuEvent, CpuKernel, CpuMemory};

/// Copies larger than this are split over rayon's threads.
const PARALLEL_COPY_BYTES: usize = 1 << 20;

/// A CPU stream. Work runs eagerly, in program order, on the calling thread.
pub struct CpuStream {
    priority: Priority,
    device: String,
}

impl CpuStream {
    pub(crate) fn new(priority: Priority, device: String) -> Self {
        CpuStream { priority, device }
    }
}

/// `dst.copy_from_slice(src)`, over rayon's threads for large copies.
fn copy_bytes(dst: &mut [u8], src: &[u8]) {
    if dst.len() < PARALLEL_COPY_BYTES {
        dst.copy_from_slice(src);
    } else {
        let chunk = dst.len().div_ceil(rayon::current_num_threads()).max(1 << 16);
        dst.par_chunks_mut(chunk).zip(src.par_chunks(chunk)).for_each(|(d, s)| d.copy_from_slice(s));
    }
}

impl RawStream for CpuStream {
    type B = Cpu;

    fn priority(&self) -> Priority {
        self.priority
    }

    fn alloc(&self, bytes: usize) -> Result<CpuMemory> {
        allocate(bytes, &format!("buffer of {bytes} bytes"), &self.device)
    }

    unsafe fn write(&self, dst: &CpuMemory, dst_offset: usize, src: &[u8]) -> Result<()> {
        // SAFETY: in bounds and exclusive by the caller's contract.
        copy_bytes(unsafe { dst.range_mut(dst_offset, src.len()) }, src);
        Ok(())
    }

    unsafe fn read(&self, src: &CpuMemory, src_offset: usize, dst: &mut [u8]) -> Result<()> {
        // SAFETY: in bounds by the caller's contract; nothing writes while we read.
        copy_bytes(dst, unsafe { src.range(src_offset, dst.len()) });
        Ok(())
    }

    unsafe fn write_async(
        &self,
        dst: &CpuMemory,
        dst_offset: usize,
        src: &CpuMemory,
        src_offset: usize,
        bytes: usize,
    ) -> Result<()> {
        // SAFETY: the caller's contract covers bounds and exclusivity.
        unsafe { self.copy(src, src_offset, dst, dst_offset, bytes) }
    }

    unsafe fn read_async(
        &self,
        src: &CpuMemory,
        src_offset: usize,
        dst: &CpuMemory,
        dst_offset: usize,
        bytes: usize,
    ) -> Result<()> {
        // SAFETY: the caller's contract covers bounds and exclusivity.
        unsafe { self.copy(src, src_offset, dst, dst_offset, bytes) }
    }

    unsafe fn copy(
        &self,
        src: &CpuMemory,
        src_offset: usize,
        dst: &CpuMemory,
        dst_offset: usize,
        bytes: usize,
    ) -> Result<()> {
        // SAFETY: in bounds, and the ranges do not overlap, by the caller's contract.
        let (s, d) = unsafe { (src.range(src_offset, bytes), dst.range_mut(dst_offset, bytes)) };
        copy_bytes(d, s);
        Ok(())
    }

    unsafe fn fill(&self, dst: &CpuMemory, offset: usize, bytes: usize, pattern: &[u8]) -> Result<()> {
        // SAFETY: in bounds and exclusive by the caller's contract.
        let d = unsafe { dst.range_mut(offset, bytes) };
        if pattern.iter().all(|&b| b == pattern[0]) {
            d.par_chunks_mut(1 << 16).for_each(|c| c.fill(pattern[0]));
        } else {
            let step = pattern.len();
            d.par_chunks_mut((1 << 16) / step * step)
                .for_each(|c| c.chunks_exact_mut(step).for_each(|e| e.copy_from_slice(pattern)));
        }
        Ok(())
    }

    unsafe fn launch(&self, kernel: &CpuKernel, config: &LaunchConfig, args: &[RawArg<'_, Cpu>]) -> Result<()> {
        let host_args = args
            .iter()
            .map(|a| match a {
                // SAFETY: ranges are in bounds, and writable ones overlap nothing
                // else, by the caller's contract.
                RawArg::Buffer { buffer, offset, len, dtype, writable: true } => {
                    HostArg::Output(unsafe { buffer.range_mut(*offset, *len) }, *dtype)
                }
                RawArg::Buffer { buffer, offset, len, dtype, writable: false } => {
                    HostArg::Input(unsafe { buffer.range(*offset, *len) }, *dtype)
                }
                RawArg::Scalar(s) => HostArg::Scalar(*s),
            })
            .collect();
        (kernel.f)(&mut HostArgs::new(kernel_name(kernel), *config, host_args))
    }

    fn record(&self, event: &CpuEvent) -> Result<()> {
        event.mark();
        Ok(())
    }

    fn wait(&self, _event: &CpuEvent) -> Result<()> {
        // Work is eager: whatever the event marks has already run.
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
}

fn kernel_name(k: &CpuKernel) -> &str {
    kiln_core::RawKernel::name(k)
}
