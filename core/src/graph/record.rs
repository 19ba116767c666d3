//! Capture: while a stream captures, its work is recorded into a
//! [`Recording`] instead of being enqueued, holding the memory it uses.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use crate::{
    Backend, DType, Error, Gemm, GemmOperand, GemmScales, Kernel, LaunchConfig, MatmulShape, RawArg, Result, Scalar,
    Storage,
};

use super::raw::{GraphOp, GraphStep};

static NEXT_CAPTURE: AtomicU64 = AtomicU64::new(1);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A backend stream and the capture it records into, if any: what the
/// handles of one [`Stream`](crate::Stream) share.
pub(crate) struct Queue<B: Backend> {
    pub(crate) raw: B::Stream,
    /// Whether `lane` is set: one load on every enqueue, the lock only while capturing.
    capturing: AtomicBool,
    lane: Mutex<Option<Lane<B>>>,
}

impl<B: Backend> Queue<B> {
    pub(crate) fn new(raw: B::Stream) -> Self {
        Queue { raw, capturing: AtomicBool::new(false), lane: Mutex::new(None) }
    }

    /// The capture this queue records into, if any.
    #[inline]
    pub(crate) fn lane(&self) -> Option<Lane<B>> {
        if !self.capturing.load(Ordering::Acquire) {
            return None;
        }
        lock(&self.lane).clone()
    }

    /// Record into `lane` from now on; `false` (and nothing changed) when
    /// the queue records into a capture already.
    pub(crate) fn join(&self, lane: Lane<B>) -> bool {
        let mut slot = lock(&self.lane);
        if slot.is_some() {
            return false;
        }
        *slot = Some(lane);
        self.capturing.store(true, Ordering::Release);
        true
    }

    /// Run its work again.
    pub(crate) fn leave(&self) {
        let mut slot = lock(&self.lane);
        self.capturing.store(false, Ordering::Release);
        *slot = None;
    }
}

/// A queue's place in a capture: the recording and the queue's lane in it
/// (0 for the queue that began the capture).
pub(crate) struct Lane<B: Backend> {
    pub(crate) recording: Arc<Mutex<Recording<B>>>,
    pub(crate) index: usize,
}

impl<B: Backend> Clone for Lane<B> {
    fn clone(&self) -> Self {
        Lane { recording: self.recording.clone(), index: self.index }
    }
}

impl<B: Backend> Lane<B> {
    /// A new capture, whose lane 0 is `queue`.
    pub(crate) fn begin(queue: &Arc<Queue<B>>) -> Self {
        let recording = Recording {
            id: NEXT_CAPTURE.fetch_add(1, Ordering::Relaxed),
            steps: Vec::new(),
            lanes: vec![Arc::downgrade(queue)],
            marks: 0,
            staged: false,
            ended: false,
            refused: None,
        };
        Lane { recording: Arc::new(Mutex::new(recording)), index: 0 }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Recording<B>> {
        lock(&self.recording)
    }

    /// The recording, while the capture is open; an error naming `call`
    /// once it has ended (another thread ended it while `call` was on its way).
    pub(crate) fn open(&self, call: &str) -> Result<MutexGuard<'_, Recording<B>>> {
        let rec = self.lock();
        if rec.ended {
            return Err(Error::graph(
                format!("{call} during graph capture"),
                "the capture ended (on another thread) before the call was recorded; nothing was enqueued",
            ));
        }
        Ok(rec)
    }

    /// The error for `call`, refused during the capture, which it spoils.
    pub(crate) fn refuse(&self, call: &str, reason: &str) -> Error {
        self.lock().refused.get_or_insert_with(|| call.to_string());
        Error::graph(format!("{call} during graph capture"), reason)
    }

    /// Record `op` at the end of this lane.
    pub(crate) fn push(&self, call: &str, op: Op<B>) -> Result<()> {
        self.open(call)?.steps.push(Step { lane: self.index, op });
        Ok(())
    }

    /// Record a mark at the end of this lane, for an event.
    pub(crate) fn mark(&self) -> Result<EventMark<B>> {
        let mut rec = self.open("Stream::record")?;
        let mark = rec.marks;
        rec.marks += 1;
        rec.steps.push(Step { lane: self.index, op: Op::Mark(mark) });
        Ok(EventMark { recording: Arc::downgrade(&self.recording), capture: rec.id, mark })
    }
}

