//! Which of kiln's matmul kernels runs, and its launch shape.

use kiln_core::{Backend, DType, Device, DeviceInfo, Dim3, Language, LaunchConfig, MatrixUnits, Precision};

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

/// Which of mma.cu's kernels (its MMA define), with the output tile and
/// the dynamic shared memory it is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mma {
    F16 = 0,
    Bf16 = 1,
    Tf32 = 2,
    F64 = 3,
}

impl Mma {
    /// The kernel for a product of `dtype` under `precision` on `units`:
    /// f16 and bf16 always (products exact, sums in f32, as `Exact` says),
    /// f32 only where the mode allows TF32 rounding (a bf16 mode's bound is
    /// looser still), f64 always (exact fp64 FMA).
    fn of(dtype: DType, precision: Precision, units: MatrixUnits) -> Option<Mma> {
        match dtype {
            DType::F16 if units.half => Some(Mma::F16),
            DType::BF16 if units.half => Some(Mma::Bf16),
            DType::F32 if units.tf32 && precision != Precision::Exact => Some(Mma::Tf32),
            DType::F64 if units.f64 => Some(Mma::F64),
            _ => None,
        }
    }

    /// The name programs carry ("tf32").
    pub(super) const fn name(self) -> &'static str {
        match self {
            Mma::F16 => "f16",
            Mma::Bf16 => "bf16",
            Mma::Tf32 => "tf32",
            Mma::F64 => "f64",
        }
    }

    /// Columns of C a block computes (rows: 128).
    const fn tile_n(self) -> usize {
        if matches!(self, Mma::F64) { 128 } else { 256 }
    }

    /// Bytes of shared memory a block takes: mma.cu's KILN_*_SMEM with its
    /// default tile depths (BK 64, 32 and 16, three stages each): the
    /// padded A tile and the B tile of every stage.
    const fn shared_bytes(self) -> u32 {
        let (bk, a_row, b_row, size) = match self {
            Mma::F16 | Mma::Bf16 => (64, 64 + 8, 256 + 8, 2),
            Mma::Tf32 => (32, 32 + 4, 256 + 8, 4),
            Mma::F64 => (16, 16 + 8, 128, 8),
        };
        3 * (128 * a_row + bk * b_row) * size
    }

    /// Elements in 16 bytes of the input: A's and B's leading dimensions
    /// and batch strides are multiples of it for 16-byte loads.
    const fn per_16_bytes(self) -> usize {
        match self {
            Mma::F16 | Mma::Bf16 => 8,
            Mma::Tf32 => 4,
            Mma::F64 => 2,
        }
    }
}

/// A kernel of kernel.cu (by its ALGO) or of mma.cu (by its MMA).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kernel {
    /// kernel.cu's (and kernel.wgsl's, and the CPU's) kernel.
    Own(Algo),
    /// CUDA's tensor-core kernel, on the device's matrix units.
    Mma(Mma),
    /// WGSL's f16 kernel on cooperative matrices (coop.wgsl), where the
    /// device has them (`MatrixUnits::half` on wgpu).
    Coop,
}

/// The kernel of one product and how it is launched.
pub(super) struct Plan {
    pub kernel: Kernel,
    /// Whether the kernel takes 16-byte loads.
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
    let MatmulShape { m, n, k, batch, a, b, c, precision } = *shape;
    let info = device.info();
    let max = info.limits.max_grid;
    if let Some(plan) = (!naive && B::LANGUAGE == Language::Cuda)
        .then(|| Mma::of(T::DTYPE, precision, info.features.matrix_units))
        .flatten()
        .and_then(|mma| mma_plan(mma, info, shape, offsets))
    {
        return plan;
    }
    if let Some(plan) = (!naive).then(|| coop_plan(B::LANGUAGE, T::DTYPE, info, shape)).flatten() {
        return plan;
    }
    let depth = batch.clamp(1, max[2] as usize) as u32;
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
    // Kernels stride over the batch when it has more products than the grid's z (`depth`).
    let config = LaunchConfig::new((blocks(n, tile, max[0]), blocks(m, tile, max[1]), depth), block);
    Plan { kernel: Kernel::Own(algo), vec, config }
}

