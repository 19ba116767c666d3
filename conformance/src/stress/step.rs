//! What a stress step is given, and the pieces every operation shares:
//! sizes, buffers counted while they live, a worker's page-locked buffers,
//! read-backs, and the check against the host. A leaf of the operations
//! (`patterns.rs`, `handoff.rs`, `memory.rs`) and of `ops.rs`, which picks
//! one of them for a step.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use kiln_core::{
    Backend, Buffer, BufferView, BufferViewMut, DType, Device, DeviceInfo, Element, Error, HostBuffer, Stream,
};
use kiln_core::{View, ViewMut};
use kiln_kernels::Number;
use rand::Rng;

use super::report::Tally;
use super::watchdog::Heartbeat;
use crate::{Arith, CaseRng, Expected, Mismatch, Sample, compare, poison_for};

/// The most elements of one pattern operand: enough for many blocks on any
/// GPU, few enough that the host check keeps up.
const MAX_ELEMENTS: usize = 1 << 22;

/// The most elements of a pinned buffer.
const MAX_PINNED: usize = 1 << 20;

/// Sizes and dtypes for one device, fixed for a run.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    /// The largest churn allocation, in bytes.
    pub max_alloc: u64,
    /// The most elements of a pattern operand.
    pub max_elements: usize,
    /// The numeric dtypes the device computes in.
    pub dtypes: Vec<DType>,
}

impl Plan {
    /// Cap `max_alloc` to the device's largest buffer and, where the device
    /// says how much memory it has, to a share of it small enough for every
    /// thread to hold several such buffers at once.
    pub(crate) fn new(info: &DeviceInfo, max_alloc: u64, threads: usize) -> Plan {
        let mut cap = max_alloc.min(info.limits.max_buffer_bytes);
        if info.memory_bytes > 0 {
            cap = cap.min(info.memory_bytes / (16 * threads.max(1) as u64));
        }
        let cap = cap.max(1);
        let binding = (info.limits.max_binding_bytes / 8).max(1);
        let max_elements = ((cap / 16).min(binding) as usize).clamp(1, MAX_ELEMENTS);
        let mut dtypes = vec![DType::I32, DType::U32, DType::F32];
        if info.features.f64 {
            dtypes.push(DType::F64);
        }
        Plan { max_alloc: cap, max_elements, dtypes }
    }

    /// A pattern length: log-uniform from 1 to the maximum, and 0 one time in 32.
    pub(crate) fn len(&self, rng: &mut CaseRng) -> usize {
        if rng.random_ratio(1, 32) { 0 } else { log_uniform(rng, 1, self.max_elements as u64) as usize }
    }

    /// The length of a pinned buffer.
    pub(crate) fn pinned_len(&self, rng: &mut CaseRng) -> usize {
        log_uniform(rng, 1, self.max_elements.min(MAX_PINNED) as u64) as usize
    }
}

/// A random value in `lo..=hi` whose logarithm is uniform: small and large
/// sizes alike.
pub(crate) fn log_uniform(rng: &mut CaseRng, lo: u64, hi: u64) -> u64 {
    if hi <= lo {
        return lo;
    }
    let (a, b) = ((lo as f64).ln(), ((hi + 1) as f64).ln());
    (rng.random_range(a..b).exp() as u64).clamp(lo, hi)
}

/// How a step ended, short of a passed check.
#[derive(Debug)]
pub(crate) enum Fault {
    /// The device's result differed from the host's.
    Mismatch(Mismatch),
    /// The library returned an error.
    Library(Error),
    /// The device refused the operation (a dtype it lacks): a skip.
    Unsupported,
}

impl From<Error> for Fault {
    fn from(e: Error) -> Self {
        match e {
            Error::Unsupported { .. } => Fault::Unsupported,
            e => Fault::Library(e),
        }
    }
}

/// The check of the device's results against the host's, counted.
#[derive(Clone)]
pub(crate) struct Check {
    /// Alter one element of each result before comparing it (a hook's
    /// [`StepAction::Corrupt`](super::StepAction::Corrupt)): proof that a
    /// wrong result is caught.
    pub corrupt: bool,
    pub tally: Arc<Tally>,
}

impl Check {
    /// `Err(Fault::Mismatch)` unless `got` matches `expected`.
    pub(crate) fn expect<T: Sample>(&self, what: &str, expected: &Expected<T>, mut got: Vec<T>) -> Result<(), Fault> {
        if self.corrupt && !got.is_empty() && got.len() == expected.values.len() {
            let i = got.len() / 2;
            got[i] = T::poison(expected.values[i]);
        }
        compare(what, expected, &got).map_err(Fault::Mismatch)?;
        self.tally.checked(got.len());
        Ok(())
    }
}

