//! Products of 16-bit matrices rounded to their own type (`f16 . f16 ->
//! f16`, as `torch.matmul` and `cupy.matmul` give): accumulated in f32 as
//! [`matmul`](super::matmul)'s, each element of `c` rounded once.
//!
//! The vendor GEMM writes the 16-bit type itself where it offers that
//! product (cuBLAS: f32 compute, f16 or bf16 output); kiln's own kernels
//! write an f32 product with `c`'s layout, which one more pass rounds
//! element by element of `c`'s matrices (its padding left as it is).

use std::sync::Arc;

use kiln_core::{
    Args, Backend, BufferView, BufferViewMut, DType, Device, Element, LaunchConfig, MatmulShape, Program, RawDevice,
    Result, Stream, View, ViewMut, bf16, f16,
};

use super::launch::offered;
use super::{MatmulElement, MatmulStrategy, auto_into, check_operands, matmul_with};
use crate::launch::{BLOCK, WGSL_ABI, blocks, check_dtype, cuda_source, host_fn, index_width, program, wgsl_enables};
use crate::widen::narrow;

mod sealed {
    pub trait Sealed {}
}

/// A 16-bit float matmul can round its product to: `f16` and `bf16`.
pub trait RoundedElement: MatmulElement<Acc = f32> + sealed::Sealed {}
impl sealed::Sealed for f16 {}
impl RoundedElement for f16 {}
impl sealed::Sealed for bf16 {}
impl RoundedElement for bf16 {}

/// `c = a . b` on `stream`, `c` of the inputs' 16-bit type: each element
/// the f32 sum [`matmul_with`] computes, rounded once to `T` (to nearest,
/// ties to even; past the type's range, infinite). Shapes, layouts and
/// strategies as for [`matmul_with`]; [`MatmulStrategy::Auto`] takes the
/// vendor GEMM where it offers `T` into `T` (and the product has at least
/// [`AUTO_VENDOR_MIN_FLOPS`](super::AUTO_VENDOR_MIN_FLOPS) flops), kiln's tiled kernel otherwise. Returns
/// the strategy that ran; elements of `c` outside its matrices are left as
/// they are.
///
/// # Examples
/// ```
/// use kiln_core::{f16, Device};
/// use kiln_cpu::Cpu;
/// use kiln_kernels::matmul::{matmul_rounded, MatmulShape, MatmulStrategy};
/// # fn main() -> kiln_core::Result<()> {
/// let s = Device::<Cpu>::open(0)?.stream();
/// // 1 x 3 times 3 x 1: 2048 + 1 + 1 in f32, then rounded to f16 once.
/// let a = s.upload(&[2048.0f32, 1.0, 1.0].map(f16::from_f32))?;
/// let b = s.upload(&[f16::ONE; 3])?;
/// let mut c = s.alloc::<f16>(1)?;
/// matmul_rounded(&s, MatmulStrategy::Auto, &a, &b, &mut c, MatmulShape::new(1, 1, 3))?;
/// assert_eq!(c.to_vec()?, [f16::from_f32(2050.0)]);
/// # Ok(()) }
/// ```
pub fn matmul_rounded<B: Backend, T: RoundedElement>(
    stream: &Stream<B>,
    strategy: MatmulStrategy,
    a: &impl View<B, T>,
    b: &impl View<B, T>,
    c: &mut impl ViewMut<B, T>,
    shape: MatmulShape,
) -> Result<MatmulStrategy> {
    let what = format!("matmul_rounded {shape} on {}", T::DTYPE);
    let spans = check_operands(&shape, [a.view().len(), b.view().len(), c.view().len()], &what)?;
    check_dtype(stream, T::DTYPE, "matmul")?;
    let resolved = match strategy {
        MatmulStrategy::Auto => choose_rounded(stream.device(), T::DTYPE, shape),
        s => s,
    };
    if resolved == MatmulStrategy::Vendor {
        offered(stream.device(), T::DTYPE, T::DTYPE, &what)?;
    }
    if shape.is_empty() {
        return Ok(resolved);
    }
    if resolved == MatmulStrategy::Vendor && shape.k > 0 {
        stream.vendor_gemm(a, b, c, &shape)?;
        return Ok(resolved);
    }
    // kiln's kernels (and an empty sum, k = 0: zeros): f32 with c's layout, then rounded.
    let own = if resolved == MatmulStrategy::Naive { MatmulStrategy::Naive } else { MatmulStrategy::Tiled };
    let mut wide = stream.alloc::<f32>(spans[2])?;
    matmul_with(stream, own, a, b, &mut wide, shape)?;
    round_matrices(stream, wide.view(), c.view_mut(), &shape, &what)?;
    Ok(resolved)
}

