//! Which passes a sort runs on a device, and the tiles of each source.

use kiln_core::{Backend, Device, Language};

use super::types::MAX_KEYS;

/// Keys per tile of the three-phase CUDA kernels (256 threads x 16 keys).
const CUDA_TILE: usize = 4096;
/// Keys per tile of the three-phase WGSL kernels (one per invocation).
const WGSL_TILE: usize = 256;
/// The fewest keys per tile of the CPU's host fns.
const CPU_MIN_TILE: usize = 4096;
/// Tiles per thread of the CPU's pool: enough to even out the threads'
/// work, few enough that the counters (256 per tile) stay in cache and a
/// tile's 256 digit runs are long streams rather than scattered lines.
const CPU_TILES_PER_THREAD: usize = 4;
/// The most tiles the CPU cuts a sort into, however many threads.
const CPU_MAX_TILES: usize = 256;
/// Threads per block of every three-phase kernel.
pub(super) const THREADS: u32 = 256;

/// Threads per block of onesweep.cu's pass kernel.
const CUDA_THREADS: u32 = 384;
/// Keys per thread and blocks per multiprocessor of the keys-only pass on
/// CUDA: 16 keys in at most 56 registers, so three blocks share an SM and
/// hide each other's look-back and memory waits. Measured on the H200 (64 Mi
/// random u32 keys, the whole sort): 1.875 ms, against 2.025 ms with 20
/// keys in two blocks (80 registers), 1.868 ms with 19 keys in three (which
/// spill 24 bytes) and 1.941 ms with 23 keys in two.
const CUDA_KEYS: (u32, u32) = (16, 3);
/// The same with values: 20 keys and their values in two blocks (80
/// registers); three blocks would spill 68 bytes a thread.
const CUDA_PAIRS: (u32, u32) = (20, 2);

/// Keys per thread the one-tile sort (onesweep.cu's STEP 2) is built for:
/// the fewest of these that hold a sort's keys in [`CUDA_THREADS`] threads.
const ONE_TILE_ITEMS: [u32; 6] = [1, 2, 4, 8, 16, 20];

/// Keys per thread of the one-launch sort of `n` keys (onesweep.cu's STEP
/// 2) on `device`, if it takes them: CUDA, up to 384 x 20 keys (7680).
/// Sorts that small cost their launches more than their bytes; one block
/// sorts them whole (CUB's single-tile sort does the same).
pub(super) fn one_tile<B: Backend>(n: usize) -> Option<u32> {
    if B::LANGUAGE != Language::Cuda {
        return None;
    }
    one_tile_items(n)
}

/// The fewest of [`ONE_TILE_ITEMS`] keys per thread that hold `n` keys.
fn one_tile_items(n: usize) -> Option<u32> {
    ONE_TILE_ITEMS.into_iter().find(|&items| CUDA_THREADS as usize * items as usize >= n)
}

/// Threads per block of the one-tile sort.
pub(super) const ONE_TILE_THREADS: u32 = CUDA_THREADS;

/// How onesweep is built for a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Build {
    /// onesweep.cu: 384 threads x `items` keys a tile, `min_blocks` blocks
    /// per multiprocessor (the register bound); its look-back spins on
    /// earlier blocks, which needs forward progress between blocks.
    Cuda { items: u32, min_blocks: u32 },
    /// onesweep.wgsl: 256 invocations x `items` keys a tile, ranked with
    /// subgroup ballots; `subs` is the most subgroups a workgroup holds (256
    /// over the adapter's smallest subgroup).
    Wgsl { items: u32, subs: u32 },
}

impl Build {
    /// How `device` sorts `n` keys (moving values with them when `values`)
    /// with onesweep, if it does: up to
    /// [`MAX_KEYS`] (the status words count in 30 bits); CUDA where blocks
    /// make forward progress; WGSL where the adapter has subgroup operations
    /// and its workgroup memory holds a tile of at least 8 keys per
    /// invocation with the subgroups' counters. Elsewhere the three-phase
    /// kernels run.
    pub(super) fn for_device<B: Backend>(device: &Device<B>, n: usize, values: bool) -> Option<Build> {
        let info = device.info();
        if n > MAX_KEYS {
            return None;
        }
        match B::LANGUAGE {
            Language::Cuda if info.features.forward_progress => Some(if values {
                Build::Cuda { items: CUDA_PAIRS.0, min_blocks: CUDA_PAIRS.1 }
            } else {
                Build::Cuda { items: CUDA_KEYS.0, min_blocks: CUDA_KEYS.1 }
            }),
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
            Build::Cuda { items, .. } => CUDA_THREADS as usize * items as usize,
            Build::Wgsl { items, .. } => 256 * items as usize,
        }
    }

    /// Threads per block of the pass kernel.
    pub(super) fn threads(self) -> u32 {
        match self {
            Build::Cuda { .. } => CUDA_THREADS,
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
pub(super) fn three_phase_tile<B: Backend>(n: usize) -> usize {
    match B::LANGUAGE {
        Language::Wgsl => WGSL_TILE,
        Language::Host => cpu_tile(n),
        _ => CUDA_TILE,
    }
}

/// Keys per tile of a CPU sort of `n` keys: at least 4096, and about four
/// tiles per thread of the pool (at most 256). Any tiling gives the same
/// (stable) order.
fn cpu_tile(n: usize) -> usize {
    let tiles = (CPU_TILES_PER_THREAD * rayon::current_num_threads()).clamp(1, CPU_MAX_TILES);
    n.div_ceil(tiles).max(CPU_MIN_TILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_tiles_are_few_and_cover_the_keys() {
        for n in [1, 4095, 4096, 4097, 1 << 20, (1 << 20) + 1, 1 << 26, usize::MAX / 2] {
            let tile = cpu_tile(n);
            assert!(tile >= CPU_MIN_TILE, "{n}");
            assert!(n.div_ceil(tile) <= CPU_MAX_TILES, "{n}");
        }
    }

    #[test]
    fn one_tile_items_grow_with_the_keys() {
        let want = one_tile_items;
        assert_eq!(want(2), Some(1));
        assert_eq!(want(384), Some(1));
        assert_eq!(want(385), Some(2));
        assert_eq!(want(1024), Some(4));
        assert_eq!(want(6144), Some(16));
        assert_eq!(want(6145), Some(20));
        assert_eq!(want(7680), Some(20));
        assert_eq!(want(7681), None);
    }

    #[test]
    fn wgsl_tiles_fit_common_adapters() {
        // NVIDIA (subgroups of 32, 48 KiB) and lavapipe (8, 32 KiB).
        let fit = |subs, limit| [16, 12, 8].into_iter().find(|&i| wgsl_shared_bytes(i, subs) <= limit);
        assert_eq!(fit(8, 48 << 10), Some(16));
        assert_eq!(fit(32, 32 << 10), Some(12));
        assert_eq!(fit(64, 16 << 10), None);
    }
}
