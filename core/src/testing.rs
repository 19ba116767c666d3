//! A backend that does no work and counts what it is asked to do, for tests
//! of the typed layer's checks and bookkeeping (what reaches the backend, in
//! which order, and how many events stay alive). Failures can be switched on
//! to exercise the error paths no real backend produces on demand.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::{
    Backend, BackendKind, Device, DeviceInfo, DeviceKind, Error, Features, IndexWidth, Language, LaunchConfig, Limits,
    MatrixUnits, MemoryCounts, MemoryInfo, Priority, Program, RawArg, RawBuffer, RawDevice, RawEvent, RawHostBuffer,
    RawKernel, RawStream, Result,
};

/// What the mock backend was asked to do, and which failures to inject.
#[derive(Default)]
pub(crate) struct Counters {
    pub launches: AtomicUsize,
    /// Programs compiled.
    pub compiles: AtomicUsize,
    pub async_copies: AtomicUsize,
    pub stream_syncs: AtomicUsize,
    pub live_events: AtomicUsize,
    /// Calls in order: "create_event", "copy", "record", "sync".
    pub log: Mutex<Vec<&'static str>>,
    pub fail_create_event: AtomicBool,
    pub fail_record: AtomicBool,
    /// Whether events report completion; when false, they stay pending until
    /// waited on, as on a busy GPU.
    pub events_complete: AtomicBool,
    /// Host blocks allocated.
    pub host_allocs: AtomicUsize,
    /// Host allocations still to refuse with `OutOfMemory`.
    pub fail_host_allocs: AtomicUsize,
}

impl Counters {
    fn note(&self, what: &'static str) {
        self.log.lock().unwrap().push(what);
    }

    pub fn take_log(&self) -> Vec<&'static str> {
        std::mem::take(&mut *self.log.lock().unwrap())
    }
}

fn injected(what: &str) -> Error {
    Error::invalid(what, "failure injected by the test backend")
}

#[derive(Debug)]
pub(crate) struct Mock;

/// A device of the mock backend, with its counters.
pub(crate) fn device() -> (Device<Mock>, Arc<Counters>) {
    let counters = Arc::new(Counters::default());
    let dev = Device::from_raw(MockDevice { info: info(), counters: counters.clone() }).unwrap();
    (dev, counters)
}

/// The mock device's limits: a GPU's usual block and grid bounds, 1 GiB buffers.
pub(crate) fn limits() -> Limits {
    Limits {
        max_threads_per_block: 1024,
        max_block: [1024, 1024, 64],
        max_grid: [u32::MAX; 3],
        max_shared_mem_per_block: 48 * 1024,
        max_buffer_bytes: 1 << 30,
        max_binding_bytes: 1 << 30,
        warp_size: 32,
        min_warp_size: 32,
    }
}

fn info() -> DeviceInfo {
    DeviceInfo {
        backend: BackendKind::Cpu,
        ordinal: 0,
        name: "mock".to_string(),
        kind: DeviceKind::Other,
        compute_units: 1,
        memory_bytes: 1 << 30,
        compute_capability: None,
        driver: "mock".to_string(),
        limits: limits(),
        features: Features {
            f64: true,
            f16: true,
            bf16: true,
            float_atomics: true,
            int64: true,
            wide_multiply: true,
            subgroups: false,
            timestamps: false,
            forward_progress: true,
            index_width: IndexWidth::U64,
            vector_bytes: 16,
            matrix_units: MatrixUnits::default(),
        },
    }
}

impl Backend for Mock {
    const KIND: BackendKind = BackendKind::Cpu;
    const LANGUAGE: Language = Language::Host;
    type Device = MockDevice;
    type Stream = MockStream;
    type Buffer = MockBuffer;
    type HostBuffer = MockHostBuffer;
    type Event = MockEvent;
    type Kernel = MockKernel;

    fn devices() -> Result<Vec<DeviceInfo>> {
        Ok(vec![info()])
    }

    fn open(_ordinal: usize) -> Result<MockDevice> {
        Ok(MockDevice { info: info(), counters: Arc::default() })
    }
}

pub(crate) struct MockDevice {
    info: DeviceInfo,
    counters: Arc<Counters>,
}

impl RawDevice for MockDevice {
    type B = Mock;

    fn info(&self) -> &DeviceInfo {
        &self.info
    }

    fn memory(&self) -> Result<MemoryInfo> {
        Ok(MemoryInfo { free: 1 << 30, total: 1 << 30, allocated: None, reserved: None })
    }

    fn create_stream(&self, priority: Priority) -> Result<MockStream> {
        Ok(MockStream { priority, counters: self.counters.clone() })
    }

