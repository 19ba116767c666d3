//! Blocks kept for reuse, bounded by the work (CUB's caching allocator,
//! CuPy's memory pool): one policy and one cache that every backend's pool
//! and the host pool apply.
//!
//! Sizes are rounded up to [`size_class`]es (four per doubling), so a block
//! dropped by a buffer serves the next request of any size in its class,
//! wasting under a quarter of it. The bytes kept for reuse never pass the
//! [`CachePolicy`]'s bound: the most bytes the cache's blocks were in use
//! at once since its last trim, or the policy's budget, whichever is
//! smaller. A block that would pass it makes room by freeing the blocks
//! kept longest, or is freed itself when it alone is larger than the bound.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// How many bytes a device's pools may keep for reuse: at most the peak in
/// use since the last trim (`Device::trim_memory`), and at most `budget`
/// where one is set.
///
/// # Examples
/// ```
/// use kiln_core::{CachePolicy, Device};
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// assert_eq!(CachePolicy::default().bound(300), 300, "the peak, without a budget");
/// assert_eq!(CachePolicy::budget(100).bound(300), 100);
/// let dev = Device::<Cpu>::open(0)?;
/// dev.set_cache_policy(CachePolicy::budget(64 << 20))?;
/// assert_eq!(dev.cache_policy(), CachePolicy::budget(64 << 20));
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CachePolicy {
    /// The most bytes kept for reuse whatever the peak (`None`: the peak alone bounds them).
    pub budget: Option<u64>,
}

impl CachePolicy {
    /// A policy keeping at most `bytes` (and at most the peak in use).
    pub const fn budget(bytes: u64) -> Self {
        CachePolicy { budget: Some(bytes) }
    }

    /// The most bytes kept for reuse when the peak in use since the last trim is `peak`.
    pub fn bound(&self, peak: u64) -> u64 {
        self.budget.map_or(peak, |b| b.min(peak))
    }
}

/// The size class of `bytes`: `bytes` rounded up to a multiple of
/// `granule` (a power of two), then up to the next of four steps per
/// doubling (`2^k`, `1.25 x 2^k`, `1.5 x 2^k`, `1.75 x 2^k`) that is a
/// multiple of `granule`. The class wastes under a quarter of itself, or
/// under one granule. `None` where the class would overflow.
///
/// # Examples
/// ```
/// use kiln_core::size_class;
/// assert_eq!(size_class(1000, 4), Some(1024));
/// assert_eq!(size_class(1025, 4), Some(1280));
/// assert_eq!(size_class(1281, 4), Some(1536));
/// assert_eq!(size_class(5 << 20, 2 << 20), Some(6 << 20), "whole granules");
/// assert_eq!(size_class(3, 512), Some(512));
/// assert_eq!(size_class(0, 4), Some(0));
/// assert_eq!(size_class(u64::MAX, 4), None);
/// ```
pub fn size_class(bytes: u64, granule: u64) -> Option<u64> {
    let granule = granule.max(1).checked_next_power_of_two()?;
    let rounded = bytes.checked_next_multiple_of(granule)?;
    if rounded <= 4 * granule {
        return Some(rounded);
    }
    // A quarter of the power of two at or below `rounded`: at least a granule here.
    let step = (1u64 << (63 - rounded.leading_zeros())) / 4;
    rounded.checked_next_multiple_of(step.max(granule))
}

/// Where a [`BlockCache`] stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CacheStats {
    /// Bytes of the blocks in use.
    pub used: u64,
    /// Bytes of the blocks kept for reuse.
    pub cached: u64,
    /// Blocks kept for reuse.
    pub cached_blocks: usize,
    /// The most `used` has been since the last trim.
    pub peak: u64,
    /// The most `cached` may be now: the policy's bound for `peak`.
    pub bound: u64,
}

/// Free blocks of type `T` by size, with the counts that bound them (see
/// the module docs). The owner allocates and frees the blocks; the cache
/// decides which to keep and returns those to free, so that the owner frees
/// them outside its lock.
///
/// # Examples
/// ```
/// use kiln_core::{BlockCache, CachePolicy};
/// let cache = BlockCache::<&str>::new(CachePolicy::default());
/// cache.add_used(1024);                        // a new block of 1024 bytes handed out
/// assert!(cache.put(1024, "a").is_empty());    // back, and kept: the peak was 1024
/// assert_eq!(cache.take(1000, 1024), Some((1024, "a")));
/// cache.add_used(4096);                        // "a" and a new block in use: a peak of 5120
/// assert!(cache.put(4096, "b").is_empty());    // kept: 4096 <= 5120
/// assert_eq!(cache.stats().bound, 5120);
/// assert_eq!(cache.trim(0), vec!["b"]);        // given back; the peak starts over at 1024
/// let s = cache.stats();
/// assert_eq!((s.cached, s.peak), (0, 1024));
/// ```
pub struct BlockCache<T> {
    inner: Mutex<Inner<T>>,
}

