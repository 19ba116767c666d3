//! CPU implementation of sequence.

use kiln_core::{HostArgs, Result};
use rayon::prelude::*;

use crate::Number;

/// Elements per rayon task.
const CHUNK: usize = 1 << 16;

/// `dst[i] = start + i * step`; arguments (dst, start, step, n).
pub(crate) fn sequence<T: Number>(args: &mut HostArgs<'_>) -> Result<()> {
    let (start, step) = (args.scalar::<T>(1)?, args.scalar::<T>(2)?);
    args.output::<T>(0)?.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        let base = (c * CHUNK) as u64;
        for (i, d) in (base..).zip(chunk) {
            *d = start.add(T::from_index(i).mul(step));
        }
    });
    Ok(())
}
