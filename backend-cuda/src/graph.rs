//! CUDA graphs: a capture's steps are enqueued once on private streams in
//! capture mode (one per lane, joined through events as the user's streams
//! were), the driver's graph is instantiated, and each replay is one
//! `cuGraphLaunch`.
//!
//! The private streams run nothing while capturing, so buffers record no
//! use there (`CudaBuffer::is_foreign`); instead each launch records the use
//! of every buffer the graph holds on the launching stream, as any other
//! work on that stream would, so their memory outlives the replay.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::CudaEvent as DriverEvent;
use kiln_core::{GraphOp, GraphStep, RawGraph, Result};

use crate::ffi::{self, GraphExec};
use crate::state::DeviceState;
use crate::{Cuda, CudaBuffer, CudaDevice, CudaStream};

/// An instantiated graph of one device.
pub(crate) struct CudaGraph {
    exec: GraphExec,
    graph: ffi::Graph,
    /// The driver forbids using one executable graph from two threads at once.
    launch: Mutex<()>,
    state: Arc<DeviceState>,
}

// SAFETY: the handles are plain driver pointers of the device's context;
// every use takes `launch` (or is `Drop`, which has `&mut self`).
unsafe impl Send for CudaGraph {}
// SAFETY: as for `Send`.
unsafe impl Sync for CudaGraph {}

impl Drop for CudaGraph {
    fn drop(&mut self) {
        if self.state.is_lost() || self.state.bind("cuGraphExecDestroy").is_err() {
            return;
        }
        // SAFETY: both handles were made on this context, which is current,
        // and are destroyed once; a replay in flight completes first (the
        // driver frees an executable graph asynchronously). A failure leaves
        // only the driver's memory for the graph behind, with no one to tell.
        unsafe {
            let _ = ffi::graph_exec_destroy(self.exec);
            let _ = ffi::graph_destroy(self.graph);
        }
    }
}

impl RawGraph<Cuda> for CudaGraph {
    unsafe fn launch(&self, stream: &CudaStream, buffers: &[&CudaBuffer]) -> Result<()> {
        stream.enter("cuGraphLaunch")?;
        let foreign: Vec<&CudaBuffer> = buffers.iter().copied().filter(|b| b.is_foreign(stream)).collect();
        for b in &foreign {
            b.before_foreign_use(stream)?;
        }
        let launched = {
            let _one = self.launch.lock().unwrap_or_else(|p| p.into_inner());
            // SAFETY: the executable graph is this context's (the stream's
            // device is the graph's, checked by the caller), used by one
            // thread at a time (the lock), and its buffers' uses are recorded
            // on `stream` around the launch, so their memory outlives it.
            unsafe { ffi::graph_launch(self.exec, &stream.stream) }.map_err(|e| stream.fail("cuGraphLaunch", e))
        };
        let mut recorded = Ok(());
        for b in &foreign {
            let r = b.after_foreign_use(stream);
            recorded = recorded.and(r);
        }
        launched.and(recorded)
    }
}

/// Capture `steps` into a graph of `device` and instantiate it.
///
/// # Safety
/// As [`RawDevice::instantiate_graph`].
pub(crate) unsafe fn instantiate(
    device: &CudaDevice,
    steps: &[GraphStep<'_, Cuda>],
    lanes: usize,
) -> Result<Box<dyn RawGraph<Cuda>>> {
    let state = device.state().clone();
    state.check_usable()?;
    let streams = (0..lanes.max(1)).map(|_| CudaStream::capturing(state.clone())).collect::<Result<Vec<_>>>()?;
    let origin = &streams[0];
    origin.enter("cuStreamBeginCapture")?;
    ffi::begin_capture(&origin.stream).map_err(|e| origin.fail("cuStreamBeginCapture", e))?;
    // SAFETY: the caller's contract is what each step's call asks for.
    let enqueued = unsafe { enqueue(device, &state, &streams, steps) };
    // Ended whatever happened, so that the stream leaves capture mode.
    let ended = ffi::end_capture(&origin.stream).map_err(|e| origin.fail("cuStreamEndCapture", e));
    let graph = match (enqueued, ended) {
        (Ok(()), Ok(graph)) => graph,
        (Err(e), ended) => {
            if let Ok(graph) = ended {
                // SAFETY: the graph was just made on this context and is not used again.
                let _ = unsafe { ffi::graph_destroy(graph) };
            }
            return Err(e);
        }
        (Ok(()), Err(e)) => return Err(e),
    };
    // SAFETY: `graph` is live, of this context, which is current.
    match unsafe { ffi::instantiate(graph) } {
        Ok(exec) => Ok(Box::new(CudaGraph { exec, graph, launch: Mutex::new(()), state })),
        Err(e) => {
            // SAFETY: as above.
            let _ = unsafe { ffi::graph_destroy(graph) };
            Err(origin.fail("cuGraphInstantiateWithFlags", e))
        }
    }
}

/// Enqueue every step on its lane's capturing stream.
///
/// # Safety
/// As [`RawDevice::instantiate_graph`].
unsafe fn enqueue(
    device: &CudaDevice,
    state: &Arc<DeviceState>,
    streams: &[CudaStream],
    steps: &[GraphStep<'_, Cuda>],
) -> Result<()> {
    let mut marks: HashMap<usize, DriverEvent> = HashMap::new();
    for step in steps {
        let stream = &streams[step.lane];
        match &step.op {
            GraphOp::Mark(m) => {
                stream.enter("cuEventRecord")?;
                let event = state
                    .ctx
                    .new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
                    .map_err(|e| stream.fail("cuEventCreate (graph capture)", e))?;
                event.record(&stream.stream).map_err(|e| stream.fail("cuEventRecord (graph capture)", e))?;
                marks.insert(*m, event);
            }
            GraphOp::Join(m) => {
                let Some(event) = marks.get(m) else {
                    return Err(kiln_core::Error::Graph {
                        call: "graph instantiation".to_string(),
                        reason: format!("lane {} joins mark {m}, which no earlier step set", step.lane),
                    });
                };
                stream.enter("cuStreamWaitEvent")?;
                stream.stream.wait(event).map_err(|e| stream.fail("cuStreamWaitEvent (graph capture)", e))?;
            }
            // SAFETY: the caller's contract for the step, whose buffers and
            // kernel are this device's; the stream is this device's.
            work => _ = unsafe { work.enqueue(device, stream)? },
        }
    }
    Ok(())
}
