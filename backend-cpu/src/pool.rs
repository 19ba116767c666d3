//! Large device buffers kept for reuse once dropped (CuPy's memory pool, on
//! the host). A fresh allocation's first write faults in each of its pages,
//! which the kernel zeroes first, so a buffer made anew at every step (an
//! array expression's result) is written at page-fault speed; a block kept
//! from an earlier buffer of the same size class is already mapped.
//!
//! Buffers from [`POOLED_FROM`] bytes on take blocks of their
//! [`size_class`] in whole [`GRANULE`]s (the huge page size), so a block
//! serves any later buffer of its class; smaller ones go to the system
//! allocator, which keeps its own. The bytes kept are bounded by the
//! device's [`CachePolicy`]: at most the most bytes pooled blocks held at
//! once since the last trim, or the budget, whichever is smaller; and
//! [`Pool::trim`] gives them back on request.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use kiln_core::{size_class, BlockCache, CachePolicy, CacheStats};

use crate::block::Block;

/// Buffers of at least this many bytes come from the pool.
const POOLED_FROM: usize = 4 << 20;
/// Pooled blocks are whole multiples of this (the huge page size).
const GRANULE: u64 = 2 << 20;

/// The blocks a device keeps, and the bytes its buffers hold.
#[derive(Debug)]
pub(crate) struct Pool {
    cache: BlockCache<Block>,
    /// Bytes of live buffers below [`POOLED_FROM`], from the system allocator.
    unpooled: AtomicU64,
}

impl Pool {
    /// An empty pool under the default policy.
    pub(crate) fn new() -> Arc<Pool> {
        Arc::new(Pool { cache: BlockCache::new(CachePolicy::default()), unpooled: AtomicU64::new(0) })
    }

    /// A block of at least `len` bytes, and whether it is pooled: a kept
    /// block of its class (whatever it held), or a fresh zeroed one (the
    /// system allocator's below [`POOLED_FROM`], counted among the live
    /// bytes until [`forget`](Self::forget)); `None` when the system
    /// refuses even after the kept blocks are freed.
    pub(crate) fn take(&self, len: usize) -> Option<(Block, bool)> {
        if len < POOLED_FROM {
            let block = Block::new(len)?;
            self.unpooled.fetch_add(len as u64, Ordering::AcqRel);
            return Some((block, false));
        }
        let size = size_class(len as u64, GRANULE)?;
        if let Some((_, block)) = self.cache.take(size, size) {
            return Some((block, true));
        }
        let bytes = usize::try_from(size).ok()?;
        let block = Block::new(bytes).or_else(|| {
            self.trim(0);
            Block::new(bytes)
        })?;
        self.cache.add_used(size);
        Some((block, true))
    }

    /// Take back a dropped buffer's block: kept within the policy's bound,
    /// freed otherwise (it, or blocks kept longer, to make room).
    pub(crate) fn give_back(&self, block: Block) {
        drop(self.cache.put(block.len() as u64, block));
    }

    /// A dropped unpooled buffer of `len` bytes no longer counts.
    pub(crate) fn forget(&self, len: usize) {
        self.unpooled.fetch_sub(len as u64, Ordering::AcqRel);
    }

    /// Free kept blocks, largest first, until at most `keep` bytes are
    /// kept, and start the peak in use over.
    pub(crate) fn trim(&self, keep: u64) {
        drop(self.cache.trim(keep));
    }

    /// Apply `policy`, freeing the blocks past its bound.
    pub(crate) fn set_policy(&self, policy: CachePolicy) {
        drop(self.cache.set_policy(policy));
    }

    /// The pooled blocks' counts.
    pub(crate) fn stats(&self) -> CacheStats {
        self.cache.stats()
    }

    /// Bytes of live buffers, and those plus the bytes kept.
    pub(crate) fn counts(&self) -> (u64, u64) {
        let s = self.cache.stats();
        let live = s.used + self.unpooled.load(Ordering::Acquire);
        (live, live + s.cached)
    }
}

