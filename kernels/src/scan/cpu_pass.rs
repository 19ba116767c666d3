//! An unsegmented CPU scan in one pass over memory ([`crate::chain`]): each
//! chunk's part sums are taken as it is read, the prefix entering it joined
//! with their total for the next chunk, and the chunk scanned from cache.
//! The prefixes are the same joins of the same chunk sums as a pass of sums
//! followed by a pass of scans would give, so the results are the same bits.

use std::ops::Deref;
use std::sync::{Mutex, PoisonError};

use kiln_core::{Error, Result};

use super::prefix::{CHUNK, Prefix, parts_total};
use crate::chain;

/// Chunk `c` of `x`: [`CHUNK`] elements, fewer at the end.
pub(crate) fn chunk_of<T>(x: &[T], c: usize) -> &[T] {
    &x[c * CHUNK..x.len().min((c + 1) * CHUNK)]
}

/// Inclusive or exclusive scan by `p` of `n` elements into `y` (`n` long),
/// chunk `c` of which `input(c)` gives ([`CHUNK`] elements, fewer at the
/// end): from memory, or computed as the chunk is reached. If `input`
/// fails, the first failure is returned.
pub(crate) fn scan<P, X>(
    p: &P,
    exclusive: bool,
    n: usize,
    input: impl Fn(usize) -> Result<X> + Sync,
    y: &mut [P::T],
) -> Result<()>
where
    P: Prefix,
    X: Deref<Target = [P::T]>,
{
    if y.len() != n {
        return Err(Error::invalid("scan on the CPU", format!("{} outputs for {n} elements", y.len())));
    }
    let outputs: Vec<Mutex<&mut [P::T]>> = y.chunks_mut(CHUNK).map(Mutex::new).collect();
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    chain::in_order(
        outputs.len(),
        p.zero(),
        |c| {
            let xs = input(c)?;
            let sums = p.chunk_sums(&xs);
            Ok((xs, sums))
        },
        |_, looked: &Result<_>, start| match looked {
            Ok((_, sums)) => (p.join(start, parts_total(p, sums)), ()),
            Err(_) => (start, ()),
        },
        |c, looked, start, ()| match looked {
            Ok((xs, sums)) => {
                let mut ys = outputs[c].lock().unwrap_or_else(PoisonError::into_inner);
                if xs.len() == ys.len() {
                    p.scan_chunk(exclusive, &xs, &mut ys, start, &sums);
                } else {
                    let e = Error::invalid(
                        "scan on the CPU",
                        format!("chunk {c} has {} of {} elements", xs.len(), ys.len()),
                    );
                    failed.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(e);
                }
            }
            Err(e) => {
                failed.lock().unwrap_or_else(PoisonError::into_inner).get_or_insert(e);
            }
        },
    );
    failed.into_inner().unwrap_or_else(PoisonError::into_inner).map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::scan::cpu::Sum;

    fn scan_slice<T: kiln_core::Element>(exclusive: bool, x: &[T], y: &mut [T])
    where
        Sum<T>: Prefix<T = T>,
    {
        scan(&Sum::<T>::OF, exclusive, x.len(), |c| Ok(chunk_of(x, c)), y).expect("a scan");
    }

    /// Chunk counts around the workers', with a partial last chunk.
    const SIZES: [usize; 6] = [0, 1, CHUNK - 1, CHUNK, CHUNK + 1, 5 * CHUNK + 777];

    fn on_threads(threads: usize, f: impl FnOnce() + Send) {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool").install(f);
    }

    #[test]
    fn integer_scans_match_wrapping_sums_on_any_number_of_workers() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        for threads in [1, 2, 5] {
            for n in SIZES {
                let x: Vec<u32> = (0..n).map(|_| rng.random()).collect();
                for exclusive in [false, true] {
                    let mut y = vec![0xDEAD_BEEF; n];
                    on_threads(threads, || scan_slice(exclusive, &x, &mut y));
                    let mut acc = 0u32;
                    for (i, (&v, &got)) in x.iter().zip(&y).enumerate() {
                        let incl = acc.wrapping_add(v);
                        assert_eq!(got, if exclusive { acc } else { incl }, "{i} of {n}, {threads} threads");
                        acc = incl;
                    }
                }
            }
        }
    }

    #[test]
    fn f32_scans_are_the_f64_prefix_rounded_once() {
        let mut rng = ChaCha8Rng::seed_from_u64(12);
        for threads in [1, 3] {
            for n in SIZES {
                let x: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0f32..1.0)).collect();
                for exclusive in [false, true] {
                    let mut y = vec![f32::NAN; n];
                    on_threads(threads, || scan_slice(exclusive, &x, &mut y));
                    let mut acc = 0.0f64;
                    for (i, (&v, &got)) in x.iter().zip(&y).enumerate() {
                        let want = if exclusive { acc } else { acc + v as f64 };
                        acc += v as f64;
                        // The f64 sums differ from these only far below an
                        // f32 rounding: at most one f32 step apart.
                        let step = (want as f32).abs().max(f32::MIN_POSITIVE) * f32::EPSILON;
                        assert!((got as f64 - want).abs() <= step as f64, "{i} of {n}: {got} against {want}");
                    }
                }
            }
        }
    }
}
