//! Device buffers of one of the accumulator dtypes, for passes that hand
//! values from one kernel to the next.

use kiln_core::{Args, Backend, DType, Result, Stream};

/// Partial results of one of the accumulator dtypes.
pub(super) enum Partials<B: Backend> {
    I32(kiln_core::Buffer<B, i32>),
    U32(kiln_core::Buffer<B, u32>),
    I64(kiln_core::Buffer<B, i64>),
    U64(kiln_core::Buffer<B, u64>),
    F32(kiln_core::Buffer<B, f32>),
    F64(kiln_core::Buffer<B, f64>),
}

/// One arm per dtype of [`Partials`].
macro_rules! each_partial {
    ($p:expr, $b:ident => $e:expr) => {
        match $p {
            Partials::I32($b) => $e,
            Partials::U32($b) => $e,
            Partials::I64($b) => $e,
            Partials::U64($b) => $e,
            Partials::F32($b) => $e,
            Partials::F64($b) => $e,
        }
    };
}

impl<B: Backend> Partials<B> {
    /// `n` partials of dtype `d` (an accumulator dtype), on `s`.
    pub(super) fn alloc(s: &Stream<B>, d: DType, n: usize) -> Result<Self> {
        Ok(match d {
            DType::I32 => Partials::I32(s.alloc(n)?),
            DType::U32 => Partials::U32(s.alloc(n)?),
            DType::I64 => Partials::I64(s.alloc(n)?),
            DType::U64 => Partials::U64(s.alloc(n)?),
            DType::F32 => Partials::F32(s.alloc(n)?),
            _ => Partials::F64(s.alloc(n)?),
        })
    }

    /// `args` and these partials, writable.
    pub(super) fn write<'a>(&'a mut self, args: Args<'a, B>) -> Args<'a, B> {
        each_partial!(self, b => args.arg(b.view_mut()))
    }

    /// `args` and these partials, read only.
    pub(super) fn read<'a>(&'a self, args: Args<'a, B>) -> Args<'a, B> {
        each_partial!(self, b => args.arg(b.view()))
    }
}