/// The rest of a started operation: read its results back and check them.
pub(crate) type Finish = Box<dyn FnOnce() -> Result<(), Fault>>;

/// What starting an operation left to do.
pub(crate) enum Started {
    /// Everything, checks included, is done.
    Done,
    /// Work is in flight; the closure reads it back and checks it.
    Pending(Finish),
}

/// A device buffer the suite allocated, counted as live until dropped.
pub(crate) struct Owned<B: Backend, T: Element> {
    buf: Buffer<B, T>,
    tally: Arc<Tally>,
}

impl<B: Backend, T: Element> Deref for Owned<B, T> {
    type Target = Buffer<B, T>;
    fn deref(&self) -> &Buffer<B, T> {
        &self.buf
    }
}

impl<B: Backend, T: Element> DerefMut for Owned<B, T> {
    fn deref_mut(&mut self) -> &mut Buffer<B, T> {
        &mut self.buf
    }
}

impl<B: Backend, T: Element> View<B, T> for Owned<B, T> {
    fn view(&self) -> BufferView<'_, B, T> {
        self.buf.view()
    }
}

impl<B: Backend, T: Element> ViewMut<B, T> for Owned<B, T> {
    fn view_mut(&mut self) -> BufferViewMut<'_, B, T> {
        self.buf.view_mut()
    }
}

impl<B: Backend, T: Element> Drop for Owned<B, T> {
    fn drop(&mut self) {
        self.tally.released(self.buf.size_bytes());
    }
}

/// What one step is given.
pub(crate) struct Step<'a, B: Backend> {
    /// The worker's streams.
    pub streams: &'a [Stream<B>],
    pub plan: &'a Plan,
    /// Seeded from the base seed, the thread and the step.
    pub rng: CaseRng,
    pub check: Check,
    /// The worker's page-locked buffers, reused by every `Pinned` step.
    pub pinned: &'a mut [Pinned<B>],
    pub heartbeat: &'a Heartbeat,
    /// What the operation works on, for the reports.
    pub detail: String,
}

impl<B: Backend> Step<'_, B> {
    /// Record what the operation works on (dtype, sizes, streams).
    pub(crate) fn describe(&mut self, detail: String) {
        self.heartbeat.describe(detail.clone());
        self.detail = detail;
    }

    pub(crate) fn tally(&self) -> &Tally {
        &self.check.tally
    }

    /// A random stream and its index.
    pub(crate) fn stream(&mut self) -> (usize, Stream<B>) {
        let i = self.rng.random_range(0..self.streams.len());
        (i, self.streams[i].clone())
    }

    /// Two random streams, distinct when the worker has more than one.
    pub(crate) fn two_streams(&mut self) -> ((usize, Stream<B>), (usize, Stream<B>)) {
        let n = self.streams.len();
        let a = self.rng.random_range(0..n);
        let b = if n > 1 { (a + self.rng.random_range(1..n)) % n } else { a };
        ((a, self.streams[a].clone()), (b, self.streams[b].clone()))
    }

    /// A random numeric dtype the device computes in.
    pub(crate) fn dtype(&mut self) -> DType {
        self.plan.dtypes[self.rng.random_range(0..self.plan.dtypes.len())]
    }

    /// `len` elements on `stream`, contents unspecified.
    pub(crate) fn alloc<T: Element>(&self, stream: &Stream<B>, len: usize) -> kiln_core::Result<Owned<B, T>> {
        let buf = stream.alloc(len)?;
        self.tally().allocated(buf.size_bytes());
        Ok(Owned { buf, tally: self.check.tally.clone() })
    }

    /// A copy of `data` on `stream`.
    pub(crate) fn upload<T: Element>(&self, stream: &Stream<B>, data: &[T]) -> kiln_core::Result<Owned<B, T>> {
        let mut buf = self.alloc(stream, data.len())?;
        stream.copy_to_device(data, &mut buf)?;
        self.tally().moved(size_of_val(data));
        Ok(buf)
    }

    /// The poison of each expected value on `stream`, for a kernel to overwrite.
    pub(crate) fn poisoned<T: Sample>(&self, stream: &Stream<B>, expected: &[T]) -> kiln_core::Result<Owned<B, T>> {
        self.upload(stream, &poison_for(expected))
    }

    /// What is left once the work writing `out` on `stream` is enqueued:
    /// read `out` back and check it against `expected`, as `what`.
    pub(crate) fn check_later<T: Sample>(
        &self,
        stream: Stream<B>,
        out: Owned<B, T>,
        what: String,
        expected: Expected<T>,
    ) -> Started {
        let check = self.check.clone();
        Started::Pending(Box::new(move || {
            let got = read(&check.tally, &stream, &out)?;
            check.expect(&what, &expected, got)
        }))
    }
}

