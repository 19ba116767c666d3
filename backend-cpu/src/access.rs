//! Ordering CPU work on shared memory: every operation holds the memory it
//! uses while it runs.
//!
//! On a GPU, two streams that touch one buffer at once give wrong numbers.
//! On the CPU the same overlap is Rust code reading memory that another
//! thread writes: a data race, undefined behaviour. Safe code seldom gets
//! there (a write takes `&mut Buffer`), but a [`Graph`](kiln_core::Graph)
//! holds the memory of its buffers and replays writes into it through
//! shared handles, from any thread, while another thread may read the same
//! buffer or replay the same graph.
//!
//! So each operation of a [`CpuStream`](crate::CpuStream) holds every
//! buffer it uses for as long as it runs: shared for what it only reads,
//! exclusive for what it writes. Two threads' work on one buffer then runs
//! one after the other, each whole, as work on one GPU stream does.
//!
//! Waiting is safe only where nothing the holder needs can be waiting on
//! the waiter. A thread outside every rayon pool that holds nothing waits.
//! A thread inside a rayon pool does not: while it waits, the holder's
//! kernel may need the very job it is running (rayon's workers run other
//! jobs while they wait for their own), so waiting could deadlock the pool.
//! There, and on a thread that already holds memory (a host kernel that
//! enqueues more work), a busy buffer is an `Err` saying so. Holders never
//! wait, and waiters hold nothing, so no cycle of waits can form.

use std::cell::Cell;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError};

use kiln_core::{Error, Result};

use crate::CpuMemory;

/// How an operation uses a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Use {
    /// Reads only: shared with other readers.
    Read,
    /// Writes (and perhaps reads): exclusive.
    Write,
}

thread_local! {
    /// How many [`Held`] sets this thread has.
    static HOLDING: Cell<usize> = const { Cell::new(0) };
}

/// One buffer held.
enum Guard<'a> {
    Read(#[allow(dead_code)] RwLockReadGuard<'a, ()>),
    Write(#[allow(dead_code)] RwLockWriteGuard<'a, ()>),
}

/// The buffers of one operation, held until dropped.
pub(crate) struct Held<'a> {
    _guards: Vec<Guard<'a>>,
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        HOLDING.with(|h| h.set(h.get() - 1));
    }
}

/// Hold every buffer of `uses` (a buffer named twice is held once, as a
/// writer if either use writes), in address order, so that two operations
/// on the same buffers never hold one each and wait for the other.
///
/// `what` names the operation in the error where a buffer is busy and
/// waiting is not safe (see the module docs).
pub(crate) fn hold<'a>(uses: &mut [(&'a CpuMemory, Use)], what: &dyn std::fmt::Display) -> Result<Held<'a>> {
    uses.sort_unstable_by_key(|&(mem, u)| (mem as *const CpuMemory as usize, std::cmp::Reverse(u)));
    let may_wait = HOLDING.with(Cell::get) == 0 && rayon::current_thread_index().is_none();
    let mut guards = Vec::with_capacity(uses.len());
    let mut last: *const CpuMemory = std::ptr::null();
    for &(mem, u) in uses.iter() {
        // Sorted with writes first among equal buffers: the first use of a
        // buffer is the strongest.
        if std::ptr::eq(mem, last) {
            continue;
        }
        last = mem;
        guards.push(take(mem.lock(), u, may_wait).ok_or_else(|| busy(what))?);
    }
    HOLDING.with(|h| h.set(h.get() + 1));
    Ok(Held { _guards: guards })
}

/// `lock` for `u`, waiting where `may_wait`; `None` where it is busy and
/// waiting is not allowed. A lock poisoned by a panicking kernel is taken
/// as it is: it guards no data, only the order of uses.
fn take(lock: &RwLock<()>, u: Use, may_wait: bool) -> Option<Guard<'_>> {
    match (u, may_wait) {
        (Use::Read, true) => Some(Guard::Read(lock.read().unwrap_or_else(PoisonError::into_inner))),
        (Use::Write, true) => Some(Guard::Write(lock.write().unwrap_or_else(PoisonError::into_inner))),
        (Use::Read, false) => match lock.try_read() {
            Ok(g) => Some(Guard::Read(g)),
            Err(TryLockError::Poisoned(p)) => Some(Guard::Read(p.into_inner())),
            Err(TryLockError::WouldBlock) => None,
        },
        (Use::Write, false) => match lock.try_write() {
            Ok(g) => Some(Guard::Write(g)),
            Err(TryLockError::Poisoned(p)) => Some(Guard::Write(p.into_inner())),
            Err(TryLockError::WouldBlock) => None,
        },
    }
}

fn busy(what: &dyn std::fmt::Display) -> Error {
    let whose = if HOLDING.with(Cell::get) > 0 {
        "this thread is running a host kernel that holds other memory"
    } else {
        "this thread belongs to a rayon pool, where waiting for it could deadlock the pool"
    };
    Error::invalid(
        what.to_string(),
        format!(
            "the buffer is in use by work on another thread, and {whose}; nothing was done. \
             Order the two (an event, a join) or enqueue from a thread outside the pool"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_named_twice_is_held_once_as_a_writer() {
        let (a, b) = (CpuMemory::new(8).unwrap(), CpuMemory::new(8).unwrap());
        let held = hold(&mut [(&a, Use::Read), (&b, Use::Read), (&a, Use::Write), (&a, Use::Read)], &"t").unwrap();
        assert_eq!(held._guards.len(), 2);
        assert!(a.lock().try_read().is_err(), "a is held for writing");
        assert!(b.lock().try_read().is_ok(), "b is shared");
        assert!(b.lock().try_write().is_err(), "b is held for reading");
        drop(held);
        assert!(a.lock().try_write().is_ok() && b.lock().try_write().is_ok(), "released on drop");
    }

    #[test]
    fn a_busy_buffer_is_an_error_where_waiting_is_unsafe() {
        let a = CpuMemory::new(8).unwrap();
        let reading = hold(&mut [(&a, Use::Read)], &"first").unwrap();
        // Another reader shares it, even nested.
        let nested = hold(&mut [(&a, Use::Read)], &"second").unwrap();
        drop(nested);
        // This thread holds memory: a writer is refused, not left waiting on itself.
        let err = hold(&mut [(&a, Use::Write)], &"CpuStream::fill destination").err().unwrap();
        assert!(err.to_string().contains("CpuStream::fill destination: the buffer is in use"), "{err}");
        drop(reading);
        // Inside a rayon pool a busy buffer is refused too.
        let writing = hold(&mut [(&a, Use::Write)], &"first").unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
                let err = pool.install(|| hold(&mut [(&a, Use::Read)], &"CpuStream::read source").err().unwrap());
                assert!(err.to_string().contains("rayon pool"), "{err}");
            });
        });
        drop(writing);
        assert_eq!(HOLDING.with(Cell::get), 0);
    }

    #[test]
    fn a_thread_outside_the_pools_waits_for_a_busy_buffer() {
        let a = CpuMemory::new(8).unwrap();
        let writing = hold(&mut [(&a, Use::Write)], &"first").unwrap();
        let done = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|s| {
            let waiter = s.spawn(|| {
                let held = hold(&mut [(&a, Use::Read)], &"second").map(drop);
                (held, done.load(std::sync::atomic::Ordering::SeqCst))
            });
            std::thread::sleep(std::time::Duration::from_millis(50));
            done.store(true, std::sync::atomic::Ordering::SeqCst);
            drop(writing);
            let (held, after) = waiter.join().unwrap();
            assert!(held.is_ok());
            assert!(after, "the reader ran only once the writer let go");
        });
    }
}