/// The cooperative-matrix plan for a product of `dtype` in `language`: f16
/// in WGSL on a device with matrix units for it, 64 x 64 tiles of c a
/// workgroup of four 32-invocation subgroups (coop.wgsl), the batch along
/// z; `None` otherwise.
fn coop_plan(language: Language, dtype: DType, info: &DeviceInfo, shape: &MatmulShape) -> Option<Plan> {
    if language != Language::Wgsl || dtype != DType::F16 || !info.features.matrix_units.half {
        return None;
    }
    let max = info.limits.max_grid;
    let depth = shape.batch.clamp(1, max[2] as usize) as u32;
    let grid = (blocks(shape.n, 64, max[0]), blocks(shape.m, 64, max[1]), depth);
    Some(Plan { kernel: Kernel::Coop, vec: false, config: LaunchConfig::new(grid, 128) })
}

/// The tensor-core plan for `shape`: one block per 128-row output tile
/// (`x`, every tile in one launch), the batch along `y`; `None` where the
/// tiles outnumber the grid or the device's shared memory is short of the
/// kernel's, so the tiled kernel runs instead.
fn mma_plan(mma: Mma, info: &DeviceInfo, shape: &MatmulShape, offsets: &[usize; 3]) -> Option<Plan> {
    let MatmulShape { m, n, batch, a, b, c, .. } = *shape;
    let limits = &info.limits;
    let tiles = m.div_ceil(128).checked_mul(n.div_ceil(mma.tile_n()))?.max(1);
    let bytes = mma.shared_bytes();
    if tiles > limits.max_grid[0] as usize || bytes > limits.max_shared_mem_per_block {
        return None;
    }
    let q = mma.per_16_bytes();
    let vec = !a.transposed
        && !b.transposed
        && [a.ld, b.ld, a.stride, b.stride].iter().all(|x| x % q == 0)
        && [c.ld, c.stride].iter().all(|x| x % 2 == 0)
        && aligned(offsets, 16);
    let depth = batch.clamp(1, limits.max_grid[1] as usize) as u32;
    let config = LaunchConfig::new((tiles as u32, depth), 256).with_shared_mem(bytes);
    Some(Plan { kernel: Kernel::Mma(mma), vec, config })
}

#[cfg(test)]
mod tests {
    use kiln_core::{Device, MatmulShape};
    use kiln_cpu::Cpu;

    use super::*;

    /// A device like the H100 as far as the plan reads it: sm_90's matrix
    /// units, 227 KiB of shared memory a block, CUDA's grid.
    fn hopper() -> DeviceInfo {
        let mut info = Device::<Cpu>::open(0).unwrap().info().clone();
        info.features.matrix_units = MatrixUnits::ALL;
        info.limits.max_shared_mem_per_block = 227 * 1024;
        info.limits.max_grid = [i32::MAX as u32, 65535, 65535];
        info
    }

    #[test]
    fn tensor_cores_serve_the_modes_they_are_exact_enough_for() {
        let all = MatrixUnits::ALL;
        assert_eq!(Mma::of(DType::F32, Precision::Exact, all), None);
        assert_eq!(Mma::of(DType::F32, Precision::Tf32, all), Some(Mma::Tf32));
        assert_eq!(Mma::of(DType::F32, Precision::Bf16, all), Some(Mma::Tf32));
        assert_eq!(Mma::of(DType::F16, Precision::Exact, all), Some(Mma::F16));
        assert_eq!(Mma::of(DType::BF16, Precision::Exact, all), Some(Mma::Bf16));
        assert_eq!(Mma::of(DType::F64, Precision::Exact, all), Some(Mma::F64));
        assert_eq!(Mma::of(DType::I32, Precision::Exact, all), None);
        let none = MatrixUnits::default();
        for dtype in [DType::F16, DType::BF16, DType::F32, DType::F64] {
            assert_eq!(Mma::of(dtype, Precision::Tf32, none), None, "{dtype}");
        }
        let no_tf32 = MatrixUnits { tf32: false, ..all };
        assert_eq!(Mma::of(DType::F32, Precision::Tf32, no_tf32), None);
    }

