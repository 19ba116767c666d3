//! Large device buffers kept for reuse once dropped (CuPy's memory pool, on
//! the host). A fresh allocation's first write faults in each of its pages,
//! which the kernel zeroes first, so a buffer made anew at every step (an
//! array expression's result) is written at page-fault speed; a block kept
//! from an earlier buffer of the same size class is already mapped.
//!
//! Buffers from [`POOLED_FROM`] bytes on take blocks rounded up to whole
//! [`CLASS`]es; smaller ones go to the system allocator, which keeps its
//! own. The blocks kept are at most an eighth of the machine's memory, and
//! [`Pool::trim`] gives them back on request.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::memory::{Block, CpuMemory};

/// Buffers of at least this many bytes come from the pool.
const POOLED_FROM: usize = 4 << 20;
/// Pooled blocks are whole multiples of this (the huge page size).
const CLASS: usize = 2 << 20;

/// The blocks a device keeps, and the bytes its buffers hold.
#[derive(Debug)]
pub(crate) struct Pool {
    state: Mutex<State>,
    /// The most bytes kept for reuse.
    cap: u64,
}

#[derive(Debug, Default)]
struct State {
    /// Free blocks by size.
    free: BTreeMap<usize, Vec<Block>>,
    /// Bytes in `free`.
    kept: u64,
    /// Bytes of live buffers allocated through the pool.
    live: u64,
}

impl Pool {
    /// A pool keeping at most an eighth of `memory` bytes (1 GiB where the
    /// machine's memory is unknown).
    pub(crate) fn new(memory: u64) -> Arc<Pool> {
        let cap = if memory > 0 { memory / 8 } else { 1 << 30 };
        Arc::new(Pool { state: Mutex::new(State::default()), cap })
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A buffer of `len` bytes: a kept block of its class (whatever it
    /// held), or a fresh zeroed allocation; `None` when the system refuses
    /// even after the kept blocks are freed.
    pub(crate) fn alloc(self: &Arc<Pool>, len: usize) -> Option<CpuMemory> {
        if len < POOLED_FROM {
            let mem = CpuMemory::new(len)?;
            self.state().live += len as u64;
            return Some(mem.counted(self.clone()));
        }
        let size = len.checked_next_multiple_of(CLASS)?;
        let kept = {
            let mut state = self.state();
            let block = state.free.get_mut(&size).and_then(Vec::pop);
            if block.is_some() {
                state.kept -= size as u64;
            }
            state.live += size as u64;
            block
        };
        let block = match kept {
            Some(block) => Some(block),
            None => Block::new(size).or_else(|| {
                self.trim(0);
                Block::new(size)
            }),
        };
        match block {
            Some(block) => Some(CpuMemory::pooled(block, len, self.clone())),
            None => {
                self.state().live -= size as u64;
                None
            }
        }
    }

    /// Take back a dropped buffer's block: kept while the pool holds less
    /// than its cap, freed otherwise.
    pub(crate) fn give_back(&self, block: Block) {
        let size = block.len();
        let mut state = self.state();
        state.live -= size as u64;
        if state.kept + size as u64 <= self.cap {
            state.kept += size as u64;
            state.free.entry(size).or_default().push(block);
        } else {
            drop(state);
            drop(block);
        }
    }

    /// A dropped unpooled buffer of `len` bytes no longer counts.
    pub(crate) fn forget(&self, len: usize) {
        self.state().live -= len as u64;
    }

    /// Free kept blocks, largest first, until at most `keep` bytes are kept.
    pub(crate) fn trim(&self, keep: u64) {
        let mut freed = Vec::new();
        {
            let mut state = self.state();
            while state.kept > keep {
                let Some(mut entry) = state.free.last_entry() else { break };
                let block = entry.get_mut().pop();
                if entry.get().is_empty() {
                    entry.remove();
                }
                if let Some(block) = block {
                    state.kept -= block.len() as u64;
                    freed.push(block);
                }
            }
        }
        drop(freed);
    }

    /// Bytes of live buffers, and those plus the bytes kept.
    pub(crate) fn counts(&self) -> (u64, u64) {
        let state = self.state();
        (state.live, state.live + state.kept)
    }
}

#[cfg(test)]
mod tests {
    use kiln_core::RawBuffer;

    use super::*;

    /// A buffer's address, to check a block is reused.
    fn address(mem: &CpuMemory) -> usize {
        mem.as_ptr() as usize
    }

    #[test]
    fn large_buffers_reuse_their_class_and_small_ones_do_not() {
        let pool = Pool::new(1 << 34);
        let a = pool.alloc(POOLED_FROM + 1).expect("memory");
        assert_eq!(a.len(), POOLED_FROM + 1);
        let at = address(&a);
        // SAFETY: the whole buffer, written by nothing else.
        unsafe { a.range_mut(0, a.len()).fill(0xA5) };
        assert_eq!(pool.counts(), (POOLED_FROM as u64 + CLASS as u64, POOLED_FROM as u64 + CLASS as u64));
        drop(a);
        assert_eq!(pool.counts(), (0, POOLED_FROM as u64 + CLASS as u64));
        // The same class (rounded up to whole 2 MiB) gets the kept block back.
        let b = pool.alloc(POOLED_FROM + CLASS).expect("memory");
        assert_eq!((address(&b), b.len()), (at, POOLED_FROM + CLASS));
        // Another class gets a fresh, zeroed block.
        let c = pool.alloc(POOLED_FROM).expect("memory");
        assert_ne!(address(&c), at);
        // SAFETY: the whole buffer, written by nothing else.
        assert!(unsafe { c.range(0, c.len()) }.iter().all(|&v| v == 0));
        drop((b, c));
        let small = pool.alloc(100).expect("memory");
        assert_eq!(pool.counts().0, 100);
        drop(small);
        assert_eq!(pool.counts(), (0, 2 * POOLED_FROM as u64 + CLASS as u64));
        pool.trim(POOLED_FROM as u64);
        assert_eq!(pool.counts(), (0, POOLED_FROM as u64));
        pool.trim(0);
        assert_eq!(pool.counts(), (0, 0));
    }

    #[test]
    fn blocks_past_the_cap_are_freed() {
        let pool = Pool::new(8 * POOLED_FROM as u64);
        let (a, b) = (pool.alloc(POOLED_FROM).expect("memory"), pool.alloc(POOLED_FROM).expect("memory"));
        drop((a, b));
        // An eighth of the memory: one block of 4 MiB is kept, not two.
        assert_eq!(pool.counts(), (0, POOLED_FROM as u64));
    }
}
