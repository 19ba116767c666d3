//! The reduction programs (fold and dot), in every language, and the
//! pieces the other reductions' programs share.

use std::sync::Arc;

use kiln_core::{DType, Program};

use super::plan::{CUDA_BLOCKS_PER_UNIT, UNROLL};
use super::{ReduceOp, cpu};
use crate::Number;
use crate::code::Code;
use crate::launch::{Access, cuda_source, program, wgsl_source};

/// The WGSL definition of `is_nan(v: T) -> bool` for `dtype`. WGSL lets an
/// implementation assume float comparisons never see NaN, and naga compiles
/// `v != v` to an ordered comparison, false for NaN: f32 tests the bits;
/// f64, which naga cannot bitcast to two words, uses `!(v == v)` (an
/// ordered equality, false for NaN, negated), checked on lavapipe.
pub(crate) fn wgsl_is_nan(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => "fn is_nan(v: T) -> bool { return (bitcast<u32>(v) & 0x7fffffffu) > 0x7f800000u; }\n",
        DType::F64 => "fn is_nan(v: T) -> bool { return !(v == v); }\n",
        _ => "fn is_nan(v: T) -> bool { return false; }\n",
    }
}

/// The CUDA source of the reductions, with `T` bound to `dtype` and UNROLL
/// the value the grid is sized for.
pub(crate) fn reduce_cuda(dtype: DType) -> String {
    cuda_source(
        dtype,
        &format!(
            "#define UNROLL {UNROLL}\n#define FOLD_MIN_BLOCKS {CUDA_BLOCKS_PER_UNIT}\n{}",
            include_str!("kernel.cu")
        ),
    )
}

pub(super) fn fold_program<T: Number>(op: ReduceOp) -> Arc<Program> {
    let name = format!("kiln_reduce_{op}_{}", T::DTYPE);
    program(&name, || {
        let body = format!("{}{}", wgsl_is_nan(T::DTYPE), include_str!("kernel.wgsl"));
        Program::new(&name)
            .cuda(reduce_cuda(T::DTYPE))
            .wgsl(wgsl_source(T::DTYPE, &[("src", Access::Read), ("dst", Access::ReadWrite)], &body))
            .host(op.host::<T>())
            .define("KERNEL", &name)
            .define("MODE", 0)
            .define("OP", op.code())
            .define("FOLD", op.wgsl())
            .define("TERM", "src[i]")
            .define("IDENTITY", "params.identity")
            .define("PARAMS_FIELDS", "identity: T, n: u32,")
    })
}

pub(super) fn dot_program<T: Number>() -> Arc<Program> {
    let name = format!("kiln_dot_{}", T::DTYPE);
    program(&name, || {
        let buffers = [("src", Access::Read), ("src2", Access::Read), ("dst", Access::ReadWrite)];
        let body = format!("{}{}", wgsl_is_nan(T::DTYPE), include_str!("kernel.wgsl"));
        Program::new(&name)
            .cuda(reduce_cuda(T::DTYPE))
            .wgsl(wgsl_source(T::DTYPE, &buffers, &body))
            .host(cpu::dot::<T>)
            .define("KERNEL", &name)
            .define("MODE", 1)
            .define("OP", 0)
            .define("FOLD", "a + b")
            .define("TERM", "src[i] * src2[i]")
            .define("IDENTITY", "T(0)")
            .define("PARAMS_FIELDS", "n: u32,")
    })
}
