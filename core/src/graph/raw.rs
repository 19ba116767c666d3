//! The backend side of graphs: the steps a backend instantiates, and its
//! executable form.

use crate::{Backend, Gemm, LaunchConfig, RawArg, RawDevice, RawStream, Result};

/// One step of a captured graph, as a backend receives it. Buffers and
/// ranges are those the typed layer checked when the work was captured.
pub enum GraphOp<'a, B: Backend> {
    /// A device-to-device copy ([`RawStream::copy`](crate::RawStream::copy)).
    Copy {
        /// Source storage.
        src: &'a B::Buffer,
        /// Byte offset in `src`.
        src_offset: usize,
        /// Destination storage.
        dst: &'a B::Buffer,
        /// Byte offset in `dst`.
        dst_offset: usize,
        /// Bytes to copy.
        bytes: usize,
    },
    /// A fill with a repeated pattern ([`RawStream::fill`](crate::RawStream::fill)).
    Fill {
        /// Destination storage.
        dst: &'a B::Buffer,
        /// Byte offset in `dst`.
        offset: usize,
        /// Bytes to fill.
        bytes: usize,
        /// The pattern: 1, 2, 4, 8 or 16 bytes.
        pattern: &'a [u8],
    },
    /// A kernel launch ([`RawStream::launch`](crate::RawStream::launch)).
    Launch {
        /// The kernel.
        kernel: &'a B::Kernel,
        /// Its shape, validated and not empty.
        config: &'a LaunchConfig,
        /// Its arguments.
        args: &'a [RawArg<'a, B>],
    },
    /// A vendor matrix product ([`RawDevice::gemm`](crate::RawDevice::gemm)).
    Gemm(Gemm<'a, B>),
    /// Mark `n`: a point on the step's lane that other lanes may join.
    Mark(usize),
    /// Later steps of this lane wait for mark `n`, set on another lane.
    Join(usize),
}

impl<B: Backend> GraphOp<'_, B> {
    /// Enqueue the step's work (a copy, fill, launch or product) on
    /// `stream` of `device` with the backend's own call for it; a mark or
    /// join enqueues nothing here (`Ok(false)`), as what it means depends
    /// on how the caller runs the lanes.
    ///
    /// # Safety
    /// - `stream` and every buffer and kernel of the step belong to `device`.
    /// - The step has passed the checks its [`RawStream`] (or, for a product,
    ///   [`RawDevice::gemm`]) method's `# Safety` asks for, and its buffers
    ///   stay alive until the work is over.
    pub unsafe fn enqueue(&self, device: &B::Device, stream: &B::Stream) -> Result<bool> {
        // SAFETY (each call): the caller's contract.
        match self {
            GraphOp::Copy { src, src_offset, dst, dst_offset, bytes } => unsafe {
                stream.copy(src, *src_offset, dst, *dst_offset, *bytes)?
            },
            GraphOp::Fill { dst, offset, bytes, pattern } => unsafe { stream.fill(dst, *offset, *bytes, pattern)? },
            GraphOp::Launch { kernel, config, args } => unsafe { stream.launch(kernel, config, args)? },
            GraphOp::Gemm(call) => unsafe { device.gemm(stream, call)? },
            GraphOp::Mark(_) | GraphOp::Join(_) => return Ok(false),
        }
        Ok(true)
    }
}

/// A [`GraphOp`] and the lane it runs on.
pub struct GraphStep<'a, B: Backend> {
    /// The lane (0 is the stream that began the capture).
    pub lane: usize,
    /// The work.
    pub op: GraphOp<'a, B>,
}

/// A backend's executable graph ([`RawDevice::instantiate_graph`](crate::RawDevice::instantiate_graph)).
pub trait RawGraph<B: Backend>: Send + Sync {
    /// Enqueue one run of the whole graph on `stream`.
    ///
    /// # Safety
    /// - `stream` belongs to the device the graph was instantiated on.
    /// - `buffers` are every buffer the graph's steps use, alive until the
    ///   run is over (the backend records their use on `stream` as for any
    ///   other work, so that their memory outlives the run).
    unsafe fn launch(&self, stream: &B::Stream, buffers: &[&B::Buffer]) -> Result<()>;
}
