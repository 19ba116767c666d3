//! The matmul programs: one per kernel, dtype and load width, in every language.

use std::sync::Arc;

use kiln_core::{Element, Program};

use super::plan::{Algo, Kernel, Mma};
use super::{MatmulElement, cpu};
use crate::launch::{WGSL_ABI, cuda_source, host_fn, program, wgsl_enables};

/// The parameters and bindings of the WGSL kernels (kernel.wgsl's, coop.wgsl's).
const OPERANDS: &str = include_str!("operands.wgsl");

/// The program of `kernel` on `T`, with 16-byte loads when `vec`.
///
/// Programs are shared by every backend in the process, so everything a
/// backend chooses differently (the kernel, the vector loads) is in the name.
pub(super) fn matmul_program<T: MatmulElement>(kernel: Kernel, vec: bool) -> Arc<Program> {
    let algo = match kernel {
        Kernel::Own(algo) => algo,
        Kernel::Mma(mma) => return mma_program::<T>(mma, vec),
        Kernel::Coop => return coop_program(),
    };
    let name = format!("kiln_matmul_{}_{}{}", algo.name(), T::DTYPE, if vec { "_vec4" } else { "" });
    program(&name, || {
        let (acc, out) = T::CUDA_TYPES;
        let wgsl_in = T::DTYPE.wgsl_name().unwrap_or("unsupported_type");
        let wgsl_acc = <T::Acc as Element>::DTYPE.wgsl_name().unwrap_or("unsupported_type");
        Program::new(&name)
            .cuda(cuda_source(T::DTYPE, include_str!("kernel.cu")))
            .wgsl(format!("{}{WGSL_ABI}{OPERANDS}{}", wgsl_enables(T::DTYPE), include_str!("kernel.wgsl")))
            .host(host_fn!(cpu::matmul::<T>))
            .define("KERNEL", &name)
            .define(if algo == Algo::Naive { "NAIVE" } else { "TILED" }, &name)
            .define("ALGO", algo as u8)
            .define("VEC", u8::from(vec))
            .define("ACC", acc)
            .define("OUT", out)
            .define("IN", wgsl_in)
            .define("ACCUM", wgsl_acc)
    })
}

/// The cooperative-matrix program of f16 products (WGSL only: the plan
/// takes it on wgpu devices with matrix units).
fn coop_program() -> Arc<Program> {
    let name = "kiln_matmul_coop_f16";
    program(name, || {
        Program::new(name)
            .wgsl(format!(
                "enable f16;\nenable wgpu_cooperative_matrix;\n{WGSL_ABI}{OPERANDS}{}",
                include_str!("coop.wgsl")
            ))
            .define("KERNEL", name)
            .define("COOP", name)
            .define("IN", "f16")
            .define("ACCUM", "f32")
    })
}

/// The tensor-core program `mma` on `T` (CUDA only: the plan takes it on
/// CUDA devices with matrix units), with 16-byte loads when `vec`.
fn mma_program<T: MatmulElement>(mma: Mma, vec: bool) -> Arc<Program> {
    let name = format!("kiln_matmul_mma_{}_{}{}", mma.name(), T::DTYPE, if vec { "_vec" } else { "" });
    program(&name, || {
        Program::new(&name)
            .cuda(cuda_source(T::DTYPE, include_str!("mma.cu")))
            .define("KERNEL", &name)
            .define("MMA", mma as u8)
            .define("VEC", u8::from(vec))
            .define("OUT", T::CUDA_TYPES.1)
    })
}
