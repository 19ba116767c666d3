//! The collectives, on one rank ([`Comm`]) or on every rank of this
//! process at once ([`Comms`]): all-reduce, reduce, broadcast, all-gather,
//! reduce-scatter, each checked before it is enqueued.

use std::ffi::c_int;

use cudarc::nccl::sys::{ncclDataType_t, ncclRedOp_t};
use kiln_core::{Buffer, DType, Element, Error, Result, Stream, View, ViewMut};

use super::comm::{Comm, Comms};
use crate::Cuda;

/// How a reducing collective combines the ranks' elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The sum.
    Sum,
    /// The product.
    Prod,
    /// The largest.
    Max,
    /// The smallest.
    Min,
    /// The mean (the sum over the number of ranks; integers round as NCCL does).
    Avg,
}

impl ReduceOp {
    fn raw(self) -> ncclRedOp_t {
        match self {
            ReduceOp::Sum => ncclRedOp_t::ncclSum,
            ReduceOp::Prod => ncclRedOp_t::ncclProd,
            ReduceOp::Max => ncclRedOp_t::ncclMax,
            ReduceOp::Min => ncclRedOp_t::ncclMin,
            ReduceOp::Avg => ncclRedOp_t::ncclAvg,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    AllReduce,
    Reduce,
    Broadcast,
    AllGather,
    ReduceScatter,
}

impl Kind {
    /// Whether NCCL's count is the receive range's length (broadcast, where
    /// only the root's send range is read, and reduce-scatter, whose count
    /// is per rank) rather than the send range's.
    fn counts_receive(self) -> bool {
        matches!(self, Kind::Broadcast | Kind::ReduceScatter)
    }
}

/// One collective as every rank must call it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Call {
    kind: Kind,
    op: Option<ReduceOp>,
    root: usize,
    dtype: DType,
    /// NCCL's count: per rank for all-gather and reduce-scatter.
    count: usize,
}

impl Call {
    fn name(&self) -> &'static str {
        match self.kind {
            Kind::AllReduce => "ncclAllReduce",
            Kind::Reduce => "ncclReduce",
            Kind::Broadcast => "ncclBroadcast",
            Kind::AllGather => "ncclAllGather",
            Kind::ReduceScatter => "ncclReduceScatter",
        }
    }

    fn describe(&self) -> String {
        let op = self.op.map(|o| format!(" {o:?}")).unwrap_or_default();
        let root = if matches!(self.kind, Kind::Reduce | Kind::Broadcast) {
            format!(" to/from rank {}", self.root)
        } else {
            String::new()
        };
        format!("{}{op}{root} of {} x {}", self.name(), self.count, self.dtype)
    }

    /// The call as words every rank can compare.
    fn words(&self) -> [u32; 8] {
        let op = self.op.map_or(u32::MAX, |o| o.raw() as u32);
        let count = self.count as u64;
        [self.kind as u32, op, self.root as u32, dtype_code(self.dtype), count as u32, (count >> 32) as u32, 0, 0]
    }

    /// Lengths of the send and receive ranges for a communicator of `size`.
    fn lengths(&self, size: usize) -> (usize, usize) {
        match self.kind {
            Kind::AllReduce | Kind::Reduce | Kind::Broadcast => (self.count, self.count),
            Kind::AllGather => (self.count, self.count * size),
            Kind::ReduceScatter => (self.count * size, self.count),
        }
    }
}

fn dtype_code(d: DType) -> u32 {
    nccl_dtype(d).map_or(u32::MAX, |t| t as u32)
}

fn nccl_dtype(d: DType) -> Option<ncclDataType_t> {
    Some(match d {
        DType::U8 => ncclDataType_t::ncclUint8,
        DType::I32 => ncclDataType_t::ncclInt32,
        DType::U32 => ncclDataType_t::ncclUint32,
        DType::I64 => ncclDataType_t::ncclInt64,
        DType::U64 => ncclDataType_t::ncclUint64,
        DType::F16 => ncclDataType_t::ncclFloat16,
        DType::BF16 => ncclDataType_t::ncclBfloat16,
        DType::F32 => ncclDataType_t::ncclFloat32,
        DType::F64 => ncclDataType_t::ncclFloat64,
        #[allow(unreachable_patterns)]
        _ => return None,
    })
}

