//! How a case runs: its warm-up, sampling and seed, and how many buffer
//! sets it rotates among. A leaf of the case runners (`run.rs`, `array.rs`,
//! `latency.rs`, `matrix.rs`, `parallel.rs`).

use kiln_core::{Backend, Stream};

use crate::timing::Sampling;

/// Caches on current GPUs are at most this large (the H100's L2 is 50 MB);
/// working sets are rotated until they exceed twice this.
const CACHE_BYTES: u64 = 64 << 20;

/// How many buffer sets of `set_bytes` to rotate among: enough to exceed
/// twice the cache, at most 8, within a quarter of the device's memory.
pub(crate) fn set_count<B: Backend>(stream: &Stream<B>, set_bytes: u64) -> usize {
    let set_bytes = set_bytes.max(1);
    let memory_cap = (stream.device().info().memory_bytes / 4).max(set_bytes);
    (2 * CACHE_BYTES).div_ceil(set_bytes).clamp(1, 8).min(memory_cap / set_bytes).max(1) as usize
}

/// How a case is warmed up and sampled, and the seed of its inputs.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    /// Untimed runs first, at least.
    pub warmup: usize,
    /// Busy time of untimed runs after those, ms (clocks up before timing).
    pub warmup_ms: f64,
    /// Timed samples (the median and min are taken over these).
    pub runs: usize,
    /// The least device work one timed sample covers, ms.
    pub sample_ms: f64,
    /// Seed of the random inputs.
    pub seed: u64,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions { warmup: 3, warmup_ms: 100.0, runs: 20, sample_ms: 2.0, seed: 0x6b696c6e }
    }
}

impl RunOptions {
    /// The sampling these options ask for.
    pub fn sampling(&self) -> Sampling {
        Sampling { warmup: self.warmup, warmup_ms: self.warmup_ms, runs: self.runs, sample_ms: self.sample_ms }
    }
}
