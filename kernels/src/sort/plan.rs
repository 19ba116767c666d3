//! Which passes a sort runs on a device, and the tiles of each source.

use kiln_core::{Backend, Device, Language};

use super::onesweep::MAX_KEYS;

/// Keys per tile of the three-phase CUDA kernels (256 threads x 16 keys).
const CUDA_TILE: usize = 4096;
/// Keys per tile of the three-phase WGSL kernels (one per invocation).
const WGSL_TILE: usize = 256;
/// Keys per tile of the CPU's host fns.
pub(crate) const CPU_TILE: usize = 4096;
/// Threads per block of every three-phase kernel.
pub(super) const THREADS: u32 = 256;

/// How onesweep is built for a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Build {
    /// onesweep.cu: 384 threads x 20 keys a tile; its look-back spins on
    /// earlier blocks, which needs forward progress between blocks.
    Cuda,
    /// onesweep.wgsl: 256 invocations x `items` keys a tile, ranked with
    /// subgroup ballots; `subs` is the most subgroups a workgroup holds (256
    /// over the adapter's smallest subgroup).
    Wgsl { items: u32, subs: u32 },
}

impl Build {
    /// How `device` sorts `n` keys with onesweep, if it does: up to
    /// [`MAX_KEYS`] (the status words count in 30 bits); CUDA where blocks
    /// make forward progress; WGSL where the adapter has subgroup operations
    /// and its workgroup memory holds a tile of at least 8 keys per
    /// invocation with the subgroups' counters. Elsewhere the three-phase
    /// kernels run.
    pub(super) fn for_device<B: Backend>(device: &Device<B>, n: usize) -> Option<Build> {
        let info = device.info();
        if n > MAX_KEYS {
            return None;
        }
        match B::LANGUAGE {
            Language::Cuda if info.features.forward_progress => Some(Build::Cuda),
            Language::Wgsl if info.features.subgroups => {
                let smallest = info.limits.min_warp_size;
                if !smallest.is_power_of_two() || !(4..=128).contains(&smallest) {
                    return None;
                }
                let subs = 256 / smallest;
                let limit = info.limits.max_shared_mem_per_block;
                [16, 12, 8]
                    .into_iter()
                    .find(|&items| wgsl_shared_bytes(items, subs) <= limit)
                    .map(|items| Build::Wgsl { items, subs })
            }
            _ => None,
        }
    }

    /// Keys per tile.
    pub(super) fn tile(self) -> usize {
        match self {
            Build::Cuda => 384 * 20,
            Build::Wgsl { items, .. } => 256 * items as usize,
        }
    }

    /// Threads per block of the pass kernel.
    pub(super) fn threads(self) -> u32 {
        match self {
            Build::Cuda => 384,
            Build::Wgsl { .. } => 256,
        }
    }
}

/// Workgroup memory of onesweep.wgsl with `items` keys per invocation and
/// at most `subs` subgroups: the tile, the subgroups' 16-bit counters, three
/// arrays of 256 words, the subgroup sums and three words.
fn wgsl_shared_bytes(items: u32, subs: u32) -> u32 {
    4 * (256 * items + subs * 128 + 3 * 256 + 2 * subs + 3)
}

/// Keys per tile of the three-phase source backend `B` compiles: each
/// source is written for its own.
pub(super) fn three_phase_tile<B: Backend>() -> usize {
    match B::LANGUAGE {
        Language::Wgsl => WGSL_TILE,
        Language::Host => CPU_TILE,
        _ => CUDA_TILE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wgsl_tiles_fit_common_adapters() {
        // NVIDIA (subgroups of 32, 48 KiB) and lavapipe (8, 32 KiB).
        let fit = |subs, limit| [16, 12, 8].into_iter().find(|&i| wgsl_shared_bytes(i, subs) <= limit);
        assert_eq!(fit(8, 48 << 10), Some(16));
        assert_eq!(fit(32, 32 << 10), Some(12));
        assert_eq!(fit(64, 16 << 10), None);
    }
}
