//! kiln's count of the device memory its buffers hold, per device: the
//! bytes in use, the peak, and an optional limit past which an allocation
//! fails with `OutOfMemory` (CuPy's `MemoryPool.used_bytes`, `set_limit`).
//!
//! Every [`Buffer`](crate::Buffer) counts its bytes from its allocation to
//! its drop. What the backend's allocator keeps besides (CUDA's
//! stream-ordered pool, wgpu's memory blocks) is its `reserved` figure
//! ([`MemoryInfo::reserved`](crate::MemoryInfo::reserved)); a buffer's
//! memory goes back to that allocator only once the work using it is done,
//! whatever the count says (each backend's free is ordered after its uses).

use std::sync::atomic::{AtomicU64, Ordering};

/// A limit on the bytes kiln's buffers may hold on a device.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MemoryLimit {
    /// At most this many bytes.
    Bytes(u64),
    /// At most this fraction (in `(0, 1]`) of the device's memory.
    Fraction(f64),
}

/// Where a device's memory stands, from kiln's count and the backend's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryStats {
    /// Bytes kiln's live buffers hold on the device.
    pub used: u64,
    /// The most `used` has been since the device was opened (or
    /// [`Device::reset_peak_memory`](crate::Device::reset_peak_memory)).
    pub peak: u64,
    /// Bytes the backend's pool keeps for reuse: blocks of dropped buffers
    /// (see [`CachePolicy`](crate::CachePolicy)).
    pub cached: u64,
    /// The most `cached` may be now: the smaller of the pool's peak in use
    /// since the last [`Device::trim_memory`](crate::Device::trim_memory)
    /// and the policy's budget.
    pub cache_bound: u64,
    /// Bytes the backend's allocator holds (used, or kept for reuse), where it
    /// says ([`MemoryInfo::reserved`](crate::MemoryInfo::reserved)).
    pub reserved: Option<u64>,
    /// The limit on `used`, in bytes, if one is set.
    pub limit: Option<u64>,
    /// Bytes free on the device now (every process), where the backend says.
    pub free: Option<u64>,
    /// Bytes of device memory in all (0 where unknown).
    pub total: u64,
}

/// The counters of one device.
#[derive(Debug)]
pub(crate) struct Counter {
    used: AtomicU64,
    peak: AtomicU64,
    /// `u64::MAX` for no limit.
    limit: AtomicU64,
}

impl Default for Counter {
    fn default() -> Self {
        Counter { used: AtomicU64::new(0), peak: AtomicU64::new(0), limit: AtomicU64::new(u64::MAX) }
    }
}

impl Counter {
    /// Count `bytes` more if that stays within the limit; otherwise
    /// `Err((used, limit))` and nothing counted.
    pub(crate) fn try_reserve(&self, bytes: u64) -> Result<(), (u64, u64)> {
        let limit = self.limit.load(Ordering::Relaxed);
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            let Some(next) = used.checked_add(bytes).filter(|&n| n <= limit) else {
                return Err((used, limit));
            };
            match self.used.compare_exchange_weak(used, next, Ordering::AcqRel, Ordering::Relaxed) {
                Ok(_) => {
                    self.peak.fetch_max(next, Ordering::Relaxed);
                    return Ok(());
                }
                Err(now) => used = now,
            }
        }
    }

    /// Count `bytes` more, whatever the limit (memory already allocated).
    pub(crate) fn add(&self, bytes: u64) {
        let next = self.used.fetch_add(bytes, Ordering::AcqRel).saturating_add(bytes);
        self.peak.fetch_max(next, Ordering::Relaxed);
    }

    /// Count `bytes` fewer.
    pub(crate) fn release(&self, bytes: u64) {
        let _ = self.used.fetch_update(Ordering::AcqRel, Ordering::Relaxed, |u| Some(u.saturating_sub(bytes)));
    }

    pub(crate) fn used(&self) -> u64 {
        self.used.load(Ordering::Acquire)
    }

    pub(crate) fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }

    pub(crate) fn limit(&self) -> Option<u64> {
        Some(self.limit.load(Ordering::Relaxed)).filter(|&l| l != u64::MAX)
    }

    /// Set the limit (`None`: no limit), unless it is below what is in use:
    /// then `Err(used)` and the limit stays.
    pub(crate) fn set_limit(&self, limit: Option<u64>) -> Result<(), u64> {
        let new = limit.unwrap_or(u64::MAX);
        let used = self.used();
        if new < used {
            return Err(used);
        }
        self.limit.store(new, Ordering::Relaxed);
        Ok(())
    }

    pub(crate) fn reset_peak(&self) {
        self.peak.store(self.used(), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::Counter;

    #[test]
    fn counts_within_the_limit_and_keeps_the_peak() {
        let c = Counter::default();
        c.try_reserve(100).unwrap();
        c.add(50);
        assert_eq!((c.used(), c.peak(), c.limit()), (150, 150, None));
        c.release(120);
        assert_eq!((c.used(), c.peak()), (30, 150));
        assert_eq!(c.set_limit(Some(20)), Err(30), "below what is in use");
        assert_eq!(c.limit(), None, "the refused limit is not set");
        c.set_limit(Some(100)).unwrap();
        assert_eq!(c.try_reserve(71), Err((30, 100)));
        assert_eq!(c.used(), 30, "a refused request counts nothing");
        c.try_reserve(70).unwrap();
        assert_eq!(c.try_reserve(u64::MAX), Err((100, 100)), "no overflow");
        c.reset_peak();
        assert_eq!(c.peak(), 100);
        c.release(1000);
        assert_eq!(c.used(), 0, "never below zero");
    }

    #[test]
    fn threads_never_pass_the_limit_together() {
        let c = std::sync::Arc::new(Counter::default());
        c.set_limit(Some(1000)).unwrap();
        let granted: u64 = (0..8)
            .map(|_| {
                let c = c.clone();
                std::thread::spawn(move || (0..100).filter(|_| c.try_reserve(7).is_ok()).count() as u64)
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|h| h.join().unwrap())
            .sum();
        assert_eq!(granted, 1000 / 7);
        assert_eq!(c.used(), granted * 7);
    }
}