/// Where an event was recorded inside a capture.
pub(crate) struct EventMark<B: Backend> {
    pub(crate) recording: Weak<Mutex<Recording<B>>>,
    /// The capture's number, for messages.
    pub(crate) capture: u64,
    pub(crate) mark: usize,
}

impl<B: Backend> Clone for EventMark<B> {
    fn clone(&self) -> Self {
        EventMark { recording: self.recording.clone(), capture: self.capture, mark: self.mark }
    }
}

/// The work of one capture so far.
pub(crate) struct Recording<B: Backend> {
    pub(crate) id: u64,
    pub(crate) steps: Vec<Step<B>>,
    /// The queue of each lane (0 began the capture).
    pub(crate) lanes: Vec<Weak<Queue<B>>>,
    pub(crate) marks: usize,
    /// Host data was copied to device memory of the graph on some lane's
    /// queue: the capture's end waits for those copies.
    pub(crate) staged: bool,
    /// `end_capture` has taken the steps.
    pub(crate) ended: bool,
    /// The first call refused during the capture: the recording may lack
    /// part of the work of the call that made it (a pattern that reads its
    /// result back records its kernels first), so the capture makes no graph.
    pub(crate) refused: Option<String>,
}

/// One recorded step.
pub(crate) struct Step<B: Backend> {
    pub(crate) lane: usize,
    pub(crate) op: Op<B>,
}

/// A step's work, holding what it uses.
pub(crate) enum Op<B: Backend> {
    Copy {
        src: Arc<Storage<B>>,
        src_offset: usize,
        dst: Arc<Storage<B>>,
        dst_offset: usize,
        bytes: usize,
    },
    Fill {
        dst: Arc<Storage<B>>,
        offset: usize,
        bytes: usize,
        pattern: [u8; 16],
        width: usize,
    },
    Launch {
        kernel: Kernel<B>,
        config: LaunchConfig,
        args: Vec<OwnedArg<B>>,
    },
    Gemm {
        a: (Arc<Storage<B>>, usize),
        b: (Arc<Storage<B>>, usize),
        c: (Arc<Storage<B>>, usize),
        shape: GemmShape,
        /// A scaled product's scales (of a and of b).
        scales: Option<[Held<B>; 2]>,
    },
    Mark(usize),
    Join(usize),
}

/// A buffer a recorded step holds, and the byte offset it uses it from.
pub(crate) type Held<B> = (Arc<Storage<B>>, usize);

/// A product's sizes and types.
#[derive(Clone, Copy)]
pub(crate) struct GemmShape {
    pub(crate) shape: MatmulShape,
    pub(crate) input: DType,
    pub(crate) output: DType,
    /// b's element type, where the product is scaled.
    pub(crate) input_b: Option<DType>,
}

/// A launch argument, holding its memory.
pub(crate) enum OwnedArg<B: Backend> {
    Buffer { storage: Arc<Storage<B>>, offset: usize, len: usize, dtype: DType, writable: bool },
    Scalar(Scalar),
}

impl<B: Backend> OwnedArg<B> {
    /// The arguments of a launch, each buffer with its memory.
    pub(crate) fn list(
        kernel: &str,
        raw: &[RawArg<'_, B>],
        storages: &[Option<&Arc<Storage<B>>>],
    ) -> Result<Vec<Self>> {
        raw.iter()
            .zip(storages)
            .enumerate()
            .map(|(i, (arg, storage))| match (arg, storage) {
                (RawArg::Scalar(s), _) => Ok(OwnedArg::Scalar(*s)),
                (RawArg::Buffer { offset, len, dtype, writable, .. }, Some(storage)) => Ok(OwnedArg::Buffer {
                    storage: Arc::clone(storage),
                    offset: *offset,
                    len: *len,
                    dtype: *dtype,
                    writable: *writable,
                }),
                (RawArg::Buffer { .. }, None) => Err(Error::graph(
                    format!("launch of kernel `{kernel}` during graph capture"),
                    format!("argument {i} is a buffer range without its buffer, which a graph cannot keep alive"),
                )),
            })
            .collect()
    }

    pub(crate) fn raw(&self) -> RawArg<'_, B> {
        match self {
            OwnedArg::Buffer { storage, offset, len, dtype, writable } => {
                RawArg::Buffer { buffer: storage.raw(), offset: *offset, len: *len, dtype: *dtype, writable: *writable }
            }
            OwnedArg::Scalar(s) => RawArg::Scalar(*s),
        }
    }
}