/// A range of a buffer: the buffer, the offset and the length, in elements.
type Range<'a, T> = (&'a Buffer<Cuda, T>, usize, usize);

/// One rank's part: its stream and ranges (no send range: in place).
struct Part<'a, T: Element> {
    stream: &'a Stream<Cuda>,
    send: Option<Range<'a, T>>,
    recv: Range<'a, T>,
}

/// A device as errors name it.
fn label(d: &kiln_core::Device<Cuda>) -> String {
    format!("{} (CUDA device {})", d.name(), d.info().ordinal)
}

/// Why `part` cannot run `call` as rank `comm`, if it cannot.
fn check<T: Element>(comm: &Comm, call: &Call, part: &Part<'_, T>) -> Result<()> {
    let what = format!("{} (rank {} of {})", call.describe(), comm.rank, comm.size);
    let stream_dev = part.stream.device();
    if stream_dev.info().ordinal != comm.device.info().ordinal {
        return Err(Error::DeviceMismatch {
            what: format!("{what}: the stream vs the communicator"),
            first: label(stream_dev),
            second: label(&comm.device),
        });
    }
    let ranges = part.send.iter().map(|s| ("send", s)).chain([("receive", &part.recv)]);
    for (name, (buf, _, _)) in ranges {
        if !buf.device().same(stream_dev) {
            return Err(Error::DeviceMismatch {
                what: format!("{what}: the {name} buffer vs the stream"),
                first: label(buf.device()),
                second: label(stream_dev),
            });
        }
    }
    if nccl_dtype(call.dtype).is_none() || (call.dtype == DType::BF16 && comm.lib.version < 21000) {
        return Err(Error::unsupported(
            kiln_core::BackendKind::Cuda,
            what,
            format!("NCCL {} has no {} type", comm.lib.version, call.dtype),
        ));
    }
    if call.root >= comm.size {
        return Err(Error::invalid(what, format!("root {} is not a rank of {}", call.root, comm.size)));
    }
    let (send_len, recv_len) = call.lengths(comm.size);
    let lengths = part.send.map(|s| ("send", send_len, s.2)).into_iter().chain([("receive", recv_len, part.recv.2)]);
    for (name, expected, actual) in lengths {
        if expected != actual {
            return Err(Error::LengthMismatch { what: format!("{what}: the {name} range"), expected, actual });
        }
    }
    if part.send.is_none() && call.lengths(comm.size).0 != call.lengths(comm.size).1 {
        return Err(Error::invalid(what, "this collective cannot run in place"));
    }
    Ok(())
}

/// Enqueue `call` as rank `comm` (checked).
fn enqueue<T: Element>(comm: &Comm, call: &Call, part: &Part<'_, T>) -> Result<()> {
    let s = part.stream.raw();
    s.enter(call.name())?;
    let elem = size_of::<T>() as u64;
    let (rb, ro, _) = part.recv;
    let recv = (rb.raw().ptr + ro as u64 * elem) as *mut std::ffi::c_void;
    let send =
        part.send.map_or(recv as *const _, |(b, o, _)| (b.raw().ptr + o as u64 * elem) as *const std::ffi::c_void);
    let lib = comm.lib;
    // `check` has the type.
    let dt = nccl_dtype(call.dtype).unwrap_or(ncclDataType_t::ncclUint8);
    let op = call.op.unwrap_or(ReduceOp::Sum).raw();
    let (count, root) = (call.count, call.root as c_int);
    let stream = s.stream.cu_stream() as _;
    let run = || {
        // SAFETY: both ranges are inside their buffers and on the stream's
        // device (checked), NCCL reads `send` and writes `recv` on `stream`
        // only, and the buffers outlive the work (`tracked` records their
        // uses on this stream where they were allocated on another).
        let status = unsafe {
            match call.kind {
                Kind::AllReduce => (lib.all_reduce)(send, recv, count, dt, op, comm.raw, stream),
                Kind::Reduce => (lib.reduce)(send, recv, count, dt, op, root, comm.raw, stream),
                Kind::Broadcast => (lib.broadcast)(send, recv, count, dt, root, comm.raw, stream),
                Kind::AllGather => (lib.all_gather)(send, recv, count, dt, comm.raw, stream),
                Kind::ReduceScatter => (lib.reduce_scatter)(send, recv, count, dt, op, comm.raw, stream),
            }
        };
        lib.check(status, call.name())
    };
    match part.send {
        Some((b, _, _)) => s.tracked([b.raw(), rb.raw()], run),
        None => s.tracked([rb.raw()], run),
    }
}