    /// The host's figures are mma.cu's: its default tile depths and stages,
    /// and the shared memory they take (worked out by hand from its
    /// KILN_*_SMEM definitions).
    #[test]
    fn shared_memory_is_the_kernels_own() {
        let source = include_str!("mma.cu");
        for define in [
            "#define KILN_HM_BK 64",
            "#define KILN_TM_BK 32",
            "#define KILN_DM_BK 16",
            "#define KILN_HM_STAGES 3",
            "#define KILN_TM_STAGES 3",
            "#define KILN_DM_STAGES 3",
            "#define KILN_HM_BN 256",
            "#define KILN_TM_BN 256",
            "#define KILN_DM_BN 128",
        ] {
            assert!(source.contains(define), "mma.cu lacks `{define}`");
        }
        // 3 stages x (128 x (64 + 8) + 64 x (256 + 8)) halves, and so on.
        assert_eq!(Mma::F16.shared_bytes(), 156_672);
        assert_eq!(Mma::Bf16.shared_bytes(), 156_672);
        assert_eq!(Mma::Tf32.shared_bytes(), 156_672);
        assert_eq!(Mma::F64.shared_bytes(), 122_880);
    }

    /// f16 products in WGSL take the cooperative-matrix kernel where the
    /// device has matrix units for them, nothing else does.
    #[test]
    fn cooperative_matrices_serve_f16_in_wgsl_only() {
        let mut info = Device::<Cpu>::open(0).unwrap().info().clone();
        info.limits.max_grid = [65535; 3];
        let shape = MatmulShape::new(100, 130, 7).batch(3);
        assert!(coop_plan(Language::Wgsl, DType::F16, &info, &shape).is_none(), "no matrix units");
        info.features.matrix_units.half = true;
        let plan = coop_plan(Language::Wgsl, DType::F16, &info, &shape).unwrap();
        assert_eq!(plan.kernel, Kernel::Coop);
        let c = plan.config;
        assert_eq!(((c.grid.x, c.grid.y, c.grid.z), (c.block.x, c.block.y, c.block.z)), ((3, 2, 3), (128, 1, 1)));
        for (language, dtype) in
            [(Language::Wgsl, DType::F32), (Language::Cuda, DType::F16), (Language::Wgsl, DType::BF16)]
        {
            assert!(coop_plan(language, dtype, &info, &shape).is_none(), "{language:?} {dtype}");
        }
    }

    #[test]
    fn the_tensor_core_plan_covers_every_tile_and_product() {
        let info = hopper();
        let dense = MatmulShape::new(300, 600, 72).batch(70_000);
        let plan = mma_plan(Mma::F16, &info, &dense, &[0, 0, 0]).unwrap();
        assert_eq!(plan.kernel, Kernel::Mma(Mma::F16));
        // 3 tile rows of 128 and 3 tile columns of 256; the batch strides past the grid's y.
        assert_eq!((plan.config.grid.x, plan.config.grid.y, plan.config.grid.z), (9, 65535, 1));
        assert_eq!(plan.config.shared_mem_bytes, 156_672);
        assert!(plan.vec);
        let f64_plan = mma_plan(Mma::F64, &info, &dense, &[0, 0, 0]).unwrap();
        assert_eq!(f64_plan.config.grid.x, 3 * 5);
        // Element loads for transposed operands, odd leading dimensions or misaligned views.
        let t = MatmulShape::new(300, 600, 72).transpose_a();
        assert!(!mma_plan(Mma::F16, &info, &t, &[0, 0, 0]).unwrap().vec);
        assert!(!mma_plan(Mma::F16, &info, &MatmulShape::new(300, 600, 72), &[2, 0, 0]).unwrap().vec);
        assert!(!mma_plan(Mma::F16, &info, &MatmulShape::new(300, 601, 72), &[0, 0, 0]).unwrap().vec);
        assert!(mma_plan(Mma::Tf32, &info, &MatmulShape::new(300, 604, 72), &[0, 0, 0]).unwrap().vec);
        // Shared memory short of the kernel's (sm_86's 99 KiB): the SIMT kernels run instead.
        let mut small = info.clone();
        small.limits.max_shared_mem_per_block = 99 * 1024;
        assert!(mma_plan(Mma::F16, &small, &dense, &[0, 0, 0]).is_none());
    }
}