#[cfg(test)]
mod tests {
    use kiln_core::RawBuffer;

    use super::*;
    use crate::memory::CpuMemory;

    /// A buffer of `len` bytes from `pool`.
    fn alloc(pool: &Arc<Pool>, len: usize) -> Option<CpuMemory> {
        CpuMemory::from_pool(pool, len)
    }

    /// A buffer's address, to check a block is reused.
    fn address(mem: &CpuMemory) -> usize {
        mem.as_ptr() as usize
    }

    #[test]
    fn large_buffers_reuse_their_class_and_small_ones_do_not() {
        let pool = Pool::new();
        let a = alloc(&pool, POOLED_FROM + 1).expect("memory");
        assert_eq!(a.len(), POOLED_FROM + 1);
        let at = address(&a);
        // SAFETY: the whole buffer, written by nothing else.
        unsafe { a.range_mut(0, a.len()).fill(0xA5) };
        assert_eq!(pool.counts(), (POOLED_FROM as u64 + GRANULE, POOLED_FROM as u64 + GRANULE));
        drop(a);
        assert_eq!(pool.counts(), (0, POOLED_FROM as u64 + GRANULE));
        // The same class (rounded up to whole 2 MiB) gets the kept block back.
        let b = alloc(&pool, POOLED_FROM + GRANULE as usize).expect("memory");
        assert_eq!((address(&b), b.len()), (at, POOLED_FROM + GRANULE as usize));
        // Another class gets a fresh, zeroed block.
        let c = alloc(&pool, POOLED_FROM).expect("memory");
        assert_ne!(address(&c), at);
        // SAFETY: the whole buffer, written by nothing else.
        assert!(unsafe { c.range(0, c.len()) }.iter().all(|&v| v == 0));
        drop((b, c));
        let small = alloc(&pool, 100).expect("memory");
        assert_eq!(pool.counts().0, 100);
        drop(small);
        assert_eq!(pool.counts(), (0, 2 * POOLED_FROM as u64 + GRANULE));
        pool.trim(POOLED_FROM as u64);
        assert_eq!(pool.counts(), (0, POOLED_FROM as u64));
        pool.trim(0);
        assert_eq!(pool.counts(), (0, 0));
    }

    #[test]
    fn a_block_serves_another_size_of_its_class() {
        let pool = Pool::new();
        let a = alloc(&pool, (100 << 20) + 1).expect("memory");
        let at = address(&a);
        drop(a);
        // 100 MiB + 1 and 110 MiB both take a block of 112 MiB (64 MiB + 3 x 16 MiB).
        let b = alloc(&pool, 110 << 20).expect("memory");
        assert_eq!((address(&b), b.len()), (at, 110 << 20));
        assert_eq!(pool.counts(), (112 << 20, 112 << 20));
    }

    #[test]
    fn kept_blocks_stay_within_the_peak_in_use_and_the_budget() {
        let pool = Pool::new();
        // One buffer at a time, each of a larger class: keeping them all
        // would hold 4 + 6 + 8 + 10 + 12 MiB; the peak in use is 12 MiB.
        for mib in [4u64, 6, 8, 10, 12] {
            drop(alloc(&pool, (mib << 20) as usize).expect("memory"));
            let s = pool.stats();
            assert_eq!((s.peak, s.bound), (mib << 20, mib << 20));
            assert!(s.cached <= s.bound, "{s:?}");
        }
        assert_eq!(pool.counts(), (0, 12 << 20), "the latest block, kept alone");
        pool.set_policy(CachePolicy::budget(8 << 20));
        assert_eq!(pool.counts(), (0, 0), "12 MiB pass a budget of 8");
        drop(alloc(&pool, 6 << 20).expect("memory"));
        assert_eq!(pool.counts(), (0, 6 << 20));
        pool.trim(0);
        let s = pool.stats();
        assert_eq!((s.cached, s.peak, s.bound), (0, 0, 0), "the peak starts over at the trim");
    }
}
