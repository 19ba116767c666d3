//! The operations a stress step picks from (`ops.rs` runs them).

use std::fmt;

use rand::Rng;

use crate::CaseRng;

/// The operations of the stress suite; each step runs one, picked at random.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OpKind {
    /// `map` (square, abs, negate, sqrt for floats) on one stream.
    Map,
    /// An elementwise binary operation (add, sub, mul, div) on one stream.
    Binary,
    /// `axpy` on one stream.
    Axpy,
    /// A sum reduced to the host.
    ReduceSum,
    /// An inclusive scan.
    Scan,
    /// A sort of `u32` keys, ascending or descending.
    Sort,
    /// `fill` of a random range, or `sequence`.
    Fill,
    /// Produced on stream A, handed to stream B by an event, consumed and
    /// checked there.
    Handoff,
    /// An input allocated on stream A and read by stream B, dropped right
    /// after B's read is enqueued; new buffers of the same size are then
    /// allocated and overwritten on A. B's result must still be right.
    DropInFlight,
    /// Allocations from 1 byte to the largest allowed, sizes log-uniform,
    /// filled, their first and last bytes written and read back, dropped in
    /// random order.
    Churn,
    /// Page-locked host buffers, kept for the whole run, reused for many
    /// asynchronous copies to and from the device.
    Pinned,
}

impl OpKind {
    /// Every operation.
    pub const ALL: [OpKind; 11] = [
        OpKind::Map,
        OpKind::Binary,
        OpKind::Axpy,
        OpKind::ReduceSum,
        OpKind::Scan,
        OpKind::Sort,
        OpKind::Fill,
        OpKind::Handoff,
        OpKind::DropInFlight,
        OpKind::Churn,
        OpKind::Pinned,
    ];

    /// Lower-case name ("drop_in_flight").
    pub const fn name(self) -> &'static str {
        match self {
            OpKind::Map => "map",
            OpKind::Binary => "binary",
            OpKind::Axpy => "axpy",
            OpKind::ReduceSum => "reduce_sum",
            OpKind::Scan => "scan",
            OpKind::Sort => "sort",
            OpKind::Fill => "fill",
            OpKind::Handoff => "handoff",
            OpKind::DropInFlight => "drop_in_flight",
            OpKind::Churn => "churn",
            OpKind::Pinned => "pinned",
        }
    }

    /// How often a step picks it, relative to the others: the cross-stream
    /// and memory operations, the point of the suite, most often.
    const fn weight(self) -> u32 {
        match self {
            OpKind::Handoff | OpKind::DropInFlight => 3,
            OpKind::Map | OpKind::Binary | OpKind::ReduceSum | OpKind::Scan | OpKind::Churn | OpKind::Pinned => 2,
            OpKind::Axpy | OpKind::Sort | OpKind::Fill => 1,
        }
    }

    /// A random operation, by weight.
    pub(crate) fn pick(rng: &mut CaseRng) -> OpKind {
        let total: u32 = OpKind::ALL.iter().map(|o| o.weight()).sum();
        let mut at = rng.random_range(0..total);
        for op in OpKind::ALL {
            if at < op.weight() {
                return op;
            }
            at -= op.weight();
        }
        OpKind::Map
    }
}

impl fmt::Display for OpKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
