//! Which passes a sort runs on a device, and the tiles of each source.

use kiln_core::{Backend, Device, Language, Program};

use super::onesweep;

/// Keys per tile of the three-phase CUDA kernels (256 threads x 16 keys).
const CUDA_TILE: usize = 4096;
/// Keys per tile of the three-phase WGSL kernels (one per invocation).
const WGSL_TILE: usize = 256;
/// Keys per tile of the CPU's host fns.
pub(crate) const CPU_TILE: usize = 4096;
/// Threads per block of every three-phase kernel.
pub(super) const THREADS: u32 = 256;

/// Whether `device` sorts `n` keys with onesweep (`pass`, its pass
/// program) rather than three kernels per pass: onesweep's look-back spins
/// on earlier blocks, which needs forward progress between blocks; its
/// status words count at most [`onesweep::MAX_KEYS`] keys; and it is
/// written only in the languages `pass` has (CUDA C++).
pub(super) fn runs_onesweep<B: Backend>(device: &Device<B>, n: usize, pass: &Program) -> bool {
    device.info().features.forward_progress && n <= onesweep::MAX_KEYS && pass.has(B::LANGUAGE)
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
