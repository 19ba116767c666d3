//! The image kernels' launch shapes, from the device's vector width and the
//! geometry each source is written for.

use kiln_core::{Backend, DType, Device, Language, LaunchConfig};

// Threads per block of the 1D kernels (gray, WGSL's convolution): the
// shared one-element-per-thread block.
use crate::launch::{BLOCK, aligned, blocks};

/// The gray launch over `n` pixels whose input and output views start at
/// byte offsets `in_off` and `out_off`. A thread converts as many pixels
/// as one access of the device's vector width carries where both views are
/// aligned to it (16 on CUDA; 4, one word, on WGSL, which packs bytes into
/// words), else 4 where they are word-aligned, else 1; every loop is
/// grid-stride, so this sizes the grid and nothing else.
pub(super) fn gray_config<B: Backend>(device: &Device<B>, n: usize, in_off: usize, out_off: usize) -> LaunchConfig {
    let info = device.info();
    let vector = info.features.vector_bytes.max(1) as usize;
    let per_thread = [vector, 4].into_iter().find(|&w| aligned(&[in_off, out_off], w)).unwrap_or(1);
    LaunchConfig::new(blocks(n.div_ceil(per_thread), BLOCK as usize, info.limits.max_grid[0]), BLOCK)
}

/// Rows of the output tile of WGSL's workgroup-tile convolution
/// (conv_tiled.wgsl says why 16); CUDA's tiles are 32 rows high.
const WGSL_TILE_ROWS: usize = 16;

/// Whether a WGSL convolution of `dtype` pixels with a `fw` x `fh` filter
/// runs the workgroup-tile kernel: f32 pixels (u8 words may straddle rows)
/// whose 128 x 16 tile, halo and taps fit the device's workgroup memory
/// (every filter up to 15 x 15 needs at most 17 KiB; WebGPU promises 16,
/// which every filter up to 13 x 13 fits).
pub(super) fn wgsl_tiled<B: Backend>(device: &Device<B>, fw: usize, fh: usize, dtype: DType) -> bool {
    let bytes = 4 * ((128 + fw - 1) * (WGSL_TILE_ROWS + fh - 1) + fw * fh);
    B::LANGUAGE == Language::Wgsl
        && dtype == DType::F32
        && bytes <= device.info().limits.max_shared_mem_per_block as usize
}

/// The convolution launch over a `width` x `height` image of `dtype`
/// pixels: CUDA's kernel covers 128 x 32 pixels per block of 32 x 8
/// threads, WGSL's `tiled` one 128 x 16; WGSL's other takes one pixel (one
/// word of 4 u8 pixels) per invocation in 1D; a host fn ignores the shape.
pub(super) fn conv_config<B: Backend>(
    device: &Device<B>,
    width: usize,
    height: usize,
    dtype: DType,
    tiled: bool,
) -> LaunchConfig {
    let max = device.info().limits.max_grid;
    if B::LANGUAGE == Language::Cuda {
        return LaunchConfig::new((blocks(width, 128, max[0]), blocks(height, 32, max[1])), (32, 8));
    }
    if tiled {
        return LaunchConfig::new((blocks(width, 128, max[0]), blocks(height, WGSL_TILE_ROWS, max[1])), (32, 8));
    }
    let per_unit = if dtype == DType::U8 { 4 } else { 1 };
    LaunchConfig::new(blocks((width * height).div_ceil(per_unit), BLOCK as usize, max[0]), BLOCK)
}
