//! Host memory for asynchronous copies, kept for reuse per device (CuPy's
//! `PinnedMemoryPool`): page-locked memory costs the driver a system call
//! and a page-table update to allocate and to free (CUDA: about a
//! millisecond per megabyte), so a [`HostBuffer`](crate::HostBuffer)'s
//! block goes back here when it is dropped, once no copy uses it, and the
//! next request of about its size takes it.
//!
//! Blocks are whole multiples of [`HOST_BLOCK_UNIT`] bytes; a request takes
//! the smallest cached block at least its size and at most twice it (its
//! requested bytes zeroed, as a new block's are), or a new one. The bytes
//! kept are bounded by the device's [`CachePolicy`] (the peak in use since
//! the last trim, or the budget, whichever is smaller; see `cache.rs`).
//! When the backend refuses a new block, the cache is freed and the
//! allocation tried once more.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::{Backend, BlockCache, CachePolicy, Error, RawDevice, RawHostBuffer, Result};

/// Host blocks are rounded up to a multiple of this many bytes (CuPy's unit).
pub const HOST_BLOCK_UNIT: usize = 512;

/// Where a device's host memory for asynchronous copies stands.
///
/// # Examples
/// ```
/// use kiln_core::{Device, HOST_BLOCK_UNIT};
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let before = dev.host_memory_stats();
/// let h = dev.alloc_host::<f32>(1000)?;          // 4000 bytes: one block of 4096
/// assert_eq!(dev.host_memory_stats().used, before.used + 4096);
/// drop(h);                                      // the block is kept for reuse
/// let after = dev.host_memory_stats();
/// assert_eq!((after.used, after.cached), (before.used, before.cached + 4096));
/// assert!(after.cached <= after.cache_bound);
/// dev.trim_host_memory(0);                      // and given back on request
/// assert_eq!(dev.host_memory_stats().cached, 0);
/// # assert_eq!(4096 % HOST_BLOCK_UNIT, 0);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HostMemoryStats {
    /// Bytes of the blocks live host buffers hold.
    pub used: u64,
    /// The most `used` has been since the device was opened (or
    /// [`Device::reset_peak_memory`](crate::Device::reset_peak_memory)).
    pub peak: u64,
    /// Bytes of the blocks kept for reuse.
    pub cached: u64,
    /// Blocks kept for reuse.
    pub cached_blocks: usize,
    /// The most `cached` may be now: the smaller of the peak in use since
    /// the last [`Device::trim_host_memory`](crate::Device::trim_host_memory)
    /// and the policy's budget ([`CachePolicy`]).
    pub cache_bound: u64,
}

impl HostMemoryStats {
    /// Bytes held from the system: used and cached.
    pub fn reserved(&self) -> u64 {
        self.used + self.cached
    }
}

/// The cached blocks and counts of one device.
pub(crate) struct HostPool<B: Backend> {
    cache: BlockCache<B::HostBuffer>,
    /// The peak `used` since the device was opened or the peak was reset
    /// (the cache's own peak starts over at each trim).
    peak: AtomicU64,
}

impl<B: Backend> Default for HostPool<B> {
    fn default() -> Self {
        HostPool { cache: BlockCache::new(CachePolicy::default()), peak: AtomicU64::new(0) }
    }
}

/// The block size for `bytes`: a whole number of units (0 stays 0).
fn block_size(bytes: usize, what: &str) -> Result<usize> {
    bytes
        .checked_next_multiple_of(HOST_BLOCK_UNIT)
        .ok_or_else(|| Error::invalid(what, format!("{bytes} bytes overflow the address space")))
}

impl<B: Backend> HostPool<B> {
    /// A block of at least `bytes` from the cache or from `device`; counted as used.
    pub(crate) fn take(&self, device: &B::Device, bytes: usize, what: &str) -> Result<B::HostBuffer> {
        let size = block_size(bytes, what)?;
        let cached = (size > 0).then(|| self.cache.take(size as u64, (size as u64).saturating_mul(2))).flatten();
        let block = match cached {
            Some((_, mut block)) => {
                // Host buffers start zeroed, as new blocks are.
                // SAFETY: a cached block is used by no copy and no host buffer.
                unsafe { block.bytes_mut()[..bytes].fill(0) };
                block
            }
            None => {
                let block = match device.alloc_host(size) {
                    Err(Error::OutOfMemory { .. }) if self.cache.stats().cached > 0 => {
                        self.trim(0);
                        device.alloc_host(size)?
                    }
                    other => other?,
                };
                self.cache.add_used(block.len() as u64);
                block
            }
        };
        self.peak.fetch_max(self.cache.stats().used, Ordering::Relaxed);
        Ok(block)
    }

    /// Take back `block`, which no copy uses any more, for reuse within the policy's bound.
    pub(crate) fn put(&self, block: B::HostBuffer) {
        let size = block.len() as u64;
        if size == 0 {
            self.cache.release(0);
            return;
        }
        // Freed outside the cache's lock: a driver call per block.
        drop(self.cache.put(size, block));
    }

    /// Free cached blocks, largest first, until at most `keep` bytes stay cached.
    pub(crate) fn trim(&self, keep: u64) {
        drop(self.cache.trim(keep));
    }

    /// Apply `policy`, freeing the blocks past its bound.
    pub(crate) fn set_policy(&self, policy: CachePolicy) {
        drop(self.cache.set_policy(policy));
    }