/// Check that every rank of `comm`'s communicator runs `call`: an
/// all-gather of each rank's words, read back.
fn agree(comm: &Comm, call: &Call, stream: &Stream<Cuda>) -> Result<()> {
    let mine = call.words();
    let sent = stream.upload(&mine)?;
    let all = stream.alloc::<u32>(8 * comm.size)?;
    let gather = Call { kind: Kind::AllGather, op: None, root: 0, dtype: DType::U32, count: 8 };
    let part = Part { stream, send: Some((&sent, 0, 8)), recv: (&all, 0, 8 * comm.size) };
    enqueue(comm, &gather, &part)?;
    let mut got = vec![0u32; 8 * comm.size];
    stream.copy_to_host(&all, &mut got)?;
    for (rank, words) in got.chunks(8).enumerate() {
        if words != mine {
            return Err(Error::invalid(
                format!("{} (rank {} of {})", call.describe(), comm.rank, comm.size),
                format!("rank {rank} runs another collective ({})", describe_words(words)),
            ));
        }
    }
    Ok(())
}

fn describe_words(w: &[u32]) -> String {
    let kind = ["ncclAllReduce", "ncclReduce", "ncclBroadcast", "ncclAllGather", "ncclReduceScatter"]
        .get(w[0] as usize)
        .copied()
        .unwrap_or("an unknown collective");
    let count = w[4] as u64 | (w[5] as u64) << 32;
    format!("{kind}, NCCL type {}, op {}, root {}, count {count}", w[3], w[1] as i32, w[2])
}

impl Comm {
    /// `kind` from `send` (none: in place) into `recv` on `stream`, NCCL's
    /// count taken from the range [`Kind::counts_receive`] names.
    fn run_ranges<'a, T: Element>(
        &self,
        stream: &'a Stream<Cuda>,
        kind: Kind,
        op: Option<ReduceOp>,
        root: usize,
        send: Option<Range<'a, T>>,
        recv: Range<'a, T>,
    ) -> Result<()> {
        let count = match send {
            Some(s) if !kind.counts_receive() => s.2,
            _ => recv.2,
        };
        let call = Call { kind, op, root, dtype: T::DTYPE, count };
        self.run(call, Part { stream, send, recv })
    }

    fn run<T: Element>(&self, call: Call, part: Part<'_, T>) -> Result<()> {
        check(self, &call, &part)?;
        if self.checked && self.size > 1 {
            agree(self, &call, part.stream)?;
        }
        enqueue(self, &call, &part)
    }

    /// `recv` = the elementwise `op` of every rank's `send`, on every rank.
    pub fn all_reduce<T: Element>(
        &self,
        stream: &Stream<Cuda>,
        send: &impl View<Cuda, T>,
        recv: &mut impl ViewMut<Cuda, T>,
        op: ReduceOp,
    ) -> Result<()> {
        self.run_ranges(stream, Kind::AllReduce, Some(op), 0, Some(send.view().parts()), recv.view_mut().into_parts())
    }

    /// [`all_reduce`](Self::all_reduce) with `buf` both sent and received.
    pub fn all_reduce_in_place<T: Element>(
        &self,
        stream: &Stream<Cuda>,
        buf: &mut impl ViewMut<Cuda, T>,
        op: ReduceOp,
    ) -> Result<()> {
        self.run_ranges(stream, Kind::AllReduce, Some(op), 0, None, buf.view_mut().into_parts())
    }

    /// `recv` on rank `root` = the elementwise `op` of every rank's `send`
    /// (other ranks' `recv` are left as they are).
    pub fn reduce<T: Element>(
        &self,
        stream: &Stream<Cuda>,
        send: &impl View<Cuda, T>,
        recv: &mut impl ViewMut<Cuda, T>,
        op: ReduceOp,
        root: usize,
    ) -> Result<()> {
        self.run_ranges(stream, Kind::Reduce, Some(op), root, Some(send.view().parts()), recv.view_mut().into_parts())
    }

    /// `recv` on every rank = `send` of rank `root` (others' `send` unread).
    pub fn broadcast<T: Element>(
        &self,
        stream: &Stream<Cuda>,
        send: &impl View<Cuda, T>,
        recv: &mut impl ViewMut<Cuda, T>,
        root: usize,
    ) -> Result<()> {
        self.run_ranges(stream, Kind::Broadcast, None, root, Some(send.view().parts()), recv.view_mut().into_parts())
    }

    /// `buf` on every rank = `buf` of rank `root`.
    pub fn broadcast_in_place<T: Element>(
        &self,
        stream: &Stream<Cuda>,
        buf: &mut impl ViewMut<Cuda, T>,
        root: usize,
    ) -> Result<()> {
        self.run_ranges(stream, Kind::Broadcast, None, root, None, buf.view_mut().into_parts())
    }

    /// `recv` (size x `send.len()` elements) = every rank's `send`, rank by rank.
    pub fn all_gather<T: Element>(
        &self,
        stream: &Stream<Cuda>,
        send: &impl View<Cuda, T>,
        recv: &mut impl ViewMut<Cuda, T>,
    ) -> Result<()> {
        self.run_ranges(stream, Kind::AllGather, None, 0, Some(send.view().parts()), recv.view_mut().into_parts())
    }

    /// `recv` of rank r = block r (`recv.len()` elements) of the elementwise
    /// `op` of every rank's `send` (size x `recv.len()` elements).
    pub fn reduce_scatter<T: Element>(
        &self,
        stream: &Stream<Cuda>,
        send: &impl View<Cuda, T>,
        recv: &mut impl ViewMut<Cuda, T>,
        op: ReduceOp,
    ) -> Result<()> {
        self.run_ranges(
            stream,
            Kind::ReduceScatter,
            Some(op),
            0,
            Some(send.view().parts()),
            recv.view_mut().into_parts(),
        )
    }
}

