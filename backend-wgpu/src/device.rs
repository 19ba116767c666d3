//! Opening an adapter as a kiln device.

use std::sync::Arc;

use kiln_core::{
    BackendKind, CachePolicy, CacheStats, DeviceInfo, Error, MemoryInfo, Priority, Program, RawDevice, Result,
};

use crate::adapter::{accepted_backend, device_info};
use crate::context::Context;
use crate::optional::{wanted_features, Optional};
use crate::{Wgpu, WgpuEvent, WgpuHostBuffer, WgpuKernel, WgpuStream};

/// An opened wgpu device.
pub struct WgpuDevice {
    pub(crate) ctx: Arc<Context>,
    adapter: wgpu::Adapter,
}

/// The sizes of the device memory blocks gpu-allocator carves buffers from
/// (see [`WgpuDevice::open`]).
const BLOCKS: std::ops::Range<u64> = (4 << 20)..(16 << 20);

impl WgpuDevice {
    /// Open adapter `ordinal` of kiln's list with every optional feature
    /// kiln uses that it has but those `hidden`, and its own limits, not
    /// WebGPU's defaults.
    pub(crate) fn open(ordinal: usize, hidden: &[Optional]) -> Result<Self> {
        let adapters = crate::adapter::adapters()?;
        let count = adapters.len();
        let adapter =
            adapters.get(ordinal).ok_or(Error::DeviceNotFound { backend: BackendKind::Wgpu, ordinal, count })?;
        let info = adapter.get_info();
        if !accepted_backend(info.backend) {
            return Err(Error::BackendUnavailable {
                backend: BackendKind::Wgpu,
                reason: format!("adapter {} runs on {:?}, not Vulkan", info.name, info.backend),
            });
        }
        let mut features = wanted_features(adapter.features(), hidden);
        let coop = wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX | wgpu::Features::SHADER_F16;
        let asked = crate::optional::coop_asked(std::env::var(crate::optional::COOP_ENV).ok().as_deref());
        if !asked || !features.contains(coop) || !crate::optional::cooperative_matrix_usable(adapter) {
            features.remove(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX);
        }
        let experimental = if features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX) {
            // SAFETY: wgpu asks callers of experimental features to accept
            // that its implementation may have bugs. kiln enables one,
            // cooperative matrices, and uses it in its own kernels only
            // (kiln-kernels' matmul of f16), with the one configuration
            // checked above (16 x 16 x 16, f16 into f32, subgroup scope) in
            // workgroups of whole 32-invocation subgroups, every
            // cooperative load and store inside workgroup memory.
            unsafe { wgpu::ExperimentalFeatures::enabled() }
        } else {
            wgpu::ExperimentalFeatures::disabled()
        };
        let limits = adapter.limits();
        let desc = wgpu::DeviceDescriptor {
            label: Some("kiln"),
            required_features: features,
            required_limits: limits.clone(),
            experimental_features: experimental,
            // gpu-allocator carves buffers from blocks of 4 to 16 MiB here
            // (4 to 8 MiB in host memory) in place of wgpu's default 128 to
            // 256 MiB, and gives a block back once nothing is carved from
            // it, save the last one of each memory type. kiln's pool keeps
            // buffers for reuse within its cache policy; what the allocator
            // holds beyond them, in blocks that a few kept or live buffers
            // pin, then stays within a few blocks. Buffers larger than a
            // block get memory of their own, freed with them, and the pool
            // makes new allocations rare.
            memory_hints: wgpu::MemoryHints::Manual { suballocated_device_memory_block_size: BLOCKS },
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&desc))
            .map_err(|e| Error::driver(BackendKind::Wgpu, format!("request_device on {}", info.name), e))?;
        let memory = crate::vulkan::device_memory(adapter).unwrap_or(0);
        let spirv = crate::spirv::target(adapter, features);
        let info = device_info(ordinal, &info, &limits, features, memory, spirv.is_some());
        let ctx = Context::new(device, queue, info, limits, spirv);
        Ok(WgpuDevice { ctx: Arc::new(ctx), adapter: adapter.clone() })
    }

    /// The wgpu instance the device was found through (one per process),
    /// for other wgpu code that needs it beside the device, such as a
    /// library taking an existing instance, adapter, device and queue.
    pub fn wgpu_instance(&self) -> &wgpu::Instance {
        crate::adapter::instance()
    }

    /// The adapter the device was opened on.
    pub fn wgpu_adapter(&self) -> &wgpu::Adapter {
        &self.adapter
    }

    /// The wgpu device, for interoperation with other wgpu code.
    pub fn wgpu_device(&self) -> &wgpu::Device {
        &self.ctx.device
    }

    /// The wgpu queue every kiln stream of this device records into.
    pub fn wgpu_queue(&self) -> &wgpu::Queue {
        &self.ctx.queue
    }
}

