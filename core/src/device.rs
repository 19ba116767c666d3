//! Typed devices: the entry point to buffers, streams, events and kernels.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ndarray::{ArrayBase, Data, Dimension};

use crate::graph::record::Queue;
use crate::host_pool::HostPool;
use crate::pool::Counter;
use crate::{
    Backend, BackendKind, Buffer, CachePolicy, DeviceInfo, Element, Error, Event, HostBuffer, HostMemoryStats, Kernel,
    MemoryInfo, MemoryLimit, MemoryStats, Priority, Program, RawDevice, Result, Stream,
};

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

struct Shared<B: Backend> {
    id: u64,
    raw: B::Device,
    default_stream: Arc<Queue<B>>,
    /// Keyed by the whole program (compared in full on a hash match), so
    /// programs that differ never share a kernel.
    kernels: Mutex<HashMap<Program, Kernel<B>>>,
    lost: Mutex<Option<String>>,
    memory: Counter,
    host: HostPool<B>,
}

/// An opened device of backend `B`. Cloning gives another handle to the same device.
///
/// # Examples
/// ```
/// use kiln_core::{BackendKind, Device};
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// assert_eq!(dev.kind(), BackendKind::Cpu);
/// let buf = dev.upload(&[1.0f32, 2.0, 3.0])?;
/// assert_eq!(buf.to_vec()?, vec![1.0, 2.0, 3.0]);
/// assert!(Device::<Cpu>::open(7).is_err());
/// # Ok(()) }
/// ```
pub struct Device<B: Backend> {
    shared: Arc<Shared<B>>,
}

impl<B: Backend> Clone for Device<B> {
    fn clone(&self) -> Self {
        Device { shared: self.shared.clone() }
    }
}

impl<B: Backend> std::fmt::Debug for Device<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Device({})", self.info())
    }
}

impl<B: Backend> Device<B> {
    /// The devices backend `B` sees, or why it cannot run here.
    pub fn list() -> Result<Vec<DeviceInfo>> {
        B::devices()
    }

    /// Every device of backend `B`, opened, in ordinal order: CuPy's
    /// `range(cupy.cuda.runtime.getDeviceCount())`. An error when the
    /// backend cannot run here, or when a device it lists does not open.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// # fn main() -> kiln_core::Result<()> {
    /// let all = Device::<Cpu>::all()?;
    /// assert_eq!(all.len(), Device::<Cpu>::list()?.len());
    /// assert!(all.iter().enumerate().all(|(i, d)| d.info().ordinal == i));
    /// # Ok(()) }
    /// ```
    pub fn all() -> Result<Vec<Self>> {
        B::devices()?.iter().map(|info| Self::open(info.ordinal)).collect()
    }

    /// Open device `ordinal` of backend `B`.
    pub fn open(ordinal: usize) -> Result<Self> {
        Self::from_raw(B::open(ordinal)?)
    }

    /// Wrap an opened backend device.
    pub fn from_raw(raw: B::Device) -> Result<Self> {
        let default_stream = Arc::new(Queue::new(raw.create_stream(Priority::Normal)?));
        Ok(Device {
            shared: Arc::new(Shared {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                raw,
                default_stream,
                kernels: Mutex::new(HashMap::new()),
                lost: Mutex::new(None),
                memory: Counter::default(),
                host: HostPool::default(),
            }),
        })
    }

    /// The backend's device.
    pub fn raw(&self) -> &B::Device {
        &self.shared.raw
    }

    /// Identity, limits and features.
    pub fn info(&self) -> &DeviceInfo {
        self.shared.raw.info()
    }

    /// The device's name.
    pub fn name(&self) -> &str {
        &self.info().name
    }

    /// The backend.
    pub fn kind(&self) -> BackendKind {
        B::KIND
    }

    /// A number unique to this opened device within the process.
    pub fn id(&self) -> u64 {
        self.shared.id
    }

    /// Whether `other` is a handle to the same opened device.
    pub fn same(&self, other: &Device<B>) -> bool {
        self.shared.id == other.shared.id
    }

    /// Free and total memory now.
    pub fn memory(&self) -> Result<MemoryInfo> {
        self.shared.raw.memory()
    }

    /// kiln's count of this device's memory: the bytes its buffers hold, the
    /// peak, the limit, with the allocator's reserved bytes and the free
    /// memory the backend reports (`None` where it reports none). The count
    /// and the limit belong to this opened device and the handles cloned
    /// from it; another `open` of the same ordinal counts on its own.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{Device, MemoryLimit};
    /// use kiln_cpu::Cpu;
    /// # fn main() -> kiln_core::Result<()> {
    /// let dev = Device::<Cpu>::open(0)?;
    /// let before = dev.memory_stats()?.used;
    /// let b = dev.alloc::<f32>(1000)?;
    /// assert_eq!(dev.memory_stats()?.used, before + 4000);
    /// dev.set_memory_limit(Some(MemoryLimit::Bytes(before + 4000)))?;
    /// assert!(dev.alloc::<u8>(1).is_err(), "past the limit");
    /// drop(b);
    /// assert_eq!(dev.memory_stats()?.used, before);
    /// dev.set_memory_limit(None)?;
    /// # Ok(()) }
    /// ```
    pub fn memory_stats(&self) -> Result<MemoryStats> {
        let c = &self.shared.memory;
        let info = self.shared.raw.memory().ok();
        let cache = self.shared.raw.cache_stats()?;
        Ok(MemoryStats {
            used: c.used(),
            peak: c.peak(),
            cached: cache.cached,
            cache_bound: cache.bound,
            reserved: info.and_then(|m| m.reserved),
            limit: c.limit(),
            free: info.map(|m| m.free),
            total: info.map_or(self.info().memory_bytes, |m| m.total),
        })
    }

