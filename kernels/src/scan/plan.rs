//! How a scan runs on a device: one pass with decoupled look-back where
//! blocks may wait on each other (CUDA, and the host fns), and the tiles
//! each source is written for; the compaction shares both. WGSL, where
//! workgroups may not wait on each other, has its own one pass with
//! fallback (`fallback.rs`) and three passes for what that cannot take.

use kiln_core::{Backend, DType, Device, Program};

/// Threads per block of the one-pass CUDA kernels (their KILN_SCAN_BLOCK).
pub(crate) const SCAN_BLOCK: u32 = 256;
/// 16-byte vectors per thread of the one-pass CUDA kernels (their
/// KILN_SCAN_VPL define). Measured on an H100 (64 Mi f32 inclusive scan,
/// with 4-byte values inside the status words): 8 vectors per thread, 8192
/// tiles of 8 Ki, ran at 2206 GB/s against 2001 for 4 vectors (16384 tiles,
/// twice as many look-backs) and 1611 for 2.
pub(crate) const CUDA_VECTORS: usize = 8;
/// Resident blocks per SM the one-pass CUDA kernels' registers must allow
/// (their KILN_SCAN_MIN_BLOCKS define): 2 leaves 128 registers per thread,
/// so that no variant spills.
pub(crate) const CUDA_MIN_BLOCKS: usize = 2;
/// Elements per tile of the multi-pass WGSL kernels: 256 invocations x 4.
pub(super) const WGSL_TILE: usize = 1024;

/// Elements per thread of the one-pass CUDA kernels (their KILN_ITEMS define).
pub(crate) const fn cuda_items(dtype: DType) -> usize {
    CUDA_VECTORS * 16 / dtype.size()
}

/// Elements per tile of the one-pass CUDA kernels: 256 threads x [`cuda_items`].
pub(crate) const fn cuda_tile(dtype: DType) -> usize {
    SCAN_BLOCK as usize * cuda_items(dtype)
}

/// Whether `device` runs `one_pass` (a look-back program) rather than the
/// multi-pass form: the look-back spins on earlier blocks, which needs
/// forward progress between blocks, and the program must have a source in
/// the backend's language (the host fns, which run the whole launch in one
/// call, are one of them).
pub(crate) fn runs_one_pass<B: Backend>(device: &Device<B>, one_pass: &Program) -> bool {
    device.info().features.forward_progress && one_pass.has(B::LANGUAGE)
}

/// Tiles (blocks) of a one-pass launch over `n` elements of `dtype`: a
/// host fn takes the whole array as one tile.
pub(crate) fn one_pass_tiles<B: Backend>(n: usize, dtype: DType) -> usize {
    if B::LANGUAGE.runs_whole_launch() { 1 } else { n.div_ceil(cuda_tile(dtype)) }
}
