//! Chunks of one pass over memory whose results depend on every chunk
//! before them (scans, compaction): workers claim chunks in order; each
//! first looks at its chunk (reading it into cache), then waits for the
//! state entering the chunk, advances it past the chunk and publishes the
//! result, and only then finishes the chunk from cache. The states advance
//! strictly in chunk order, so a result is the same as two passes over all
//! chunks would give; memory is read once instead of twice.
//!
//! No worker can wait forever: the chunk it waits on was claimed earlier by
//! a running worker, which waits only on chunks claimed before its own, and
//! the first unpublished chunk's worker waits on nothing.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;

/// Spins on an unpublished state before yielding the thread between looks.
const SPINS: u32 = 256;

/// Run chunks `0..chunks` on the rayon pool: `look(c)`, then, in chunk
/// order, `advance(c, &looked, entering)` giving the state leaving chunk
/// `c` and what `finish(c, looked, entering, handed)` then gets. Returns
/// the state leaving the last chunk (`start` when there is none).
pub(crate) fn in_order<L, S, H>(
    chunks: usize,
    start: S,
    look: impl Fn(usize) -> L + Sync,
    advance: impl Fn(usize, &L, S) -> (S, H) + Sync,
    finish: impl Fn(usize, L, S, H) + Sync,
) -> S
where
    S: Copy + Send + Sync,
{
    // entering[c]: the state entering chunk c, published once.
    let entering: Vec<OnceLock<S>> = (0..=chunks).map(|_| OnceLock::new()).collect();
    let _ = entering[0].set(start);
    let next = AtomicUsize::new(0);
    let work = || {
        loop {
            let c = next.fetch_add(1, Ordering::Relaxed);
            if c >= chunks {
                return;
            }
            let looked = look(c);
            let state = wait_for(&entering[c]);
            let (leaving, handed) = advance(c, &looked, state);
            let _ = entering[c + 1].set(leaving);
            finish(c, looked, state, handed);
        }
    };
    // One chunk (or one thread) runs here: handing it to the pool would
    // cost a wake-up of another thread, longer than a small scan.
    match rayon::current_num_threads().min(chunks) {
        0 | 1 => work(),
        workers => (0..workers).into_par_iter().for_each(|_| work()),
    }
    wait_for(&entering[chunks])
}

/// The value of `cell` once another worker has set it.
fn wait_for<S: Copy>(cell: &OnceLock<S>) -> S {
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
