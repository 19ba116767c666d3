//! Device buffers kept for reuse: a dropped kiln buffer's wgpu buffer goes
//! here, and the next allocation of its size class takes it back, without
//! wgpu's buffer creation or the clear wgpu gives every new buffer before
//! its first use (as much device time as a fill of the buffer).
//!
//! Buffers are created at their [`size_class`] (four classes per doubling,
//! wasting under a quarter), so a kept buffer serves any later request of
//! its class; a kiln buffer binds and copies only its own bytes of it.
//!
//! Reuse is sound in stream order: every stream of a device records into
//! the one batch of the one queue (see `stream.rs`), and kiln writes device
//! buffers only through recorded commands, so whatever a new owner records
//! runs after everything recorded before the old owner dropped it. The
//! bytes kept are bounded by the device's [`CachePolicy`] (the peak in use
//! since the last trim, or the budget, whichever is smaller): a buffer
//! past it is dropped, or buffers kept longer make room for it. The pool
//! lets go of what it holds on [`Pool::trim`], and an allocation that meets
//! out-of-memory empties it and tries once more. A buffer let go of returns
//! its memory to wgpu's allocator once the work using it is done, which
//! frees a memory block as soon as it holds nothing (see `device.rs` for
//! the block sizes).

use kiln_core::{size_class, BlockCache, CachePolicy, CacheStats};

/// Classes are whole multiples of this many bytes (the usual storage offset
/// alignment), so small buffers of nearby sizes share a class.
const GRANULE: u64 = 256;

/// Free device buffers by allocated size, and the bytes in use.
pub(crate) struct Pool {
    cache: BlockCache<wgpu::Buffer>,
    /// The adapter's largest buffer: a class past it is not used.
    max_buffer: u64,
}

impl Pool {
    /// An empty pool under the default policy, for buffers of at most `max_buffer` bytes.
    pub(crate) fn new(max_buffer: u64) -> Self {
        Pool { cache: BlockCache::new(CachePolicy::default()), max_buffer }
    }

    /// The size to create a buffer of at least `bytes` (a multiple of 4) at:
    /// its class, or `bytes` itself where the class would pass the
    /// adapter's largest buffer.
    pub(crate) fn class(&self, bytes: u64) -> u64 {
        size_class(bytes, GRANULE).filter(|&c| c <= self.max_buffer).unwrap_or(bytes)
    }

    /// A kept buffer of exactly `size` bytes (a class), if there is one; counted as in use.
    pub(crate) fn take(&self, size: u64) -> Option<wgpu::Buffer> {
        self.cache.take(size, size).map(|(_, buffer)| buffer)
    }

    /// Count a new buffer of `size` bytes as in use.
    pub(crate) fn add_used(&self, size: u64) {
        self.cache.add_used(size);
    }

    /// Keep `buffer`, no longer in use, for reuse within the policy's bound.
    pub(crate) fn put(&self, buffer: wgpu::Buffer) {
        // Let go of outside the cache's lock.
        drop(self.cache.put(buffer.size(), buffer));
    }

    /// Let kept buffers go, largest first, until at most `keep` bytes are
    /// kept, and start the peak in use over.
    pub(crate) fn trim(&self, keep: u64) {
        drop(self.cache.trim(keep));
    }

    /// Apply `policy`, letting go of the buffers past its bound.
    pub(crate) fn set_policy(&self, policy: CachePolicy) {
        drop(self.cache.set_policy(policy));
    }

    /// The counts now.
    pub(crate) fn stats(&self) -> CacheStats {
        self.cache.stats()
    }
}
