//! CPU implementation of matmul: every strategy computes the same sums.

use kiln_core::{HostArgs, Result};
use rayon::prelude::*;

use super::MatmulElement;

/// `c = a . b`; arguments (a, b, c, m, n, k), row-major.
///
/// Rows of c in parallel; within a row, the i-k-j order streams rows of b
/// (cache-friendly) and still adds each element's k products in order p = 0,
/// 1, ..., so results do not depend on the thread count.
pub(crate) fn matmul<T: MatmulElement>(args: &mut HostArgs<'_>) -> Result<()> {
    let (a, b) = (args.input::<T>(0)?, args.input::<T>(1)?);
    let n = args.scalar::<u64>(4)? as usize;
    let k = args.scalar::<u64>(5)? as usize;
    let c = args.output::<T::Acc>(2)?;
    if n == 0 {
        return Ok(());
    }
    c.par_chunks_mut(n).enumerate().for_each(|(i, row)| {
        row.fill(T::zero());
        for p in 0..k {
            let x = a[i * k + p].widen();
            for (out, y) in row.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                *out = T::mul_add(*out, x, y.widen());
            }
        }
    });
    Ok(())
}
