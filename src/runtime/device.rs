//! [`Device`] and [`Kernel`] of the run-time tier.

use kiln_core::{
    BackendKind, CachePolicy, DeviceInfo, DeviceVisitor, Element, MemoryInfo, MemoryLimit, MemoryStats, Priority,
    Program, Result,
};
use ndarray::{ArrayBase, Data, Dimension};

use crate::registry::BestReport;

use super::{Buffer, Device, Event, HostBuffer, Kernel, Stream, Tier, dispatch};

impl Device {
    /// The best device found: the one `KILN_BACKEND` names (`cpu`, `cuda`
    /// or `wgpu`, its first device) when set, else real GPUs first (CUDA,
    /// then a hardware wgpu adapter), then the CPU backend. See
    /// [`crate::registry`] for the order and why software adapters are skipped.
    ///
    /// # Examples
    /// ```
    /// let dev = kiln::Device::best().unwrap();   // the CPU at least
    /// println!("running on {}", dev.info());
    /// ```
    pub fn best() -> Result<Device> {
        crate::registry::best()
    }

    /// [`Device::best`], with what it passed over and why (a backend not
    /// compiled in, no CUDA driver, a software wgpu adapter, a device that
    /// failed to open), so that a program landing on the CPU can say why.
    /// Nothing is printed; `kiln devices` prints the same report.
    ///
    /// # Examples
    /// ```
    /// let (dev, report) = kiln::Device::best_with_report().unwrap();
    /// println!("running on {}", dev.info());
    /// if !report.passed_over.is_empty() {
    ///     println!("passed over:\n{report}"); // e.g. "cuda: no CUDA driver: libcuda.so not found"
    /// }
    /// ```
    pub fn best_with_report() -> Result<(Device, BestReport)> {
        crate::registry::best_with_report()
    }

    /// Open device `ordinal` of backend `kind`; an error says why it cannot
    /// (no driver, no such device, not compiled into this build).
    ///
    /// # Examples
    /// ```
    /// assert!(kiln::Device::open(kiln::BackendKind::Cpu, 0).is_ok());
    /// assert!(kiln::Device::open(kiln::BackendKind::Cpu, 3).is_err());
    /// ```
    pub fn open(kind: BackendKind, ordinal: usize) -> Result<Device> {
        crate::registry::open(kind, ordinal)
    }

    /// Every device of `kind` (ordinals 0, 1, ...), opened; an error when the
    /// backend cannot run here or a device it lists fails to open.
    ///
    /// # Examples
    /// ```
    /// let cpus = kiln::Device::all_of(kiln::BackendKind::Cpu).unwrap();
    /// assert_eq!(cpus.len(), 1);
    /// ```
    pub fn all_of(kind: BackendKind) -> Result<Vec<Device>> {
        let count = crate::registry::probe()
            .into_iter()
            .find(|(k, _)| *k == kind)
            .map(|(_, found)| found)
            .unwrap_or_else(|| Ok(Vec::new()))?
            .len();
        (0..count).map(|ordinal| Device::open(kind, ordinal)).collect()
    }

    /// Every device of every backend that runs here, opened, GPUs first (CUDA,
    /// then wgpu adapters, then the CPU); a backend that cannot run here is
    /// left out. (A GPU may appear twice: as a CUDA device and as a wgpu adapter.)
    ///
    /// # Examples
    /// ```
    /// let all = kiln::Device::all();
    /// assert!(all.iter().any(|d| d.kind() == kiln::BackendKind::Cpu));
    /// ```
    pub fn all() -> Vec<Device> {
        BackendKind::ALL.iter().filter_map(|&kind| Device::all_of(kind).ok()).flatten().collect()
    }

    /// Open device 0 of the backend called `name` ("cpu", "cuda", "wgpu").
    ///
    /// # Examples
    /// ```
    /// let err = kiln::Device::by_name("opencl").unwrap_err();
    /// assert!(err.to_string().contains("unknown backend"));
    /// ```
    pub fn by_name(name: &str) -> Result<Device> {
        Device::open(name.parse()?, 0)
    }

    /// The typed device, if this one is of backend `B`.
    ///
    /// # Examples
    /// ```
    /// # fn main() -> kiln::Result<()> {
    /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
    /// assert!(dev.typed::<kiln::Cpu>().is_some());
    /// # Ok(()) }
    /// ```
    pub fn typed<B: Tier>(&self) -> Option<&kiln_core::Device<B>> {
        B::device(self)
    }

    /// Run generic code written for the typed tier on this device: the
    /// visitor's method runs with the device's concrete backend type.
    ///
    /// # Examples
    /// ```
    /// use kiln::{Backend, DeviceVisitor};
    ///
    /// struct Len;
    /// impl DeviceVisitor for Len {
    ///     type Output = kiln::Result<usize>;
    ///     fn visit<B: Backend>(self, dev: &kiln::typed::Device<B>) -> Self::Output {
    ///         Ok(dev.upload(&[1u8, 2, 3])?.len())
    ///     }
    /// }
    /// # fn main() -> kiln::Result<()> {
    /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
    /// assert_eq!(dev.visit(Len)?, 3);
    /// # Ok(()) }
    /// ```
    pub fn visit<V: DeviceVisitor>(&self, visitor: V) -> V::Output {
        dispatch!(self, Device, d => visitor.visit(d))
    }

    /// Identity, limits and features.
    pub fn info(&self) -> &DeviceInfo {
        dispatch!(self, Device, d => d.info())
    }

    /// The device's name.
    pub fn name(&self) -> &str {
        &self.info().name
    }

    /// The backend.
    pub fn kind(&self) -> BackendKind {
        self.info().backend
    }

