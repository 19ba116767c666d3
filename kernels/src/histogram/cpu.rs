//! CPU implementation of the histogram, the reference: the same bin formula
//! as the kernels, integer bins in exact 64-bit arithmetic.

use kiln_core::{Error, HostArgs, Result};
use rayon::prelude::*;
use strength_reduce::StrengthReducedU64;

use super::{BinParams, HistogramInput};

/// Elements per rayon task.
const CHUNK: usize = 1 << 16;

/// The bin of `v`, or `None` when it is dropped (out of range or NaN);
/// `span` is the integer bins' divisor `b + 1`, prepared once: a division
/// by a run-time constant as a multiply and shifts (the `strength_reduce`
/// crate's, exact for every divisor), where a 64-bit division per element
/// would bound the pass.
fn bin_by<T: HistogramInput>(v: T, p: &BinParams, span: &StrengthReducedU64) -> Option<u32> {
    if T::FLOAT {
        let v = v.value_to_f64() as f32;
        let (lo, hi) = (f32::from_bits(p.a), f32::from_bits(p.b));
        if !(v >= lo && v < hi) {
            return None;
        }
        // `as` truncates toward zero and saturates, as the kernels' conversions do.
        let q = ((v - lo) * p.scale) as u32;
        Some(q.min(p.bins - 1))
    } else {
        // The distance from lo modulo 2^32 (the value's two's complement bits).
        let d = (v.value_to_f64() as i64 as u32).wrapping_sub(p.a);
        if d > p.b {
            return None;
        }
        Some((u64::from(d) * u64::from(p.bins) / *span) as u32)
    }
}

/// Arguments as the CUDA kernel takes them: (x, counts, dropped, a, b,
/// shift, scale, bins, n); adds to `counts` and `dropped[0]`.
pub(crate) fn histogram<T: HistogramInput>(args: &mut HostArgs<'_>) -> Result<()> {
    let p = BinParams {
        a: args.scalar::<u32>(3)?,
        b: args.scalar::<u32>(4)?,
        shift: args.scalar::<u32>(5)?,
        scale: args.scalar::<f32>(6)?,
        bins: args.scalar::<u32>(7)?,
    };
    let x = args.input::<T>(0)?;
    let bins = p.bins as usize;
    let span = StrengthReducedU64::new(u64::from(p.b) + 1);
    let (found, missed) = x
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut local = vec![0u32; bins];
            let mut missed = 0u64;
            for &v in chunk {
                match bin_by(v, &p, &span).and_then(|b| local.get_mut(b as usize)) {
                    Some(c) => *c += 1,
                    None => missed += 1,
                }
            }
            (local, missed)
        })
        .reduce(
            || (vec![0u32; bins], 0),
            |(mut a, da), (b, db)| {
                a.iter_mut().zip(&b).for_each(|(a, b)| *a = a.wrapping_add(*b));
                (a, da + db)
            },
        );
    for (c, f) in args.output::<u32>(1)?.iter_mut().zip(&found) {
        *c = c.wrapping_add(*f);
    }
    let dropped = args.output::<u64>(2)?;
    let d = dropped.first_mut().ok_or_else(|| Error::invalid("histogram on the CPU", "the dropped count is empty"))?;
    *d += missed;
    Ok(())
}