    fn create_event(&self) -> Result<MockEvent> {
        self.counters.note("create_event");
        if self.counters.fail_create_event.load(Ordering::SeqCst) {
            return Err(injected("create_event"));
        }
        self.counters.live_events.fetch_add(1, Ordering::SeqCst);
        Ok(MockEvent { counters: self.counters.clone() })
    }

    fn alloc_host(&self, bytes: usize) -> Result<MockHostBuffer> {
        let refuse =
            self.counters.fail_host_allocs.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1));
        if refuse.is_ok() {
            return Err(Error::OutOfMemory {
                device: "mock".into(),
                what: "host block".into(),
                requested: bytes as u64,
                counts: MemoryCounts::free(None),
            });
        }
        self.counters.host_allocs.fetch_add(1, Ordering::SeqCst);
        Ok(MockHostBuffer(vec![0; bytes.div_ceil(8)].into_boxed_slice(), bytes))
    }

    fn compile(&self, program: &Program) -> Result<MockKernel> {
        self.counters.compiles.fetch_add(1, Ordering::SeqCst);
        Ok(MockKernel(program.name().to_string()))
    }

    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
}

pub(crate) struct MockStream {
    priority: Priority,
    counters: Arc<Counters>,
}

impl RawStream for MockStream {
    type B = Mock;

    fn priority(&self) -> Priority {
        self.priority
    }

    fn alloc(&self, bytes: usize) -> Result<MockBuffer> {
        Ok(MockBuffer(bytes))
    }

    unsafe fn write(&self, _dst: &MockBuffer, _dst_offset: usize, _src: &[u8]) -> Result<()> {
        Ok(())
    }

    unsafe fn read(&self, _src: &MockBuffer, _src_offset: usize, dst: &mut [u8]) -> Result<()> {
        dst.fill(0);
        Ok(())
    }

    unsafe fn write_async(&self, _: &MockBuffer, _: usize, _: &MockHostBuffer, _: usize, _: usize) -> Result<()> {
        self.counters.note("copy");
        self.counters.async_copies.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    unsafe fn read_async(&self, _: &MockBuffer, _: usize, _: &MockHostBuffer, _: usize, _: usize) -> Result<()> {
        self.counters.note("copy");
        self.counters.async_copies.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    unsafe fn copy(&self, _: &MockBuffer, _: usize, _: &MockBuffer, _: usize, _: usize) -> Result<()> {
        Ok(())
    }

    unsafe fn fill(&self, _: &MockBuffer, _: usize, _: usize, _: &[u8]) -> Result<()> {
        Ok(())
    }

    unsafe fn launch(&self, _: &MockKernel, _: &LaunchConfig, _: &[RawArg<'_, Mock>]) -> Result<()> {
        self.counters.launches.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    fn record(&self, _event: &MockEvent) -> Result<()> {
        self.counters.note("record");
        if self.counters.fail_record.load(Ordering::SeqCst) {
            return Err(injected("record"));
        }
        Ok(())
    }

    fn wait(&self, _event: &MockEvent) -> Result<()> {
        Ok(())
    }

    fn synchronize(&self) -> Result<()> {
        self.counters.note("sync");
        self.counters.stream_syncs.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

#[derive(Debug)]
pub(crate) struct MockBuffer(usize);

impl RawBuffer for MockBuffer {
    fn len(&self) -> usize {
        self.0
    }
}

/// Host memory aligned for every element type, as the real backends' is.
pub(crate) struct MockHostBuffer(Box<[u64]>, usize);

impl RawHostBuffer for MockHostBuffer {
    fn len(&self) -> usize {
        self.1
    }
    unsafe fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice(&self.0)[..self.1]
    }
    unsafe fn bytes_mut(&mut self) -> &mut [u8] {
        &mut bytemuck::cast_slice_mut(&mut self.0)[..self.1]
    }
}

pub(crate) struct MockEvent {
    counters: Arc<Counters>,
}

impl Drop for MockEvent {
    fn drop(&mut self) {
        self.counters.live_events.fetch_sub(1, Ordering::SeqCst);
    }
}

impl RawEvent for MockEvent {
    fn query(&self) -> Result<bool> {
        Ok(self.counters.events_complete.load(Ordering::SeqCst))
    }
    fn synchronize(&self) -> Result<()> {
        Ok(())
    }
    fn elapsed_since(&self, _start: &Self) -> Result<Duration> {
        Ok(Duration::ZERO)
    }
}

pub(crate) struct MockKernel(String);

impl RawKernel for MockKernel {
    fn name(&self) -> &str {
        &self.0
    }
}
