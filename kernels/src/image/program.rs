//! The image programs: gray and the convolutions, in every language.

use std::sync::Arc;

use kiln_core::{DType, Program};

use super::{Pixel, PixelFormat, cpu};
use crate::launch::{WGSL_ABI, cuda_source, host_fn, program};

/// The gray conversion of `format` images.
pub(super) fn gray_program(format: PixelFormat) -> Arc<Program> {
    let name = format!("kiln_gray_{}", format.name());
    program(&name, || {
        let host = match format {
            PixelFormat::Rgb => host_fn!(cpu::gray::<3>),
            PixelFormat::Rgba => host_fn!(cpu::gray::<4>),
        };
        Program::new(&name)
            .cuda(cuda_source(DType::U8, include_str!("kernel.cu")))
            .wgsl(format!("{WGSL_ABI}{}", include_str!("gray.wgsl")))
            .host(host)
            .define("KERNEL", &name)
            .define("GRAY", 1)
            .define("CHANNELS", format.channels())
    })
}

/// The convolution of `P` images with a `fw` x `fh` filter (the sides are
/// compiled in, so the loops unroll); `tiled` picks WGSL's workgroup-tile
/// kernel (f32 pixels only; see [`super::plan::wgsl_tiled`]).
pub(super) fn conv_program<P: Pixel>(fw: usize, fh: usize, tiled: bool) -> Arc<Program> {
    let variant = if tiled { "tiled_" } else { "" };
    let name = format!("kiln_convolve_{variant}{fw}x{fh}_{}", P::DTYPE);
    program(&name, || {
        let u8_pixels = P::DTYPE == DType::U8;
        let (pix, per_unit, load, pack) = if u8_pixels {
            (
                "u32",
                "4u",
                "f32((src[i / 4u] >> ((i % 4u) * 8u)) & 255u)",
                "var w = old; for (var e = 0u; e < count; e += 1u) { \
                 w = (w & ~(255u << (8u * e))) | (round_u8(vals[e]) << (8u * e)); } return w;",
            )
        } else {
            ("f32", "1u", "src[i]", "return vals[0];")
        };
        Program::new(&name)
            .cuda(cuda_source(P::DTYPE, include_str!("kernel.cu")))
            .wgsl(format!(
                "{WGSL_ABI}{}{}",
                include_str!("conv_common.wgsl"),
                if tiled { include_str!("conv_tiled.wgsl") } else { include_str!("conv.wgsl") }
            ))
            .host(host_fn!(cpu::convolve::<P>))
            .define("KERNEL", &name)
            .define("GRAY", 0)
            .define("FW", fw)
            .define("FH", fh)
            .define("PIXEL_U8", u8::from(u8_pixels))
            .define("PIX", pix)
            .define("PER_UNIT", per_unit)
            .define("PIXEL_LOAD", load)
            .define("PACK_BODY", pack)
    })
}
