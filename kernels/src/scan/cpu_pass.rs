//! An unsegmented CPU scan in one pass over memory. Workers claim chunks in
//! order; each sums its chunk (reading it into cache), waits for the prefix
//! entering the chunk, publishes the prefix leaving it, and then scans the
//! chunk from cache. A chunk's prefix is the same join of the same chunk
//! sums as a pass of sums followed by a pass of scans would give, so the
//! results are the same bits; memory is read once instead of twice.
//!
//! No worker can wait forever: the chunk it waits on was claimed earlier by
//! a running worker, which waits only on chunks claimed before its own, and
//! the first unpublished chunk's worker waits on nothing.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock, PoisonError};

use rayon::prelude::*;

use super::cpu::{parts_total, Prefix, CHUNK};

/// Spins on an unpublished prefix before yielding the thread between looks.
const SPINS: u32 = 256;

/// Inclusive or exclusive scan of `x` into `y` (the same length).
pub(super) fn scan<T: Prefix>(exclusive: bool, x: &[T], y: &mut [T]) {
    let outputs: Vec<Mutex<&mut [T]>> = y.chunks_mut(CHUNK).map(Mutex::new).collect();
    let chunks = outputs.len();
    // entering[c]: the prefix entering chunk c, published once.
    let entering: Vec<OnceLock<T::Acc>> = (0..=chunks).map(|_| OnceLock::new()).collect();
    let _ = entering[0].set(T::zero());
    let next = AtomicUsize::new(0);
    let workers = rayon::current_num_threads().min(chunks);
    (0..workers).into_par_iter().for_each(|_| loop {
        let c = next.fetch_add(1, Ordering::Relaxed);
        if c >= chunks {
            return;
        }
        let xs = &x[c * CHUNK..x.len().min((c + 1) * CHUNK)];
        let sums = T::chunk_sums(xs);
        let start = wait_for(&entering[c]);
        let _ = entering[c + 1].set(T::join(start, parts_total::<T>(&sums)));
        let mut ys = outputs[c].lock().unwrap_or_else(PoisonError::into_inner);
        T::scan_chunk(exclusive, xs, &mut ys, start, &sums);
    });
}

/// The value of `cell` once another worker has set it.
fn wait_for<A: Copy>(cell: &OnceLock<A>) -> A {
    let mut looks = 0u32;
    loop {
        if let Some(&v) = cell.get() {
            return v;
        }
        looks = looks.saturating_add(1);
        if looks < SPINS {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

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
                    on_threads(threads, || scan(exclusive, &x, &mut y));
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
                    on_threads(threads, || scan(exclusive, &x, &mut y));
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
