//! What cuFFT is told about a kiln [`FftLayout`]: the arguments of
//! `cufftMakePlanMany64`, computed on the host alone.
//!
//! kiln lays a batch out as cuFFT's advanced interface does
//! (`kiln_core::FftSide`), so the conversion is one to one: the lengths,
//! each side's stride, distance and storage dimensions (`inembed`,
//! `onembed`: `rank` entries, in elements of the side's type), the batch,
//! and the transform type from the kind and precision. cuFFT never reads
//! `inembed[0]` and `onembed[0]`; they are given the side's own length
//! along the first axis, which is always a valid value.
//!
//! A real transform whose two sides are packed (unit strides, storage
//! dimensions equal to the sides' own, batches back to back) is planned
//! with cuFFT's basic layout instead (null `inembed` and `onembed`): it
//! describes the same elements, and cuFFT picks faster kernels for it. On
//! the H200 with cuFFT 12.0, 64 real transforms of 2^20 took 0.467 ms in
//! the basic layout and 0.595 ms in the advanced one; the complex and
//! other real cases measured took the same time either way
//! (`benches/results/h200-2026-12-02-y-cufft-layout.txt`). Complex
//! transforms keep the advanced layout, which also serves them in place.

use std::ffi::{c_int, c_longlong};

use cudarc::cufft::sys::cufftType;
use kiln_core::{BackendKind, DType, Error, FftKind, FftLayout, Result};

/// The arguments of `cufftMakePlanMany64` for one layout. Only the first
/// `rank` entries of the arrays are read; the others are 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PlanParams {
    pub(super) rank: c_int,
    pub(super) n: [c_longlong; 3],
    pub(super) inembed: [c_longlong; 3],
    pub(super) istride: c_longlong,
    pub(super) idist: c_longlong,
    pub(super) onembed: [c_longlong; 3],
    pub(super) ostride: c_longlong,
    pub(super) odist: c_longlong,
    pub(super) kind: cufftType,
    pub(super) batch: c_longlong,
    /// Plan with the basic layout (null `inembed` and `onembed`; cuFFT
    /// then ignores the strides and distances, which describe the same).
    pub(super) basic: bool,
}

/// cuFFT's transform type for `kind` in `precision`: C2C, R2C and C2R for
/// f32, Z2Z, D2Z and Z2D for f64; `None` for any other precision.
pub(super) fn transform_type(kind: FftKind, precision: DType) -> Option<cufftType> {
    use cufftType::*;
    Some(match (kind, precision) {
        (FftKind::C2C, DType::F32) => CUFFT_C2C,
        (FftKind::R2C, DType::F32) => CUFFT_R2C,
        (FftKind::C2R, DType::F32) => CUFFT_C2R,
        (FftKind::C2C, DType::F64) => CUFFT_Z2Z,
        (FftKind::R2C, DType::F64) => CUFFT_D2Z,
        (FftKind::C2R, DType::F64) => CUFFT_Z2D,
        _ => return None,
    })
}

/// The plan arguments for `layout`. `Unsupported` for a rank or precision
/// cuFFT has no plan for, or a size past `i64` (a layout that passed
/// [`FftLayout::check`] has neither of the first two).
pub(super) fn plan_params(layout: &FftLayout) -> Result<PlanParams> {
    let refuse = |why: String| Error::unsupported(BackendKind::Cuda, format!("cuFFT plan for {layout}"), why);
    let kind = transform_type(layout.kind, layout.precision)
        .ok_or_else(|| refuse(format!("cuFFT transforms f32 and f64, not {}", layout.precision)))?;
    if !(1..=3).contains(&layout.rank) {
        return Err(refuse(format!("cuFFT transforms ranks 1 to 3, not {}", layout.rank)));
    }
    let wide = |value: usize, name: &str| {
        c_longlong::try_from(value)
            .map_err(|_| refuse(format!("{name} = {value} does not fit cuFFT's 64-bit signed sizes")))
    };
    let (din, dout) = layout.side_dims();
    let mut n = [1; 3];
    let mut inembed = [1; 3];
    let mut onembed = [1; 3];
    for axis in 0..layout.rank {
        n[axis] = wide(layout.dims[axis], "a length")?;
        // cuFFT ignores the first storage dimension: the side's length stands in.
        let (i, o) = if axis == 0 { (din[0], dout[0]) } else { (layout.input.embed[axis], layout.output.embed[axis]) };
        inembed[axis] = wide(i, "the input's embedding")?;
        onembed[axis] = wide(o, "the output's embedding")?;
    }
    Ok(PlanParams {
        rank: layout.rank as c_int,
        n,
        inembed,
        istride: wide(layout.input.stride, "the input's stride")?,
        idist: wide(layout.input.dist, "the input's distance")?,
        onembed,
        ostride: wide(layout.output.stride, "the output's stride")?,
        odist: wide(layout.output.dist, "the output's distance")?,
        kind,
        batch: wide(layout.batch, "the batch")?,
        basic: layout.kind != FftKind::C2C && packed(layout),
    })
}

/// Whether both sides of `layout` are packed: unit strides, storage
/// dimensions equal to the side's own dimensions, and each transform right
/// after the one before (cuFFT's basic layout for out-of-place data).
fn packed(layout: &FftLayout) -> bool {
    let (din, dout) = layout.side_dims();
    let rank = layout.rank;
    [(&layout.input, din), (&layout.output, dout)].into_iter().all(|(side, dims)| {
        side.stride == 1 && side.embed[1..rank] == dims[1..rank] && side.dist == dims[..rank].iter().product::<usize>()
    })
}

