//! Graphs: work captured from a stream once and replayed as a unit, CuPy's
//! `stream.begin_capture()` / `end_capture()` / `graph.launch()`.
//!
//! While a stream captures ([`Stream::begin_capture`]), the work enqueued on
//! it (copies, fills, launches, products, and so every kiln pattern) is
//! recorded rather than run, holding the memory it uses; other streams join
//! the capture by waiting for an event recorded on a capturing stream, and
//! are joined back the same way. [`Stream::end_capture`] turns the recording
//! into a [`Graph`], which [`Graph::launch`] replays on any stream of the
//! device, any number of times. CUDA runs a graph as one `CUgraphExec`;
//! wgpu records its launches checked and bound once, and replays only their
//! dispatches (or, where a launch stages a view through a temporary, its
//! steps in order); the CPU enqueues its steps in order on the stream. The
//! same API on every backend.
//!
//! [`Stream::begin_capture`]: crate::Stream::begin_capture
//! [`Stream::end_capture`]: crate::Stream::end_capture

mod capture;
mod joins;
mod raw;
pub(crate) mod record;

use std::collections::HashSet;
use std::sync::Arc;

use crate::{Backend, Device, Error, RawDevice, Result, Storage, Stream};

pub use raw::{GraphOp, GraphStep, RawGraph};
use record::{graph_steps, launch_args, Op, Step};

/// Work captured from a stream, replayed with [`launch`](Self::launch).
///
/// A graph holds the memory of every buffer its work uses (dropping the
/// buffers does not free it) and replays the work on whatever those
/// buffers hold at the time: as with CUDA graphs, the values change from
/// one replay to the next, the buffers and shapes do not. Cheap to share
/// across threads; a replay is ordered on its stream like any other work.
/// It writes into its buffers whoever else holds them, so ordering it
/// against their other uses is the user's, as for work on two streams
/// ([`Stream`]'s docs say what each backend guarantees where it is not
/// ordered: on the CPU each step holds its buffers while it runs, so
/// nothing reads a step half done).
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let mut x = s.upload(&[1.0f32, 2.0])?;
/// let mut y = s.alloc::<f32>(2)?;
/// s.begin_capture()?;
/// s.copy(&x, &mut y)?;                    // recorded, not run
/// s.fill(&mut x, 0.0)?;
/// let graph = s.end_capture()?;
/// assert_eq!(x.to_vec()?, [1.0, 2.0]);    // nothing ran yet
/// graph.launch(&s)?;
/// assert_eq!((x.to_vec()?, y.to_vec()?), (vec![0.0, 0.0], vec![1.0, 2.0]));
/// # Ok(()) }
/// ```
pub struct Graph<B: Backend> {
    device: Device<B>,
    steps: Vec<Step<B>>,
    /// Every storage the steps use, once each.
    storages: Vec<Arc<Storage<B>>>,
    native: Option<Box<dyn RawGraph<B>>>,
}

impl<B: Backend> std::fmt::Debug for Graph<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Graph({} steps, {} kernels, {} buffers on {}{})",
            self.len(),
            self.kernels(),
            self.storages.len(),
            self.device.name(),
            if self.native.is_some() { ", native" } else { "" }
        )
    }
}

impl<B: Backend> Graph<B> {
    /// Make the graph of `steps`, recorded on `device`: the backend's own
    /// form where it has one.
    pub(crate) fn new(device: Device<B>, steps: Vec<Step<B>>, lanes: usize) -> Result<Self> {
        let mut seen = HashSet::new();
        let storages =
            steps.iter().flat_map(|s| s.op.storages()).filter(|s| seen.insert(Arc::as_ptr(s))).cloned().collect();
        let native = if steps.iter().any(|s| !matches!(s.op, Op::Mark(_) | Op::Join(_))) {
            let args = launch_args(&steps);
            let raw_steps = graph_steps(&steps, &args);
            device.check_usable()?;
            // SAFETY: every step passed the typed layer's checks for its call
            // on this device when it was recorded and holds its memory; the
            // joins were checked by `end_capture` (see `joins`).
            unsafe { device.raw().instantiate_graph(&raw_steps, lanes) }.inspect_err(|e| device.note_failure(e))?
        } else {
            None
        };
        Ok(Graph { device, steps, storages, native })
    }

