//! The CPU device, its events and kernels.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use kiln_core::{
    BackendKind, CachePolicy, CacheStats, DeviceInfo, Error, Features, HostClosure, HostFn, IndexWidth, Limits,
    MatrixUnits, MemoryInfo, Priority, Program, RawDevice, RawEvent, RawKernel, Result, Source,
};

use crate::memory::allocate;
use crate::pool::Pool;
use crate::{Cpu, CpuMemory, CpuStream};

/// The host, seen as a kiln device.
pub struct CpuDevice {
    info: DeviceInfo,
    /// Large buffers kept for reuse, shared with the device's streams.
    pool: Arc<Pool>,
}

impl CpuDevice {
    pub(crate) fn new() -> Self {
        let info = host_info();
        let pool = Pool::new();
        CpuDevice { info, pool }
    }
}

/// Reads a `key: value kB` line from /proc/meminfo, in bytes.
fn meminfo(key: &str) -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| format!("{} CPU", std::env::consts::ARCH))
}

/// The host's identity and the limits kiln gives CPU launches (the same block
/// limits as CUDA, so a shape that is wrong anywhere is wrong here too).
pub(crate) fn host_info() -> DeviceInfo {
    let memory = meminfo("MemTotal:").unwrap_or(0);
    DeviceInfo {
        backend: BackendKind::Cpu,
        ordinal: 0,
        name: cpu_name(),
        kind: kiln_core::DeviceKind::Cpu,
        compute_units: rayon::current_num_threads() as u32,
        memory_bytes: memory,
        compute_capability: None,
        driver: format!("rayon, {} threads", rayon::current_num_threads()),
        limits: Limits {
            max_threads_per_block: 1024,
            max_block: [1024, 1024, 64],
            max_grid: [u32::MAX, u32::MAX, u32::MAX],
            max_shared_mem_per_block: 48 * 1024,
            max_buffer_bytes: if memory > 0 { memory } else { isize::MAX as u64 },
            max_binding_bytes: if memory > 0 { memory } else { isize::MAX as u64 },
            warp_size: 1,
            min_warp_size: 1,
        },
        features: Features {
            f64: true,
            f16: true,
            bf16: true,
            float_atomics: true,
            int64: true,
            wide_multiply: true,
            subgroups: false,
            timestamps: true,
            // Host fns run the whole launch on threads the OS schedules preemptively.
            forward_progress: true,
            // Host fns take lengths as u64 scalars.
            index_width: IndexWidth::U64,
            // The SIMD width of every x86-64 (SSE2) and aarch64 (NEON) host.
            vector_bytes: 16,
            matrix_units: MatrixUnits::default(),
        },
    }
}

impl RawDevice for CpuDevice {
    type B = Cpu;

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn memory(&self) -> Result<MemoryInfo> {
        let (live, reserved) = self.pool.counts();
        Ok(MemoryInfo {
            free: meminfo("MemAvailable:").unwrap_or(0),
            total: self.info.memory_bytes,
            allocated: Some(live),
            reserved: Some(reserved),
        })
    }

    fn trim_memory(&self, keep: u64) -> Result<()> {
        self.pool.trim(keep);
        Ok(())
    }

    fn set_cache_policy(&self, policy: CachePolicy) -> Result<()> {
        self.pool.set_policy(policy);
        Ok(())
    }

    fn cache_stats(&self) -> Result<CacheStats> {
        Ok(self.pool.stats())
    }

    fn create_stream(&self, priority: Priority) -> Result<CpuStream> {
        Ok(CpuStream::new(priority, self.info.name.clone(), self.pool.clone()))
    }

    fn create_event(&self) -> Result<CpuEvent> {
        Ok(CpuEvent { at: Mutex::new(None) })
    }

    fn alloc_host(&self, bytes: usize) -> Result<CpuMemory> {
        allocate(CpuMemory::new(bytes), bytes, "host buffer", &self.info.name)
    }

    fn compile(&self, program: &Program) -> Result<CpuKernel> {
        match program.source_for::<Cpu>()? {
            Source::Host(f) => Ok(CpuKernel { name: program.name().to_string(), f: KernelFn::Fn(*f) }),
            Source::Closure(c) => Ok(CpuKernel { name: program.name().to_string(), f: KernelFn::Closure(c.clone()) }),
            Source::Text(_) => Err(Error::unsupported(
                BackendKind::Cpu,
                format!("kernel `{}`", program.name()),
                "its host source is text, not a host fn",
            )),
        }
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
}

/// A recorded instant on the host's monotonic clock.
pub struct CpuEvent {
    at: Mutex<Option<Instant>>,
}

impl CpuEvent {
    pub(crate) fn mark(&self) {
        *self.at.lock().unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
    }

    fn instant(&self) -> Option<Instant> {
        *self.at.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl RawEvent for CpuEvent {
    fn query(&self) -> Result<bool> {
        Ok(true)
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }

    fn elapsed_since(&self, start: &Self) -> Result<Duration> {
        match (start.instant(), self.instant()) {
            (Some(a), Some(b)) => Ok(b.saturating_duration_since(a)),
            _ => Err(Error::invalid("Event::elapsed_since", "both events must have been recorded on a stream")),
        }
    }
}

/// A CPU kernel: a Rust function or closure run over the whole launch.
pub struct CpuKernel {
    name: String,
    pub(crate) f: KernelFn,
}

/// What a CPU kernel runs.
pub(crate) enum KernelFn {
    Fn(HostFn),
    Closure(HostClosure),
}

impl KernelFn {
    pub(crate) fn call(&self, args: &mut kiln_core::HostArgs<'_>) -> Result<()> {
        match self {
            KernelFn::Fn(f) => f(args),
            KernelFn::Closure(c) => c.call(args),
        }
    }
}

impl RawKernel for CpuKernel {
    fn name(&self) -> &str {
        &self.name
    }
}