/// The strategy [`MatmulStrategy::Auto`] resolves to for
/// [`matmul_rounded`] of `shape` on `dtype` on `device`: the vendor GEMM
/// where the device offers one of `dtype` into `dtype` and the product has
/// at least [`AUTO_VENDOR_MIN_FLOPS`](super::AUTO_VENDOR_MIN_FLOPS) flops; kiln's tiled kernel otherwise.
///
/// # Examples
/// ```
/// use kiln_core::{DType, Device};
/// use kiln_kernels::matmul::{choose_rounded, MatmulShape, MatmulStrategy};
/// let dev = Device::<kiln_cpu::Cpu>::open(0).unwrap();
/// assert_eq!(choose_rounded(&dev, DType::F16, MatmulShape::new(4096, 4096, 4096)), MatmulStrategy::Tiled);
/// ```
pub fn choose_rounded<B: Backend>(device: &Device<B>, dtype: DType, shape: MatmulShape) -> MatmulStrategy {
    auto_into(device.raw().vendor_gemm(), dtype, dtype, shape)
}

/// `wide`'s elements in `shape`'s matrices of `c`, rounded into `c` (the
/// same layout): the whole span at once where `c` has no padding.
fn round_matrices<B: Backend, T: Element>(
    stream: &Stream<B>,
    wide: BufferView<'_, B, f32>,
    c: BufferViewMut<'_, B, T>,
    shape: &MatmulShape,
    what: &str,
) -> Result<()> {
    let MatmulShape { m, n, batch, c: lc, .. } = *shape;
    let dense = (m == 1 || lc.ld == n) && (batch == 1 || lc.stride == m * n);
    if dense {
        return narrow(stream, wide, c);
    }
    let prog = rounding_program::<T>();
    let kernel = stream.device().kernel(&prog)?;
    let width = index_width(stream);
    let mut args = Args::new().arg(wide).arg(c);
    for value in [m, n, batch, lc.ld, lc.stride] {
        args = args.length(width, value, what)?;
    }
    let grid = blocks(m * n * batch, BLOCK as usize, stream.device().info().limits.max_grid[0]);
    // SAFETY: for z < batch, r < m, j < n the kernel reads wide's and writes
    // c's element z stride + r ld + j: inside both, which span the shape's
    // c (checked by the caller, wide allocated at that span).
    unsafe { stream.launch(&kernel, LaunchConfig::new(grid, BLOCK), args) }
}

fn rounding_program<T: Element>() -> Arc<Program> {
    let name = format!("kiln_matmul_round_{}", T::DTYPE);
    program(&name, || {
        let from_float = if T::DTYPE == DType::BF16 { "kiln_bf16_from_float" } else { "kiln_half_from_float" };
        let wgsl = format!(
            "{}@group(0) @binding(0) var<storage, read> src: array<f32>;\n\
             @group(0) @binding(1) var<storage, read_write> dst: array<{}>;\n{WGSL_ABI}{}",
            wgsl_enables(T::DTYPE),
            T::DTYPE.wgsl_name().unwrap_or("unsupported_type"),
            include_str!("rounded.wgsl"),
        );
        Program::new(&name)
            .cuda(cuda_source(T::DTYPE, include_str!("rounded.cu")))
            .wgsl(wgsl)
            .host(host_fn!(round_host::<T>))
            .define("KERNEL", &name)
            .define("FROM_FLOAT", from_float)
    })
}

/// The host form of `rounded.cu`.
fn round_host<T: Element>(src: &[f32], dst: &mut [T], m: u64, n: u64, batch: u64, ldc: u64, sc: u64) -> Result<()> {
    let dst = crate::widen::bits_mut(dst)?;
    let [m, n, batch, ldc, sc] = [m, n, batch, ldc, sc].map(|v| v as usize);
    for z in 0..batch {
        for r in 0..m {
            let at = z * sc + r * ldc;
            for (d, &v) in dst[at..at + n].iter_mut().zip(&src[at..at + n]) {
                *d = crate::widen::half_bits(T::DTYPE, v);
            }
        }
    }
    Ok(())
}