impl Comms {
    /// Rank i's part on `streams[i]`, all in one NCCL group, after checking
    /// every part (so that none is enqueued unless all can be).
    fn run<T: Element>(&self, call: Call, parts: Vec<Part<'_, T>>) -> Result<()> {
        if parts.len() != self.ranks.len() {
            return Err(Error::LengthMismatch {
                what: format!("{} over {} ranks: the parts given", call.describe(), self.ranks.len()),
                expected: self.ranks.len(),
                actual: parts.len(),
            });
        }
        for (comm, part) in self.ranks.iter().zip(&parts) {
            check(comm, &call, part)?;
        }
        let lib = self.ranks[0].lib;
        // SAFETY: ncclGroupStart / ncclGroupEnd take no arguments; the calls
        // between them are NCCL calls on this thread.
        lib.check(unsafe { (lib.group_start)() }, "ncclGroupStart")?;
        let mut done = Ok(());
        for (comm, part) in self.ranks.iter().zip(&parts) {
            if let Err(e) = enqueue(comm, &call, part) {
                done = Err(e);
                break;
            }
        }
        // SAFETY: as above; the group is always closed.
        let ended = lib.check(unsafe { (lib.group_end)() }, "ncclGroupEnd");
        done.and(ended)
    }

    /// `kind` on every rank: rank i from `send[i]` (none: in place) into
    /// `recv[i]` on `streams[i]`, NCCL's count taken from the ranges
    /// [`Kind::counts_receive`] names.
    fn run_all<T: Element, S: View<Cuda, T>, R: ViewMut<Cuda, T>>(
        &self,
        kind: Kind,
        op: Option<ReduceOp>,
        root: usize,
        streams: &[Stream<Cuda>],
        send: Option<&[S]>,
        recv: &mut [R],
    ) -> Result<()> {
        let counts: Vec<usize> = match send {
            Some(send) if !kind.counts_receive() => send.iter().map(|s| s.view().len()).collect(),
            _ => recv.iter_mut().map(|r| r.view_mut().len()).collect(),
        };
        let call = self.call(kind, op, root, T::DTYPE, &counts)?;
        self.run(call, parts(streams, send, recv))
    }