    /// Limit the bytes kiln's buffers may hold on this device (`None`: no
    /// limit): an allocation past it fails with `OutOfMemory`. A fraction is
    /// of the device's memory ([`DeviceInfo::memory_bytes`]). A limit below
    /// what is in use, a fraction outside `(0, 1]` or of a device whose size
    /// is unknown is an `InvalidArgument`, and the limit stays as it was.
    pub fn set_memory_limit(&self, limit: Option<MemoryLimit>) -> Result<()> {
        let what = format!("Device::set_memory_limit on {}", self.name());
        let bytes = match limit {
            None => None,
            Some(MemoryLimit::Bytes(b)) => Some(b),
            Some(MemoryLimit::Fraction(f)) => {
                let total = self.info().memory_bytes;
                if !(f > 0.0 && f <= 1.0) {
                    return Err(Error::invalid(what, format!("the fraction {f} is not in (0, 1]")));
                }
                if total == 0 {
                    return Err(Error::invalid(what, "the device does not report its memory size; give bytes"));
                }
                Some((total as f64 * f) as u64)
            }
        };
        self.shared.memory.set_limit(bytes).map_err(|used| {
            Error::invalid(
                what,
                format!("a limit of {} bytes is below the {used} bytes kiln's buffers hold now", bytes.unwrap_or(0)),
            )
        })
    }

    /// Give memory the backend's allocator keeps for reuse back to the
    /// driver, keeping at most `keep` bytes of it (CUDA's stream-ordered
    /// pool, the wgpu backend's dropped buffers, the CPU backend's pool),
    /// and start the pool's peak in use, which bounds what it keeps (see
    /// [`CachePolicy`]), over from what is in use now. Live buffers are
    /// untouched.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// # fn main() -> kiln_core::Result<()> {
    /// let dev = Device::<Cpu>::open(0)?;
    /// drop(dev.alloc::<u8>(8 << 20)?);              // a pooled block, kept for reuse
    /// let kept = dev.memory_stats()?;
    /// assert_eq!(kept.cached, 8 << 20);
    /// assert!(kept.cached <= kept.cache_bound);
    /// dev.trim_memory(0)?;
    /// assert_eq!(dev.memory_stats()?.cached, 0);
    /// # Ok(()) }
    /// ```
    pub fn trim_memory(&self, keep: u64) -> Result<()> {
        self.check_usable()?;
        self.shared.raw.trim_memory(keep)
    }

    /// Bound the bytes this device's pools (the backend's, and the host
    /// pool of [`alloc_host`](Self::alloc_host)) keep for reuse by
    /// `policy` from now on, freeing at once what passes the new bound. By
    /// default ([`CachePolicy::default`]) a pool keeps at most its peak in
    /// use since the last trim.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{CachePolicy, Device};
    /// use kiln_cpu::Cpu;
    /// # fn main() -> kiln_core::Result<()> {
    /// let dev = Device::<Cpu>::open(0)?;
    /// dev.set_cache_policy(CachePolicy::budget(4 << 20))?;
    /// drop(dev.alloc::<u8>(8 << 20)?);              // larger than the budget: freed
    /// assert_eq!(dev.memory_stats()?.cached, 0);
    /// drop(dev.alloc::<u8>(4 << 20)?);              // kept
    /// assert_eq!(dev.memory_stats()?.cached, 4 << 20);
    /// assert_eq!(dev.memory_stats()?.cache_bound, 4 << 20);
    /// # Ok(()) }
    /// ```
    pub fn set_cache_policy(&self, policy: CachePolicy) -> Result<()> {
        self.check_usable()?;
        self.shared.raw.set_cache_policy(policy)?;
        self.shared.host.set_policy(policy);
        Ok(())
    }

    /// The policy bounding what this device's pools keep for reuse.
    pub fn cache_policy(&self) -> CachePolicy {
        self.shared.host.policy()
    }

    /// Start the peaks (device and host memory) over from what is in use now.
    pub fn reset_peak_memory(&self) {
        self.shared.memory.reset_peak();
        self.shared.host.reset_peak();
    }

