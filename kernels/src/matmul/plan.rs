//! Which of kiln's matmul kernels runs, and its launch shape.

use kiln_core::{Backend, DType, Device, Dim3, Language, LaunchConfig};

use super::{MatmulElement, MatmulShape};
use crate::launch::{aligned, blocks};

/// A kernel of the sources (their ALGO define).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Algo {
    /// One thread per output element.
    Naive = 0,
    /// 64 x 64 tiles staged through shared (workgroup) memory.
    Tiled = 1,
    /// CUDA's register-blocked f32 kernel: 128 x 128 tiles, 8 x 8 outputs
    /// per thread, double-buffered shared memory.
    Sgemm = 2,
}

impl Algo {
    /// The name programs carry ("tiled").
    pub(super) const fn name(self) -> &'static str {
        match self {
            Algo::Naive => "naive",
            Algo::Tiled => "tiled",
            Algo::Sgemm => "sgemm",
        }
    }
}

/// The kernel of one product and how it is launched.
pub(super) struct Plan {
    pub algo: Algo,
    /// Whether the sgemm takes 16-byte loads.
    pub vec: bool,
    pub config: LaunchConfig,
}

/// Whether the source in `language` has the sgemm kernel: only CUDA C++'s does.
fn has_sgemm(language: Language) -> bool {
    matches!(language, Language::Cuda)
}

/// The block the tiled kernel of `language` is written for: WGSL's 64 x 64
/// tile is computed by 16 x 16 invocations, CUDA's by 256 threads in 1D.
fn tiled_block(language: Language) -> Dim3 {
    match language {
        Language::Wgsl => LaunchConfig::new(1, (16, 16)).block,
        _ => LaunchConfig::new(1, 256).block,
    }
}

/// The plan for `shape` on `device` (the naive kernel when `naive`), with
/// `offsets` the byte offsets of a, b and c.
pub(super) fn plan<B: Backend, T: MatmulElement>(
    device: &Device<B>,
    naive: bool,
    shape: &MatmulShape,
    offsets: &[usize; 3],
) -> Plan {
    let MatmulShape { m, n, k, batch, a, b, c, .. } = *shape;
    let info = device.info();
    let max = info.limits.max_grid;
    let sgemm = !naive && T::DTYPE == DType::F32 && has_sgemm(B::LANGUAGE);
    // 16-byte loads where the device takes them, neither factor is read
    // transposed, and every row, matrix and pointer is 16-byte aligned.
    let fours = [k, n, a.ld, b.ld, c.ld, a.stride, b.stride, c.stride].iter().all(|x| x % 4 == 0);
    let vec =
        sgemm && info.features.vector_bytes >= 16 && !a.transposed && !b.transposed && fours && aligned(offsets, 16);
    let (algo, tile, block) = match (naive, sgemm) {
        (true, _) => (Algo::Naive, 16, LaunchConfig::new(1, (16, 16)).block),
        (false, true) => (Algo::Sgemm, 128, LaunchConfig::new(1, 256).block),
        (false, false) => (Algo::Tiled, 64, tiled_block(B::LANGUAGE)),
    };
    // Kernels stride over the batch when it has more products than the grid's z.
    let depth = batch.clamp(1, max[2] as usize) as u32;
    let config = LaunchConfig::new((blocks(n, tile, max[0]), blocks(m, tile, max[1]), depth), block);
    Plan { algo, vec, config }
}
