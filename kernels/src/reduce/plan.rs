//! How many partials a fold's first pass makes, from the device's compute
//! units and vector width.

use kiln_core::{Backend, DType, Device, DeviceInfo, Language};

use crate::launch::BLOCK;

/// Blocks per compute unit of the first pass: on CUDA enough 16-byte loads
/// in flight to cover memory latency (4 x 256 threads x 4 loads x 16 B = 64
/// KiB per SM) while every block of the grid is resident at once.
const BLOCKS_PER_UNIT: usize = 4;
/// Accesses in flight per thread (the CUDA kernel's UNROLL define).
pub(super) const UNROLL: usize = 4;
/// Most partials of a first pass on a device that does not report its
/// compute units (one block folds them after): 1024 workgroups of 256 fill
/// a GPU of 128 units at 2048 resident invocations each.
const MOST_PARTIALS: usize = 1024;

/// How many blocks the first pass of a fold over `n` elements of `dtype`
/// uses; 1 means one launch straight into the output.
///
/// A thread keeps UNROLL accesses of the device's vector width in flight (16
/// bytes on CUDA; one 4-byte element on WGSL, so 4 elements per invocation);
/// the grid is [`CUDA_BLOCKS_PER_UNIT`] per multiprocessor on CUDA, or as
/// [`first_pass_blocks`] elsewhere. A host fn folds in one launch.
pub(crate) fn partial_blocks<B: Backend>(device: &Device<B>, n: usize, dtype: DType) -> usize {
    let units = device.info().compute_units as usize;
    if B::LANGUAGE != Language::Cuda || units == 0 {
        return first_pass_blocks(device, n, dtype);
    }
    n.div_ceil(per_block(device.info(), dtype)).clamp(1, units * CUDA_BLOCKS_PER_UNIT)
}

/// How many blocks the first pass of a dot or an arg-reduction over `n`
/// elements of `dtype` uses: [`BLOCKS_PER_UNIT`] per compute unit, or
/// [`MOST_PARTIALS`] where the device does not report its units; 1 on a
/// host fn, which folds in one launch.
pub(crate) fn first_pass_blocks<B: Backend>(device: &Device<B>, n: usize, dtype: DType) -> usize {
    if B::LANGUAGE.runs_whole_launch() {
        return 1;
    }
    let info = device.info();
    n.div_ceil(per_block(info, dtype)).clamp(1, resident_blocks(info))
}

/// Elements one block of a first pass takes per step.
fn per_block(info: &DeviceInfo, dtype: DType) -> usize {
    let per_access = (info.features.vector_bytes as usize / dtype.size()).max(1);
    BLOCK as usize * UNROLL * per_access
}

/// Blocks per multiprocessor of the CUDA fold's first pass, all resident:
/// its kernel is bounded to 40 registers for six (kernel.cu's
/// FOLD_MIN_BLOCKS; the dot's would spill there and keeps four). Measured on the H200 at 64 Mi f32, with four blocks
/// (50% occupancy) the fold read 85% of the DRAM peak where CUB's
/// DeviceReduce, at 97% occupancy, read 91%; with six, 4051 GB/s against
/// 3939 (256 Mi: 4474 against 4311).
pub(crate) const CUDA_BLOCKS_PER_UNIT: usize = 6;

/// The most blocks a one-pass fold's grid needs: [`BLOCKS_PER_UNIT`] per
/// compute unit, or [`MOST_PARTIALS`] where the device does not report its units.
pub(crate) fn resident_blocks(info: &DeviceInfo) -> usize {
    match info.compute_units as usize {
        0 => MOST_PARTIALS,
        units => units * BLOCKS_PER_UNIT,
    }
}