/// `src` read back on `stream` (which must be ordered after its writers).
pub(crate) fn read<B: Backend, T: Element>(
    tally: &Tally,
    stream: &Stream<B>,
    src: &impl View<B, T>,
) -> kiln_core::Result<Vec<T>> {
    let mut out = vec![T::default(); src.view().len()];
    stream.copy_to_host(src, &mut out)?;
    tally.moved(size_of_val(&out[..]));
    Ok(out)
}

/// Random inputs: moderate values for floats (no overflow, no subnormal
/// results, so every backend must agree within rounding), the adversarial
/// mix for integers (which wrap, exactly).
pub(crate) fn inputs<T: Sample>(rng: &mut CaseRng, n: usize) -> Vec<T> {
    if T::IS_FLOAT { (0..n).map(|_| T::random_moderate(rng)).collect() } else { crate::random_vec(rng, n) }
}

/// Neumaier's compensated f64 sum, the reference for float sums.
#[derive(Debug, Clone, Copy, Default)]
struct Compensated {
    sum: f64,
    error: f64,
}

impl Compensated {
    fn add(&mut self, v: f64) {
        let t = self.sum + v;
        self.error += if self.sum.abs() >= v.abs() { (self.sum - t) + v } else { (v - t) + self.sum };
        self.sum = t;
    }

    fn value(&self) -> f64 {
        self.sum + self.error
    }
}

/// `v` rounded to `T` (a float type).
fn from_f64<T: Sample>(v: f64) -> T {
    match T::DTYPE {
        DType::F32 => bytemuck::cast_slice::<f32, T>(&[v as f32])[0],
        _ => bytemuck::cast_slice::<f64, T>(&[v])[0],
    }
}

/// The inclusive prefix sums of `x`, each with the bound the kernels
/// document: `eps * ((4 log2(n + 1) + 2) * sum(|x|) + |sum|)` for floats
/// (a tree of partial sums loses one rounding per level), 0 for integers,
/// which wrap and must match exactly.
pub(crate) fn prefix_sums<T: Arith + Number>(x: &[T]) -> Expected<T> {
    let levels = 4.0 * ((x.len() + 1) as f64).log2() + 2.0;
    let (mut values, mut bounds) = (Vec::with_capacity(x.len()), Vec::with_capacity(x.len()));
    let (mut int, mut float, mut magnitude) = (T::index(0), Compensated::default(), 0.0f64);
    for &v in x {
        if <T as Sample>::IS_FLOAT {
            float.add(v.to_f64());
            magnitude += v.to_f64().abs();
            values.push(from_f64(float.value()));
            bounds.push(T::epsilon() * (levels * magnitude + float.value().abs()));
        } else {
            int = T::plus(int, v);
            values.push(int);
            bounds.push(0.0);
        }
    }
    Expected::within(values, bounds)
}

/// The sum of `x` as a one-element expectation, with its bound.
pub(crate) fn total<T: Arith + Number>(x: &[T]) -> Expected<T> {
    let all = prefix_sums(x);
    match (all.values.last(), all.bounds.last()) {
        (Some(&v), Some(&b)) => Expected::within(vec![v], vec![b]),
        _ => Expected::within(vec![T::index(0)], vec![0.0]),
    }
}

/// A worker's pair of page-locked buffers, kept for the whole run: `up`
/// feeds copies to the device, `down` receives copies back.
pub(crate) struct Pinned<B: Backend> {
    pub(super) up: HostBuffer<B, u32>,
    pub(super) down: HostBuffer<B, u32>,
}

impl<B: Backend> Pinned<B> {
    /// A pair of `len` elements each.
    pub(crate) fn new(dev: &Device<B>, len: usize) -> kiln_core::Result<Self> {
        Ok(Pinned { up: dev.alloc_host(len)?, down: dev.alloc_host(len)? })
    }

    pub(super) fn len(&self) -> usize {
        self.up.len()
    }
}