    /// The device the graph runs on.
    pub fn device(&self) -> &Device<B> {
        &self.device
    }

    /// The number of copies, fills, launches and products the graph holds.
    pub fn len(&self) -> usize {
        self.steps.iter().filter(|s| !matches!(s.op, Op::Mark(_) | Op::Join(_))).count()
    }

    /// Whether the graph holds no work (a launch does nothing).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The number of kernel launches and products among its steps.
    pub fn kernels(&self) -> usize {
        self.steps.iter().filter(|s| s.op.is_kernel()).count()
    }

    /// Whether the backend runs the graph in a form of its own (a CUDA graph;
    /// on wgpu, launches checked and bound once) rather than enqueuing its
    /// steps one by one.
    pub fn is_native(&self) -> bool {
        self.native.is_some()
    }

    /// The bytes of device memory the graph keeps alive.
    pub fn memory_bytes(&self) -> u64 {
        self.storages.iter().map(|s| crate::RawBuffer::len(s.raw()) as u64).sum()
    }

    /// Enqueue one replay of the graph on `stream`, which may be any stream
    /// of the graph's device (the one it was captured on or another);
    /// returns once it is enqueued. Work enqueued on `stream` before runs
    /// before it, work after runs after it.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{Device, Priority};
    /// use kiln_cpu::Cpu;
    /// # fn main() -> kiln_core::Result<()> {
    /// let dev = Device::<Cpu>::open(0)?;
    /// let s = dev.stream();
    /// let mut x = s.upload(&[1u32, 2, 3])?;
    /// s.begin_capture()?;
    /// s.fill(&mut x.slice_mut(1..)?, 9)?;
    /// let graph = s.end_capture()?;
    /// let other = dev.create_stream(Priority::High)?;
    /// graph.launch(&other)?;
    /// assert_eq!(x.to_vec()?, [1, 9, 9]);
    /// assert!(graph.launch(&Device::<Cpu>::open(0)?.stream()).is_err(), "another device");
    /// # Ok(()) }
    /// ```
    pub fn launch(&self, stream: &Stream<B>) -> Result<()> {
        if !stream.device().same(&self.device) {
            return Err(Error::DeviceMismatch {
                what: "Graph::launch".to_string(),
                first: self.device.name().to_string(),
                second: stream.device().name().to_string(),
            });
        }
        stream.refuse_in_capture(
            "Graph::launch",
            "graphs do not nest: launch the graph before begin_capture or after end_capture",
        )?;
        self.device.check_usable()?;
        if let Some(native) = &self.native {
            let buffers: Vec<&B::Buffer> = self.storages.iter().map(|s| s.raw()).collect();
            // SAFETY: the stream is the graph's device's (checked); the graph
            // holds every storage its steps use, passed here.
            return unsafe { native.launch(stream.raw(), &buffers) }.inspect_err(|e| self.device.note_failure(e));
        }
        self.replay(stream).inspect_err(|e| self.device.note_failure(e))
    }

    /// Enqueue the steps one by one on `stream`.
    fn replay(&self, stream: &Stream<B>) -> Result<()> {
        let args = launch_args(&self.steps);
        for step in graph_steps(&self.steps, &args) {
            // SAFETY: the step passed the typed layer's checks for its call on
            // this device when it was recorded (ranges inside their buffers,
            // shapes validated and not empty, products checked), and the
            // graph holds its memory; `stream` is this device's. Ordering the
            // data against other streams is the user's, as for any work.
            unsafe { step.op.enqueue(self.device.raw(), stream.raw())? };
        }
        Ok(())
    }
}
