//! CPU implementation of compaction: a sequential filter, the reference.

use kiln_core::{Error, HostArgs, Result};

use super::Predicate;
use crate::Number;

/// Arguments as the CUDA kernel takes them: (x, out, count, status, aggs,
/// incls, value, n); out[0..count) gets the kept elements (or their
/// indices when `INDICES`), count[0] their number, and nothing else is
/// written. `out` holds at least as many elements as `x` (the API checks).
pub(crate) fn copy_if<T: Number, const PRED: u8, const INDICES: bool>(args: &mut HostArgs<'_>) -> Result<()> {
    let pred = Predicate::from_code(PRED, args.scalar::<T>(6)?);
    let x = args.input::<T>(0)?;
    let kept = x.iter().enumerate().filter(|(_, &v)| pred.test(v));
    let written = if INDICES {
        args.output::<u32>(1)?.iter_mut().zip(kept).map(|(o, (i, _))| *o = i as u32).count()
    } else {
        args.output::<T>(1)?.iter_mut().zip(kept).map(|(o, (_, &v))| *o = v).count()
    };
    let count = args.output::<u64>(2)?;
    *count.first_mut().ok_or_else(|| Error::invalid("copy_if on the CPU", "the count buffer is empty"))? =
        written as u64;
    Ok(())
}