#[cfg(test)]
mod tests {
    use kiln_core::FftSide;

    use super::*;

    fn side(stride: usize, dist: usize, embed: [usize; 3]) -> FftSide {
        FftSide { stride, dist, embed }
    }

    #[test]
    fn each_kind_and_precision_has_its_transform_type() {
        use cufftType::*;
        let table = [
            (FftKind::C2C, DType::F32, CUFFT_C2C),
            (FftKind::R2C, DType::F32, CUFFT_R2C),
            (FftKind::C2R, DType::F32, CUFFT_C2R),
            (FftKind::C2C, DType::F64, CUFFT_Z2Z),
            (FftKind::R2C, DType::F64, CUFFT_D2Z),
            (FftKind::C2R, DType::F64, CUFFT_Z2D),
        ];
        for (kind, precision, want) in table {
            assert_eq!(transform_type(kind, precision), Some(want), "{kind:?} {precision}");
        }
        for precision in [DType::F16, DType::BF16, DType::C64, DType::C128] {
            assert_eq!(transform_type(FftKind::C2C, precision), None, "{precision}");
        }
    }

    #[test]
    fn a_strided_complex_batch_keeps_its_strides_distances_and_embeddings() {
        // Three 4x8 transforms; the output padded to rows of 10, every other element.
        let layout = FftLayout {
            kind: FftKind::C2C,
            precision: DType::F32,
            rank: 2,
            dims: [4, 8, 1],
            batch: 3,
            input: side(1, 32, [4, 8, 1]),
            output: side(2, 80, [99, 10, 1]),
        };
        layout.check().unwrap();
        let p = plan_params(&layout).unwrap();
        assert_eq!(
            p,
            PlanParams {
                rank: 2,
                n: [4, 8, 1],
                inembed: [4, 8, 1],
                istride: 1,
                idist: 32,
                // The first storage dimension is never read: the length stands in.
                onembed: [4, 10, 1],
                ostride: 2,
                odist: 80,
                kind: cufftType::CUFFT_C2C,
                batch: 3,
                basic: false,
            }
        );
    }

    #[test]
    fn a_real_transform_embeds_its_complex_side_in_half_spectra() {
        // Two 1-D transforms of 8 reals into 5 complex values each.
        let r2c = FftLayout {
            kind: FftKind::R2C,
            precision: DType::F64,
            rank: 1,
            dims: [8, 1, 1],
            batch: 2,
            input: side(1, 8, [8, 1, 1]),
            output: side(1, 5, [5, 1, 1]),
        };
        r2c.check().unwrap();
        let p = plan_params(&r2c).unwrap();
        assert_eq!((p.rank, p.n[0], p.inembed[0], p.onembed[0]), (1, 8, 8, 5));
        assert_eq!((p.idist, p.odist, p.batch, p.kind), (8, 5, 2, cufftType::CUFFT_D2Z));
        assert!(p.basic, "packed real transforms take the basic layout");
        // Padded output rows: the advanced layout.
        let padded = FftLayout { output: side(1, 6, [6, 1, 1]), ..r2c };
        assert!(!plan_params(&padded).unwrap().basic);
        // Complex transforms keep the advanced layout, packed or not.
        let c2c = FftLayout { kind: FftKind::C2C, output: side(1, 8, [8, 1, 1]), ..r2c };
        assert!(!plan_params(&c2c).unwrap().basic);

        // A 2x3x8 complex-to-real transform: its input is 2x3x5 complex
        // values, stored in rows of 6 and planes of 4 rows.
        let c2r = FftLayout {
            kind: FftKind::C2R,
            precision: DType::F32,
            rank: 3,
            dims: [2, 3, 8],
            batch: 1,
            input: side(1, 48, [0, 4, 6]),
            output: side(1, 48, [2, 3, 8]),
        };
        c2r.check().unwrap();
        let p = plan_params(&c2r).unwrap();
        assert_eq!((p.rank, p.n, p.kind), (3, [2, 3, 8], cufftType::CUFFT_C2R));
        assert_eq!((p.inembed, p.onembed), ([2, 4, 6], [2, 3, 8]));
        assert!(!p.basic, "rows of 6 are not packed");
        let packed = FftLayout { input: side(1, 30, [2, 3, 5]), ..c2r };
        assert!(plan_params(&packed).unwrap().basic);
    }

    #[test]
    fn layouts_cufft_cannot_plan_are_refused_as_unsupported() {
        let mut layout = FftLayout {
            kind: FftKind::C2C,
            precision: DType::F16,
            rank: 1,
            dims: [8, 1, 1],
            batch: 1,
            input: side(1, 8, [8, 1, 1]),
            output: side(1, 8, [8, 1, 1]),
        };
        let e = plan_params(&layout).unwrap_err();
        assert!(matches!(e, Error::Unsupported { .. }) && e.to_string().contains("f16"), "{e}");
        layout.precision = DType::F32;
        layout.rank = 4;
        assert!(plan_params(&layout).unwrap_err().to_string().contains("ranks 1 to 3"));
        layout.rank = 1;
        layout.input.dist = usize::MAX;
        assert!(plan_params(&layout).unwrap_err().to_string().contains("64-bit"));
    }
}