struct Inner<T> {
    /// Free blocks by size, each list oldest first, with the order they came in.
    free: BTreeMap<u64, VecDeque<(u64, T)>>,
    /// The next block's place in that order.
    next: u64,
    used: u64,
    cached: u64,
    blocks: usize,
    peak: u64,
    policy: CachePolicy,
}

impl<T> std::fmt::Debug for BlockCache<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "BlockCache({:?})", self.stats())
    }
}

impl<T> BlockCache<T> {
    /// An empty cache under `policy`.
    pub fn new(policy: CachePolicy) -> Self {
        BlockCache {
            inner: Mutex::new(Inner { free: BTreeMap::new(), next: 0, used: 0, cached: 0, blocks: 0, peak: 0, policy }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner<T>> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The smallest kept block of `size` to `most` bytes, with its size, the
    /// one kept last among those of its size; counted as in use.
    pub fn take(&self, size: u64, most: u64) -> Option<(u64, T)> {
        let mut inner = self.lock();
        let (&found, list) = inner.free.range_mut(size..=most.max(size)).next()?;
        let (_, block) = list.pop_back()?;
        if list.is_empty() {
            inner.free.remove(&found);
        }
        inner.cached -= found;
        inner.blocks -= 1;
        inner.use_bytes(found);
        Some((found, block))
    }

    /// Count a new block of `size` bytes as in use.
    pub fn add_used(&self, size: u64) {
        self.lock().use_bytes(size);
    }

    /// A block of `size` bytes is no longer in use and was freed by its owner.
    pub fn release(&self, size: u64) {
        let mut inner = self.lock();
        inner.used = inner.used.saturating_sub(size);
    }

    /// Take back `block` of `size` bytes, no longer in use: kept if the
    /// bound allows, after freeing the blocks kept longest where needed.
    /// Returns the blocks to free (`block` itself when larger than the bound).
    pub fn put(&self, size: u64, block: T) -> Vec<T> {
        let mut inner = self.lock();
        inner.used = inner.used.saturating_sub(size);
        let bound = inner.bound();
        if size > bound {
            return vec![block];
        }
        let mut freed = Vec::new();
        while inner.cached + size > bound {
            match inner.evict_oldest() {
                Some(old) => freed.push(old),
                None => break,
            }
        }
        let order = inner.next;
        inner.next += 1;
        inner.free.entry(size).or_default().push_back((order, block));
        inner.cached += size;
        inner.blocks += 1;
        freed
    }

    /// Free kept blocks, largest first, until at most `keep` bytes are
    /// kept, and start the peak over from the bytes in use. Returns the
    /// blocks to free.
    pub fn trim(&self, keep: u64) -> Vec<T> {
        let mut inner = self.lock();
        let mut freed = Vec::new();
        while inner.cached > keep {
            let Some(mut entry) = inner.free.last_entry() else { break };
            let size = *entry.key();
            let block = entry.get_mut().pop_front();
            if entry.get().is_empty() {
                entry.remove();
            }
            if let Some((_, block)) = block {
                inner.cached -= size;
                inner.blocks -= 1;
                freed.push(block);
            }
        }
        inner.peak = inner.used;
        freed
    }

    /// Apply `policy` from now on; returns the kept blocks past its bound, to free.
    pub fn set_policy(&self, policy: CachePolicy) -> Vec<T> {
        let mut inner = self.lock();
        inner.policy = policy;
        let bound = inner.bound();
        let mut freed = Vec::new();
        while inner.cached > bound {
            match inner.evict_oldest() {
                Some(old) => freed.push(old),
                None => break,
            }
        }
        freed
    }

    /// The policy applied.
    pub fn policy(&self) -> CachePolicy {
        self.lock().policy
    }

    /// The counts now.
    pub fn stats(&self) -> CacheStats {
        let inner = self.lock();
        CacheStats {
            used: inner.used,
            cached: inner.cached,
            cached_blocks: inner.blocks,
            peak: inner.peak,
            bound: inner.bound(),
        }
    }
}

impl<T> Inner<T> {
    fn use_bytes(&mut self, size: u64) {
        self.used = self.used.saturating_add(size);
        self.peak = self.peak.max(self.used);
    }

    fn bound(&self) -> u64 {
        self.policy.bound(self.peak)
    }

    /// Remove the block kept longest, if any.
    fn evict_oldest(&mut self) -> Option<T> {
        let size = self.free.iter().filter_map(|(&s, l)| l.front().map(|(o, _)| (*o, s))).min()?.1;
        let list = self.free.get_mut(&size)?;
        let (_, block) = list.pop_front()?;
        if list.is_empty() {
            self.free.remove(&size);
        }
        self.cached -= size;
        self.blocks -= 1;
        Some(block)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_step_by_quarters_and_waste_under_a_quarter() {
        let classes: Vec<u64> = (4097..=8192).filter_map(|b| size_class(b, 4)).collect();
        let mut distinct = classes.clone();
        distinct.dedup();
        assert_eq!(distinct, vec![5120, 6144, 7168, 8192]);
        for bytes in (1..1 << 22).step_by(997) {
            let class = size_class(bytes, 4).unwrap();
            assert!(class >= bytes && class.is_multiple_of(4), "{bytes} -> {class}");
            assert!((class - bytes) * 4 < class || class - bytes < 4, "{bytes} -> {class}");
        }
    }

    #[test]
    fn a_block_of_another_size_in_its_class_is_reused() {
        let cache = BlockCache::new(CachePolicy::default());
        let a = size_class(5000, 4).unwrap(); // 5120
        cache.add_used(a);
        assert!(cache.put(a, 'a').is_empty());
        let b = size_class(4500, 4).unwrap();
        assert_eq!(b, a, "4500 and 5000 bytes share a class");
        assert_eq!(cache.take(b, b), Some((5120, 'a')));
        assert_eq!(cache.take(b, b), None, "taken once");
        let s = cache.stats();
        assert_eq!((s.used, s.cached, s.peak), (5120, 0, 5120));
    }

    #[test]
    fn cached_bytes_stay_within_the_peak_and_the_budget() {
        let cache = BlockCache::new(CachePolicy::default());
        // Varying sizes, at most 3 blocks live at once: the cache never keeps
        // more than the most that was in use.
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut live: Vec<u64> = Vec::new();
        let mut peak = 0u64;
        for _ in 0..2000 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            if live.len() == 3 || (rng & 1 == 0 && !live.is_empty()) {
                let size = live.swap_remove((rng >> 8) as usize % live.len());
                drop(cache.put(size, size));
            } else {
                let size = size_class(1 + (rng >> 20) % (1 << 20), 4).unwrap();
                if cache.take(size, size).is_none() {
                    cache.add_used(size);
                }
                live.push(size);
            }
            peak = peak.max(live.iter().sum());
            let s = cache.stats();
            assert_eq!((s.used, s.peak), (live.iter().sum(), peak));
            assert!(s.cached <= peak, "{s:?}");
        }
        let kept = cache.stats().cached;
        assert!(kept > 0, "something was kept");
        let freed = cache.set_policy(CachePolicy::budget(1 << 19));
        assert!(cache.stats().cached <= 1 << 19, "{:?}", cache.stats());
        assert_eq!(kept - freed.iter().sum::<u64>(), cache.stats().cached, "what went is what was freed");
        for size in live {
            drop(cache.put(size, size));
        }
        assert!(cache.stats().cached <= 1 << 19);
        cache.trim(0);
        let s = cache.stats();
        assert_eq!((s.cached, s.cached_blocks, s.peak, s.bound), (0, 0, 0, 0));
    }

    #[test]
    fn a_full_cache_frees_the_block_kept_longest() {
        let cache = BlockCache::new(CachePolicy::default());
        for size in [100, 200, 300] {
            cache.add_used(size);
        }
        // Peak 600: all three fit.
        for (size, name) in [(100, "old"), (200, "mid"), (300, "new")] {
            assert!(cache.put(size, name).is_empty());
        }
        cache.set_policy(CachePolicy::budget(500));
        assert_eq!(cache.stats().cached, 500, "the oldest, 100 bytes, went");
        assert_eq!(cache.take(100, 100), None);
        cache.add_used(450);
        assert_eq!(cache.put(450, "big"), vec!["mid", "new"]);
        assert_eq!(cache.stats().cached, 450);
        cache.add_used(600);
        assert_eq!(cache.put(600, "huge"), vec!["huge"], "larger than the bound alone");
    }
}