    /// Rank i's count must be the same on every rank: the count of rank 0.
    fn call(&self, kind: Kind, op: Option<ReduceOp>, root: usize, dtype: DType, counts: &[usize]) -> Result<Call> {
        let call = Call { kind, op, root, dtype, count: counts.first().copied().unwrap_or(0) };
        if let Some((rank, &c)) = counts.iter().enumerate().find(|&(_, &c)| c != call.count) {
            return Err(Error::LengthMismatch {
                what: format!("{} over {} ranks: rank {rank}'s count vs rank 0's", call.describe(), self.size()),
                expected: call.count,
                actual: c,
            });
        }
        Ok(call)
    }

    /// [`Comm::all_reduce`] on every rank: rank i sends `send[i]` and
    /// receives into `recv[i]` on `streams[i]`.
    pub fn all_reduce<T: Element, S: View<Cuda, T>, R: ViewMut<Cuda, T>>(
        &self,
        streams: &[Stream<Cuda>],
        send: &[S],
        recv: &mut [R],
        op: ReduceOp,
    ) -> Result<()> {
        self.run_all(Kind::AllReduce, Some(op), 0, streams, Some(send), recv)
    }

    /// [`Comm::all_reduce_in_place`] on every rank.
    pub fn all_reduce_in_place<T: Element, R: ViewMut<Cuda, T>>(
        &self,
        streams: &[Stream<Cuda>],
        bufs: &mut [R],
        op: ReduceOp,
    ) -> Result<()> {
        self.run_all::<T, R, R>(Kind::AllReduce, Some(op), 0, streams, None, bufs)
    }

    /// [`Comm::reduce`] on every rank.
    pub fn reduce<T: Element, S: View<Cuda, T>, R: ViewMut<Cuda, T>>(
        &self,
        streams: &[Stream<Cuda>],
        send: &[S],
        recv: &mut [R],
        op: ReduceOp,
        root: usize,
    ) -> Result<()> {
        self.run_all(Kind::Reduce, Some(op), root, streams, Some(send), recv)
    }

    /// [`Comm::broadcast`] on every rank.
    pub fn broadcast<T: Element, S: View<Cuda, T>, R: ViewMut<Cuda, T>>(
        &self,
        streams: &[Stream<Cuda>],
        send: &[S],
        recv: &mut [R],
        root: usize,
    ) -> Result<()> {
        self.run_all(Kind::Broadcast, None, root, streams, Some(send), recv)
    }

    /// [`Comm::all_gather`] on every rank.
    pub fn all_gather<T: Element, S: View<Cuda, T>, R: ViewMut<Cuda, T>>(
        &self,
        streams: &[Stream<Cuda>],
        send: &[S],
        recv: &mut [R],
    ) -> Result<()> {
        self.run_all(Kind::AllGather, None, 0, streams, Some(send), recv)
    }

    /// [`Comm::reduce_scatter`] on every rank.
    pub fn reduce_scatter<T: Element, S: View<Cuda, T>, R: ViewMut<Cuda, T>>(
        &self,
        streams: &[Stream<Cuda>],
        send: &[S],
        recv: &mut [R],
        op: ReduceOp,
    ) -> Result<()> {
        self.run_all(Kind::ReduceScatter, Some(op), 0, streams, Some(send), recv)
    }
}

/// The parts of rank i = (streams[i], send[i], recv[i]); a length mismatch
/// among the three lists leaves parts out, which `Comms::run` then refuses.
fn parts<'a, T: Element, S: View<Cuda, T>, R: ViewMut<Cuda, T>>(
    streams: &'a [Stream<Cuda>],
    send: Option<&'a [S]>,
    recv: &'a mut [R],
) -> Vec<Part<'a, T>> {
    let n = streams.len().min(recv.len()).min(send.map_or(usize::MAX, <[S]>::len));
    let sends: Vec<Option<Range<'a, T>>> = match send {
        Some(s) => s.iter().map(|s| Some(s.view().parts())).collect(),
        None => vec![None; n],
    };
    streams
        .iter()
        .zip(sends)
        .zip(recv.iter_mut())
        .take(n)
        .map(|((stream, send), r)| Part { stream, send, recv: r.view_mut().into_parts() })
        .collect()
}