    /// kiln's count of the host memory for asynchronous copies
    /// ([`alloc_host`](Self::alloc_host): page-locked on CUDA) on this
    /// device: the bytes live host buffers hold, the peak, and the blocks
    /// kept for reuse (see [`HostMemoryStats`]).
    pub fn host_memory_stats(&self) -> HostMemoryStats {
        self.shared.host.stats()
    }

    /// Free the host blocks kept for reuse, largest first, until at most
    /// `keep` bytes of them stay, and start the host pool's peak in use
    /// since its last trim (its [`CachePolicy`] bound) over. Live host
    /// buffers are untouched.
    pub fn trim_host_memory(&self, keep: u64) {
        self.shared.host.trim(keep);
    }

    /// The device's host block cache.
    pub(crate) fn host_pool(&self) -> &HostPool<B> {
        &self.shared.host
    }

    /// The device's memory count.
    pub(crate) fn counter(&self) -> &Counter {
        &self.shared.memory
    }

    /// The device's default stream, used by the convenience methods of
    /// `Device` and by buffers allocated through them.
    pub fn stream(&self) -> Stream<B> {
        Stream::from_parts(self.clone(), self.shared.default_stream.clone())
    }

    /// A new stream with `priority`.
    pub fn create_stream(&self, priority: Priority) -> Result<Stream<B>> {
        self.check_usable()?;
        Ok(Stream::from_parts(self.clone(), Arc::new(Queue::new(self.shared.raw.create_stream(priority)?))))
    }

    /// A new, unrecorded event.
    pub fn create_event(&self) -> Result<Event<B>> {
        Ok(Event::from_parts(self.shared.raw.create_event()?, self.clone()))
    }

    /// Compile `program` for this device, or return the kernel compiled
    /// earlier in this process from an equal program (the same name,
    /// sources and options: see [`Program`]'s equality; programs whose
    /// hashes collide still get kernels of their own). Backends may add an
    /// on-disk cache under this one.
    pub fn kernel(&self, program: &Program) -> Result<Kernel<B>> {
        self.check_usable()?;
        let mut cache = self.shared.kernels.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(k) = cache.get(program) {
            return Ok(k.clone());
        }
        let raw = self.shared.raw.compile(program)?;
        let kernel = Kernel::from_parts(raw, self.id());
        cache.insert(program.clone(), kernel.clone());
        Ok(kernel)
    }

    /// Allocate `len` elements on the default stream (contents unspecified).
    pub fn alloc<T: Element>(&self, len: usize) -> Result<Buffer<B, T>> {
        self.stream().alloc(len)
    }

    /// Allocate `len` zeroed elements on the default stream.
    pub fn alloc_zeroed<T: Element>(&self, len: usize) -> Result<Buffer<B, T>> {
        self.stream().alloc_zeroed(len)
    }

    /// A device copy of `data`, on the default stream.
    pub fn upload<T: Element>(&self, data: &[T]) -> Result<Buffer<B, T>> {
        self.stream().upload(data)
    }

    /// A device copy of an ndarray array, its elements in row-major order.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use ndarray::array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let dev = Device::<Cpu>::open(0)?;
    /// let a = array![[1, 2], [3, 4]];
    /// let buf = dev.upload_array(&a.t())?;          // a transposed view
    /// assert_eq!(buf.to_vec()?, vec![1, 3, 2, 4]);
    /// # Ok(()) }
    /// ```
    pub fn upload_array<T: Element, S: Data<Elem = T>, D: Dimension>(
        &self,
        array: &ArrayBase<S, D>,
    ) -> Result<Buffer<B, T>> {
        match array.as_slice() {
            Some(s) => self.upload(s),
            None => self.upload(&array.iter().copied().collect::<Vec<_>>()),
        }
    }

    /// `len` elements of zeroed host memory the device copies to and from
    /// asynchronously (page-locked on CUDA). Its block comes from, and goes
    /// back to, the device's host pool: see
    /// [`host_memory_stats`](Self::host_memory_stats) and
    /// [`trim_host_memory`](Self::trim_host_memory).
    pub fn alloc_host<T: Element>(&self, len: usize) -> Result<HostBuffer<B, T>> {
        HostBuffer::new(self, len)
    }

    /// Block until all work on every stream of this device is done.
    pub fn synchronize(&self) -> Result<()> {
        self.shared.raw.synchronize().inspect_err(|e| self.note_failure(e))
    }

    /// `Err(DeviceLost)` if an earlier fault made the device unusable.
    pub fn check_usable(&self) -> Result<()> {
        match &*self.shared.lost.lock().unwrap_or_else(|p| p.into_inner()) {
            None => Ok(()),
            Some(cause) => Err(Error::DeviceLost { device: self.name().to_string(), cause: cause.clone() }),
        }
    }

    /// Remember the first fatal error (a device fault), so later calls report it.
    pub fn note_failure(&self, error: &Error) {
        if error.is_fatal() {
            let mut lost = self.shared.lost.lock().unwrap_or_else(|p| p.into_inner());
            lost.get_or_insert_with(|| error.to_string());
        }
    }
}