impl RawDevice for WgpuDevice {
    type B = Wgpu;

    fn info(&self) -> &DeviceInfo {
        &self.ctx.info
    }

    /// What kiln holds comes from wgpu's allocator report (`allocated`: live
    /// allocations, `reserved`: the memory blocks they are carved from). The
    /// free figure is Vulkan's memory budget of the largest device-local
    /// heap (`VK_EXT_memory_budget`, which sees other processes too); where
    /// the driver lacks that extension it is the heap's size less what this
    /// process reserved (other processes unseen). `Unsupported` where
    /// neither the heap's size nor a budget is known.
    fn memory(&self) -> Result<MemoryInfo> {
        self.ctx.faults.check_lost()?;
        let report = self.ctx.device.generate_allocator_report();
        let allocated = report.as_ref().map(|r| r.total_allocated_bytes);
        let reserved = report.as_ref().map(|r| r.total_reserved_bytes);
        let (free, total) = match crate::vulkan::memory_budget(&self.adapter) {
            Some(budget) => budget,
            None if self.ctx.info.memory_bytes > 0 => {
                let total = self.ctx.info.memory_bytes;
                (total.saturating_sub(reserved.unwrap_or(0)), total)
            }
            None => {
                return Err(Error::unsupported(
                    BackendKind::Wgpu,
                    "Device::memory",
                    "this adapter reports neither its memory size nor a memory budget",
                ))
            }
        };
        Ok(MemoryInfo { free, total, allocated, reserved })
    }

    /// Let the buffers kept for reuse go until at most `keep` bytes are
    /// kept, and every kept staging buffer of transfers.
    fn trim_memory(&self, keep: u64) -> Result<()> {
        self.ctx.faults.check_lost()?;
        self.ctx.pool.trim(keep);
        self.ctx.staging.clear();
        Ok(())
    }

    fn set_cache_policy(&self, policy: CachePolicy) -> Result<()> {
        self.ctx.faults.check_lost()?;
        self.ctx.pool.set_policy(policy);
        Ok(())
    }

    fn cache_stats(&self) -> Result<CacheStats> {
        Ok(self.ctx.pool.stats())
    }

    fn create_stream(&self, priority: Priority) -> Result<WgpuStream> {
        self.ctx.faults.check_lost()?;
        Ok(WgpuStream::new(self.ctx.clone(), priority))
    }

    fn create_event(&self) -> Result<WgpuEvent> {
        WgpuEvent::new(self.ctx.clone())
    }

    fn alloc_host(&self, bytes: usize) -> Result<WgpuHostBuffer> {
        WgpuHostBuffer::new(bytes, &self.ctx.info.name)
    }

    fn compile(&self, program: &Program) -> Result<WgpuKernel> {
        WgpuKernel::compile(&self.ctx, program)
    }

    fn synchronize(&self) -> Result<()> {
        self.ctx.synchronize("Device::synchronize")
    }

    /// Launches checked and bound once, replayed without kiln's per-launch
    /// work (`graph.rs`); `None`, and the steps replayed one by one, where
    /// a step cannot be prepared so.
    unsafe fn instantiate_graph(
        &self,
        steps: &[kiln_core::GraphStep<'_, Wgpu>],
        _lanes: usize,
    ) -> Result<Option<Box<dyn kiln_core::RawGraph<Wgpu>>>> {
        // SAFETY: the caller keeps this method's contract, which `instantiate` shares.
        let graph = unsafe { crate::graph::instantiate(&self.ctx, steps) }?;
        Ok(graph.map(|g| Box::new(g) as Box<dyn kiln_core::RawGraph<Wgpu>>))
    }
}