    pub(crate) fn policy(&self) -> CachePolicy {
        self.cache.policy()
    }

    pub(crate) fn stats(&self) -> HostMemoryStats {
        let s = self.cache.stats();
        HostMemoryStats {
            used: s.used,
            peak: self.peak.load(Ordering::Acquire).max(s.used),
            cached: s.cached,
            cached_blocks: s.cached_blocks,
            cache_bound: s.bound,
        }
    }

    pub(crate) fn reset_peak(&self) {
        self.peak.store(self.cache.stats().used, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;

    use crate::testing;

    #[test]
    fn a_dropped_block_serves_the_next_request_of_about_its_size() {
        let (dev, counters) = testing::device();
        let a = dev.alloc_host::<u8>(3000).unwrap(); // a block of 3072
        assert_eq!(dev.host_memory_stats().used, 3072);
        drop(a);
        let s = dev.host_memory_stats();
        assert_eq!((s.used, s.cached, s.cached_blocks, s.peak), (0, 3072, 1, 3072));
        // 1536 to 3072 bytes fit the cached block; 1024 would waste more than half of it.
        let b = dev.alloc_host::<u32>(400).unwrap(); // 1600 bytes
        assert_eq!(counters.host_allocs.load(Ordering::SeqCst), 1);
        assert_eq!(dev.host_memory_stats().used, 3072);
        let c = dev.alloc_host::<u32>(256).unwrap(); // 1024 bytes: a new block
        assert_eq!(counters.host_allocs.load(Ordering::SeqCst), 2);
        assert_eq!((b.len(), c.len()), (400, 256));
        assert_eq!(dev.host_memory_stats().used, 3072 + 1024);
        drop((b, c));
        dev.trim_host_memory(1024);
        let s = dev.host_memory_stats();
        assert_eq!((s.cached, s.cached_blocks), (1024, 1), "the largest block goes first");
        dev.reset_peak_memory();
        assert_eq!(dev.host_memory_stats().peak, 0);
    }

    #[test]
    fn cached_host_blocks_stay_within_the_peak_and_the_budget() {
        let (dev, counters) = testing::device();
        // One buffer at a time, each larger than the last: none reuses a
        // kept block, and keeping every one would hold 1 + 2 + ... + 10 KiB.
        for k in 1..=10 {
            drop(dev.alloc_host::<u8>(1024 * k).unwrap());
            let s = dev.host_memory_stats();
            assert_eq!(s.cache_bound, 1024 * k as u64, "the peak in use");
            assert!(s.cached <= s.cache_bound, "{s:?}");
        }
        assert_eq!(counters.host_allocs.load(Ordering::SeqCst), 10);
        let s = dev.host_memory_stats();
        assert_eq!((s.cached, s.cached_blocks), (10 * 1024, 1), "the newest block, which fits alone");
        dev.set_cache_policy(crate::CachePolicy::budget(4096)).unwrap();
        let s = dev.host_memory_stats();
        assert_eq!((s.cached, s.cache_bound), (0, 4096), "the block past the budget is freed");
        drop(dev.alloc_host::<u8>(3000).unwrap());
        assert_eq!(dev.host_memory_stats().cached, 3072);
        dev.trim_host_memory(0);
        let s = dev.host_memory_stats();
        assert_eq!((s.cached, s.cache_bound), (0, 0), "the peak starts over at the trim");
    }

    #[test]
    fn a_refused_allocation_frees_the_cache_and_tries_again() {
        let (dev, counters) = testing::device();
        drop(dev.alloc_host::<u8>(512).unwrap());
        assert_eq!(dev.host_memory_stats().cached, 512);
        counters.fail_host_allocs.store(1, Ordering::SeqCst);
        let big = dev.alloc_host::<u8>(1 << 20).unwrap();
        assert_eq!(big.len(), 1 << 20);
        let s = dev.host_memory_stats();
        assert_eq!((s.used, s.cached), (1 << 20, 0));
        // Refused with nothing cached: the error reaches the caller, nothing counted.
        counters.fail_host_allocs.store(1, Ordering::SeqCst);
        let err = dev.alloc_host::<u8>(1 << 20).unwrap_err();
        assert!(matches!(err, crate::Error::OutOfMemory { .. }), "{err}");
        assert_eq!(dev.host_memory_stats().used, 1 << 20);
    }

    #[test]
    fn a_reused_block_shows_only_the_requested_elements() {
        let (dev, _) = testing::device();
        let mut a = dev.alloc_host::<i32>(300).unwrap(); // 1200 bytes: a block of 1536
        a.as_mut_slice().unwrap().fill(7);
        drop(a);
        let mut b = dev.alloc_host::<u64>(100).unwrap(); // 800 bytes: the same block
        assert_eq!(dev.host_memory_stats().used, 1536);
        assert_eq!(b.as_slice().unwrap(), &[0; 100], "a reused block starts zeroed");
        assert_eq!(b.as_slice().unwrap().len(), 100);
        assert_eq!(b.as_mut_slice().unwrap().len(), 100);
        assert_eq!(b.to_vec().unwrap().len(), 100);
        let empty = dev.alloc_host::<f32>(0).unwrap();
        assert_eq!(empty.as_slice().unwrap(), &[] as &[f32]);
        drop(empty);
        assert_eq!(dev.host_memory_stats().cached_blocks, 0, "empty buffers hold no block");
    }
}