impl<B: Backend> Op<B> {
    /// Every storage the step uses.
    pub(crate) fn storages(&self) -> Vec<&Arc<Storage<B>>> {
        match self {
            Op::Copy { src, dst, .. } => vec![src, dst],
            Op::Fill { dst, .. } => vec![dst],
            Op::Launch { args, .. } => args
                .iter()
                .filter_map(|a| match a {
                    OwnedArg::Buffer { storage, .. } => Some(storage),
                    OwnedArg::Scalar(_) => None,
                })
                .collect(),
            Op::Gemm { a, b, c, scales, .. } => {
                let mut used = vec![&a.0, &b.0, &c.0];
                used.extend(scales.iter().flatten().map(|s| &s.0));
                used
            }
            Op::Mark(_) | Op::Join(_) => Vec::new(),
        }
    }

    /// Whether the step is a kernel launch or a product.
    pub(crate) fn is_kernel(&self) -> bool {
        matches!(self, Op::Launch { .. } | Op::Gemm { .. })
    }
}

/// The backend's view of recorded steps: launch arguments are built once
/// into `args` (one list per launch, in step order), which the steps borrow.
pub(crate) fn launch_args<B: Backend>(steps: &[Step<B>]) -> Vec<Vec<RawArg<'_, B>>> {
    steps
        .iter()
        .filter_map(|s| match &s.op {
            Op::Launch { args, .. } => Some(args.iter().map(OwnedArg::raw).collect()),
            _ => None,
        })
        .collect()
}

/// The steps as the backend receives them; `args` from [`launch_args`] of the same steps.
pub(crate) fn graph_steps<'a, B: Backend>(
    steps: &'a [Step<B>],
    args: &'a [Vec<RawArg<'a, B>>],
) -> Vec<GraphStep<'a, B>> {
    let mut launches = args.iter();
    steps
        .iter()
        .map(|s| {
            let op = match &s.op {
                Op::Copy { src, src_offset, dst, dst_offset, bytes } => GraphOp::Copy {
                    src: src.raw(),
                    src_offset: *src_offset,
                    dst: dst.raw(),
                    dst_offset: *dst_offset,
                    bytes: *bytes,
                },
                Op::Fill { dst, offset, bytes, pattern, width } => {
                    GraphOp::Fill { dst: dst.raw(), offset: *offset, bytes: *bytes, pattern: &pattern[..*width] }
                }
                Op::Launch { kernel, config, .. } => GraphOp::Launch {
                    kernel: kernel.raw(),
                    config,
                    args: launches.next().map_or(&[], |a| a.as_slice()),
                },
                Op::Gemm { a, b, c, shape, scales } => GraphOp::Gemm(gemm(a, b, c, shape, scales.as_ref())),
                Op::Mark(m) => GraphOp::Mark(*m),
                Op::Join(m) => GraphOp::Join(*m),
            };
            GraphStep { lane: s.lane, op }
        })
        .collect()
}

/// The product call of recorded operands.
pub(crate) fn gemm<'a, B: Backend>(
    a: &'a (Arc<Storage<B>>, usize),
    b: &'a (Arc<Storage<B>>, usize),
    c: &'a (Arc<Storage<B>>, usize),
    shape: &GemmShape,
    scales: Option<&'a [Held<B>; 2]>,
) -> Gemm<'a, B> {
    let operand =
        |(storage, offset): &'a (Arc<Storage<B>>, usize)| GemmOperand { buffer: storage.raw(), offset: *offset };
    let scaled = match (shape.input_b, scales) {
        (Some(input_b), Some([sa, sb])) => Some(GemmScales { input_b, scale_a: operand(sa), scale_b: operand(sb) }),
        _ => None,
    };
    Gemm {
        a: operand(a),
        b: operand(b),
        c: operand(c),
        shape: shape.shape,
        input: shape.input,
        output: shape.output,
        scaled,
    }
}
