//! The bench cases: each pattern with its bytes-and-flops model.

use kiln_core::DType;
use kiln_kernels::map::MapOp;

/// A pattern the benches time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Pattern {
    /// Device-to-device copy: the ceiling every other row is compared with.
    CopyD2d,
    /// `x[i] = value`.
    Fill,
    /// `x[i] = start + i * step`.
    Sequence,
    /// `y = op(x)`.
    Map(MapOp),
    /// `c = a + b`.
    VectorAdd,
    /// `z = alpha * x + y`.
    Axpy,
}

impl Pattern {
    /// Every pattern, in report order.
    pub const ALL: [Pattern; 9] = [
        Pattern::CopyD2d,
        Pattern::Fill,
        Pattern::Sequence,
        Pattern::Map(MapOp::Square),
        Pattern::Map(MapOp::Abs),
        Pattern::Map(MapOp::Negate),
        Pattern::Map(MapOp::Sqrt),
        Pattern::VectorAdd,
        Pattern::Axpy,
    ];

    /// The name used in tables, JSON and the peers' scripts.
    pub fn name(self) -> String {
        match self {
            Pattern::CopyD2d => "copy_d2d".into(),
            Pattern::Fill => "fill".into(),
            Pattern::Sequence => "sequence".into(),
            Pattern::Map(op) => format!("map_{op}"),
            Pattern::VectorAdd => "vector_add".into(),
            Pattern::Axpy => "axpy".into(),
        }
    }

    /// Bytes the pattern must move through device memory for `n` elements
    /// of `dtype`: each input read once, each output written once.
    pub fn bytes(self, n: usize, dtype: DType) -> u64 {
        let arrays = match self {
            Pattern::Fill | Pattern::Sequence => 1,
            Pattern::CopyD2d | Pattern::Map(_) => 2,
            Pattern::VectorAdd | Pattern::Axpy => 3,
        };
        arrays * n as u64 * dtype.size() as u64
    }

    /// Arithmetic operations for `n` elements (reported, not the bound here:
    /// every pattern in this list is memory-bound).
    pub fn flops(self, n: usize) -> u64 {
        match self {
            Pattern::CopyD2d | Pattern::Fill => 0,
            Pattern::Sequence | Pattern::Axpy => 2 * n as u64,
            Pattern::Map(_) | Pattern::VectorAdd => n as u64,
        }
    }

    /// How many arrays of `n` elements one run allocates.
    pub(crate) fn arrays(self) -> usize {
        match self {
            Pattern::Fill | Pattern::Sequence => 1,
            Pattern::CopyD2d | Pattern::Map(_) => 2,
            Pattern::VectorAdd | Pattern::Axpy => 3,
        }
    }
}

/// One measurement to take: a pattern at a size and dtype.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    /// The pattern.
    pub pattern: Pattern,
    /// The element type.
    pub dtype: DType,
    /// Elements per array.
    pub n: usize,
}

/// The full size sweep for 1D cases: 1 Ki to 256 Mi elements, by factors of 4.
pub fn sweep_sizes() -> Vec<usize> {
    (0..10).map(|i| 1024usize << (2 * i)).collect()
}

/// The quick sweep: small, medium, and the 64 Mi size the targets are stated at.
pub fn quick_sizes() -> Vec<usize> {
    vec![1 << 10, 1 << 20, 1 << 26]
}