    /// Whether `other` is a handle to the same opened device.
    pub fn same(&self, other: &Device) -> bool {
        dispatch!(self, Device, d => B::device(other).is_some_and(|o| d.same(o)))
    }

    /// Free and total memory now.
    pub fn memory(&self) -> Result<MemoryInfo> {
        dispatch!(self, Device, d => d.memory())
    }

    /// kiln's count of this device's memory: used, peak, limit, with the
    /// allocator's reserved bytes and the free memory
    /// ([`kiln_core::Device::memory_stats`]).
    pub fn memory_stats(&self) -> Result<MemoryStats> {
        dispatch!(self, Device, d => d.memory_stats())
    }

    /// Limit the bytes kiln's buffers may hold on this device
    /// ([`kiln_core::Device::set_memory_limit`]).
    pub fn set_memory_limit(&self, limit: Option<MemoryLimit>) -> Result<()> {
        dispatch!(self, Device, d => d.set_memory_limit(limit))
    }

    /// Give memory the allocator keeps for reuse back to the driver, keeping
    /// at most `keep` bytes of it ([`kiln_core::Device::trim_memory`]).
    pub fn trim_memory(&self, keep: u64) -> Result<()> {
        dispatch!(self, Device, d => d.trim_memory(keep))
    }

    /// Bound the bytes this device's pools keep for reuse by `policy`
    /// ([`kiln_core::Device::set_cache_policy`]).
    ///
    /// # Examples
    /// ```
    /// use kiln::{BackendKind, CachePolicy, Device};
    /// # fn main() -> kiln::Result<()> {
    /// let dev = Device::open(BackendKind::Cpu, 0)?;
    /// dev.set_cache_policy(CachePolicy::budget(16 << 20))?;
    /// assert_eq!(dev.cache_policy(), CachePolicy::budget(16 << 20));
    /// drop(dev.alloc::<f32>(2 << 20)?);                 // 8 MiB, kept for reuse
    /// let s = dev.memory_stats()?;
    /// assert_eq!((s.cached, s.cache_bound), (8 << 20, 8 << 20));
    /// # Ok(()) }
    /// ```
    pub fn set_cache_policy(&self, policy: CachePolicy) -> Result<()> {
        dispatch!(self, Device, d => d.set_cache_policy(policy))
    }

    /// The policy bounding what this device's pools keep for reuse
    /// ([`kiln_core::Device::cache_policy`]).
    pub fn cache_policy(&self) -> CachePolicy {
        dispatch!(self, Device, d => d.cache_policy())
    }

    /// Start the peak over from what is in use now.
    pub fn reset_peak_memory(&self) {
        dispatch!(self, Device, d => d.reset_peak_memory())
    }

    /// The device's default stream.
    pub fn stream(&self) -> Stream {
        dispatch!(self, Device, d => B::wrap_stream(d.stream()))
    }

    /// A new stream with `priority`.
    pub fn create_stream(&self, priority: Priority) -> Result<Stream> {
        dispatch!(self, Device, d => d.create_stream(priority).map(B::wrap_stream))
    }

    /// A new, unrecorded event.
    pub fn create_event(&self) -> Result<Event> {
        dispatch!(self, Device, d => d.create_event().map(B::wrap_event))
    }

    /// Compile `program` for this device (or take the kernel compiled from
    /// the same program earlier in this process); `Unsupported` when the
    /// program has no source this backend speaks.
    pub fn kernel(&self, program: &Program) -> Result<Kernel> {
        dispatch!(self, Device, d => d.kernel(program).map(B::wrap_kernel))
    }

    /// Allocate `len` elements on the default stream (contents unspecified).
    pub fn alloc<T: Element>(&self, len: usize) -> Result<Buffer<T>> {
        dispatch!(self, Device, d => d.alloc(len).map(B::wrap_buffer))
    }

    /// Allocate `len` zeroed elements on the default stream.
    pub fn alloc_zeroed<T: Element>(&self, len: usize) -> Result<Buffer<T>> {
        dispatch!(self, Device, d => d.alloc_zeroed(len).map(B::wrap_buffer))
    }

    /// A device copy of `data`, on the default stream.
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<Buffer<T>> {
        dispatch!(self, Device, d => d.upload(data).map(B::wrap_buffer))
    }

    /// A device copy of an ndarray array, its elements in row-major order.
    pub fn upload_array<T: Element, S: Data<Elem = T>, D: Dimension>(
        &self,
        array: &ArrayBase<S, D>,
    ) -> Result<Buffer<T>> {
        dispatch!(self, Device, d => d.upload_array(array).map(B::wrap_buffer))
    }

    /// `len` elements of zeroed host memory the device copies to and from
    /// asynchronously (page-locked on CUDA).
    pub fn alloc_host<T: Element>(&self, len: usize) -> Result<HostBuffer<T>> {
        dispatch!(self, Device, d => d.alloc_host(len).map(B::wrap_host))
    }

    /// Block until all work on every stream of this device is done; reports
    /// errors kept from earlier asynchronous work.
    pub fn synchronize(&self) -> Result<()> {
        dispatch!(self, Device, d => d.synchronize())
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.info().fmt(f)
    }
}

impl Kernel {
    /// The entry-point name.
    pub fn name(&self) -> &str {
        dispatch!(self, Kernel, k => k.name())
    }

    /// The backend.
    pub fn kind(&self) -> BackendKind {
        dispatch!(self, Kernel, _k => <B as kiln_core::Backend>::KIND)
    }

    /// The typed kernel, if this one is of backend `B`.
    pub fn typed<B: Tier>(&self) -> Option<&kiln_core::Kernel<B>> {
        B::kernel(self)
    }
}
