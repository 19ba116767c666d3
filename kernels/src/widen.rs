//! 16-bit floats (`f16`, `bf16`) widened to `f32` and rounded back: the
//! conversions that let the 16-bit reductions and scans run on kiln's
//! `f32` kernels, which accumulate in `f32` (see [`is_half`]), and every
//! pattern run on a 16-bit type its kernel language lacks (bf16 in WGSL,
//! converted as bits: see [`as_bits`]).
//!
//! Widening is exact; rounding back is to nearest, ties to even, one
//! rounding of the `f32` value (NaN stays NaN, values past the type's range
//! become infinities), on every backend. One kernel a direction and dtype,
//! grid-stride over the elements: memory-bound at 6 bytes moved per element.

use std::sync::Arc;

use kiln_core::{
    Args, Backend, Buffer, BufferView, BufferViewMut, DType, Element, Error, Language, LaunchConfig, Program, Result,
    Stream,
};

use crate::launch::{BLOCK, blocks, check_dtype, cuda_source, host_fn, index_width, program, wgsl_enables, wgsl_type};

/// Whether `dtype` is one of the 16-bit floats whose reductions and scans
/// accumulate in `f32`.
pub(crate) fn is_half(dtype: DType) -> bool {
    matches!(dtype, DType::F16 | DType::BF16)
}

/// Whether `B`'s kernel language has no type for `dtype`, a 16-bit float,
/// so that its conversions work on the elements' bits in 32-bit words and
/// every pattern on it computes through `f32` (bf16 in WGSL).
pub(crate) fn as_bits<B: Backend>(dtype: DType) -> bool {
    is_half(dtype) && B::LANGUAGE == Language::Wgsl && dtype.wgsl_name().is_none()
}

/// The value of the 16-bit float `dtype`'s `bits` (`f16` or `bf16`), as an `f32` (exact).
pub(crate) fn half_to_f32(dtype: DType, bits: u16) -> f32 {
    match dtype {
        DType::BF16 => half::bf16::from_bits(bits).to_f32(),
        _ => half::f16::from_bits(bits).to_f32(),
    }
}

/// `v` rounded to the 16-bit float `dtype` (nearest, ties to even), as its bits.
pub(crate) fn half_bits(dtype: DType, v: f32) -> u16 {
    match dtype {
        DType::BF16 => half::bf16::from_f32(v).to_bits(),
        _ => half::f16::from_f32(v).to_bits(),
    }
}

/// The value of `v`, a 16-bit float, as an `f32` (exact).
pub(crate) fn to_f32<T: Element>(v: T) -> f32 {
    let b = bytemuck::bytes_of(&v);
    half_to_f32(T::DTYPE, u16::from_le_bytes([b[0], b[1]]))
}

/// [`check_dtype`] for a pattern that computes on `dtype` through these
/// conversions: bf16 is converted as bits where the kernel language has no
/// bf16 type, so it needs no device support there.
pub(crate) fn check_widened<B: Backend>(stream: &Stream<B>, dtype: DType, what: &str) -> Result<()> {
    if as_bits::<B>(dtype) { Ok(()) } else { check_dtype(stream, dtype, what) }
}

