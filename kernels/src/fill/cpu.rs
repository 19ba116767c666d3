//! CPU implementation of sequence.

use kiln_core::{HostArgs, Result};
use rayon::prelude::*;

use crate::Number;

/// `dst[i] = start + i * step`; arguments (dst, start, step, n).
pub(crate) fn sequence<T: Number>(args: &mut HostArgs<'_>) -> Result<()> {
    let (start, step) = (args.scalar::<T>(1)?, args.scalar::<T>(2)?);
    args.output::<T>(0)?
        .par_iter_mut()
        .enumerate()
        .for_each(|(i, d)| *d = start.add(T::from_index(i as u64).mul(step)));
    Ok(())
}