/// The conversion between `half` (a 16-bit float dtype) and `f32`: to `f32`
/// when `wide` is true, else from it.
fn convert_program<T: Element>(wide: bool) -> Arc<Program> {
    let half = T::DTYPE;
    let name = format!("kiln_{}_{half}", if wide { "widen" } else { "narrow" });
    program(&name, || {
        // bf16 (no WGSL type) as bits: both sides as u32 words.
        let bits = half.wgsl_name().is_none();
        let (src, dst) = match (bits, wide) {
            (true, _) => ("u32", "u32"),
            (false, true) => (wgsl_type(half), "f32"),
            (false, false) => ("f32", wgsl_type(half)),
        };
        let body = match (bits, wide) {
            (true, true) => include_str!("widen_bits.wgsl"),
            (true, false) => include_str!("narrow_bits.wgsl"),
            (false, _) => include_str!("widen.wgsl"),
        };
        let wgsl = format!(
            "{}@group(0) @binding(0) var<storage, read> src: array<{src}>;\n\
             @group(0) @binding(1) var<storage, read_write> dst: array<{dst}>;\n\
             struct Params {{ n: u32, }}\n{}\n{body}",
            if bits { "" } else { wgsl_enables(half) },
            crate::launch::WGSL_ABI,
        );
        let host = if wide { host_fn!(widen_host::<T>) } else { host_fn!(narrow_host::<T>) };
        let from_float = if half == DType::BF16 { "kiln_bf16_from_float" } else { "kiln_half_from_float" };
        Program::new(&name)
            .cuda(cuda_source(half, include_str!("widen.cu")))
            .wgsl(wgsl)
            .host(host)
            .define("KERNEL", &name)
            .define("WIDEN", u8::from(wide))
            .define("FROM_FLOAT", from_float)
            .define("DST", dst)
    })
}

/// The 16-bit pattern of each element of `x` (of a 16-bit dtype).
fn bits<T: Element>(x: &[T]) -> Result<&[u16]> {
    bytemuck::try_cast_slice(x).map_err(|_| not_16_bit::<T>())
}

/// The 16-bit pattern of each element of `x` (of a 16-bit dtype), writable.
pub(crate) fn bits_mut<T: Element>(x: &mut [T]) -> Result<&mut [u16]> {
    bytemuck::try_cast_slice_mut(x).map_err(|_| not_16_bit::<T>())
}

fn not_16_bit<T: Element>() -> Error {
    Error::invalid("16-bit conversion on the CPU", format!("{} is not a 16-bit type", T::DTYPE))
}

fn widen_host<T: Element>(x: &[T], y: &mut [f32], _n: u64) -> Result<()> {
    use rayon::prelude::*;
    let x = bits(x)?;
    y.par_iter_mut().zip(x).for_each(|(y, &b)| *y = half_to_f32(T::DTYPE, b));
    Ok(())
}

fn narrow_host<T: Element>(x: &[f32], y: &mut [T], _n: u64) -> Result<()> {
    use rayon::prelude::*;
    let y = bits_mut(y)?;
    y.par_iter_mut().zip(x).for_each(|(y, &v)| *y = half_bits(T::DTYPE, v));
    Ok(())
}

/// One launch of a conversion of `n` elements.
fn launch<B: Backend>(stream: &Stream<B>, program: &Program, args: Args<'_, B>, n: usize) -> Result<()> {
    let kernel = stream.device().kernel(program)?;
    let args = args.length(index_width(stream), n, kernel.name())?;
    let grid = blocks(n, BLOCK as usize, stream.device().info().limits.max_grid[0]);
    // SAFETY: the kernel reads src[0..n) and writes dst[0..n), grid-stride,
    // both views holding exactly n elements (checked by the callers).
    unsafe { stream.launch(&kernel, LaunchConfig::new(grid, BLOCK), args) }
}

/// `x` widened to a new `f32` buffer on `stream`; returns at once.
pub(crate) fn widen<B: Backend, T: Element>(stream: &Stream<B>, x: BufferView<'_, B, T>) -> Result<Buffer<B, f32>> {
    let n = x.len();
    let mut wide = stream.alloc::<f32>(n)?;
    if n > 0 {
        launch(stream, &convert_program::<T>(true), Args::new().arg(x).arg(wide.view_mut()), n)?;
    }
    Ok(wide)
}

/// `wide` rounded to `T` into `y` (of the same length) on `stream`; returns at once.
pub(crate) fn narrow<B: Backend, T: Element>(
    stream: &Stream<B>,
    wide: BufferView<'_, B, f32>,
    y: BufferViewMut<'_, B, T>,
) -> Result<()> {
    let n = wide.len();
    if y.len() != n {
        return Err(Error::LengthMismatch { what: "16-bit rounding: output".into(), expected: n, actual: y.len() });
    }
    if n == 0 {
        return Ok(());
    }
    launch(stream, &convert_program::<T>(false), Args::new().arg(wide).arg(y), n)
}
