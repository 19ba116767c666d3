//! Scaled products of 8-bit floats: `c = scale_a scale_b (a . b)`, `a` and
//! `b` in E4M3 or E5M2 ([`F8E4M3`], [`F8E5M2`]) with one `f32` scale each
//! in device memory (per-tensor scaling, as `torch._scaled_mm` takes), `c`
//! in `f32`, `f16` or `bf16`, the sum accumulated in `f32`.
//!
//! - CUDA: cuBLASLt's FP8 tensor-core products (sm_89 and later, with
//!   cuBLAS installed): E4M3 by E4M3, E4M3 by E5M2 and E5M2 by E4M3. It
//!   reads both operands along k, so `a` is stored `m x k` as it is and `b`
//!   transposed (`n x k`, [`MatmulShape::transpose_b`]), leading dimensions
//!   and batch strides multiples of 16 bytes; other calls are
//!   `Err(Unsupported)` saying which requirement failed.
//! - CPU: every layout and pair of types, the operands widened to `f32`
//!   (exactly) and multiplied by the `f32` kernels of [`matmul`](super::matmul).
//! - wgpu: `Err(Unsupported)` (WGSL has no 8-bit floats).

use std::sync::Arc;

use kiln_core::{
    Args, Backend, BackendKind, Element, Error, F8E4M3, F8E5M2, LaunchConfig, MatmulShape, Program, RawDevice, Result,
    Stream, View, ViewMut, bf16, f16,
};

use super::{MatmulStrategy, check_operands};
use crate::launch::{host_fn, index_width, program};

mod sealed {
    pub trait Sealed {}
}

/// An 8-bit float [`matmul_scaled`] multiplies: [`F8E4M3`] and [`F8E5M2`].
pub trait Fp8Element: Element + sealed::Sealed {
    /// The value as `f32` (exact).
    fn to_f32(self) -> f32;
}

impl sealed::Sealed for F8E4M3 {}
impl Fp8Element for F8E4M3 {
    fn to_f32(self) -> f32 {
        F8E4M3::to_f32(&self)
    }
}

impl sealed::Sealed for F8E5M2 {}
impl Fp8Element for F8E5M2 {
    fn to_f32(self) -> f32 {
        F8E5M2::to_f32(&self)
    }
}

/// A type [`matmul_scaled`] writes its product in: `f32`, `f16` and `bf16`.
pub trait ScaledOutput: Element + sealed::Sealed {
    /// `v` rounded to this type (to nearest, ties to even).
    fn from_f32(v: f32) -> Self;
    /// Write the empty sums of a `k = 0` product of `shape` into `c`'s
    /// matrices (zeros, padding left as it is), with matmul's own kernels.
    #[doc(hidden)]
    fn empty_sums<B: Backend>(stream: &Stream<B>, c: &mut impl ViewMut<B, Self>, shape: MatmulShape) -> Result<()>;
}

/// `shape` with k = 0 and dense a and b (of no elements), c as it is.
fn without_k(shape: MatmulShape) -> MatmulShape {
    let dense = MatmulShape::new(shape.m, shape.n, 0).batch(shape.batch);
    dense.layouts(dense.a, dense.b, shape.c)
}

impl sealed::Sealed for f32 {}
impl ScaledOutput for f32 {
    fn from_f32(v: f32) -> Self {
        v
    }
    fn empty_sums<B: Backend>(stream: &Stream<B>, c: &mut impl ViewMut<B, Self>, shape: MatmulShape) -> Result<()> {
        let none = stream.alloc::<f32>(0)?;
        super::matmul_with(stream, MatmulStrategy::Tiled, &none, &none, c, without_k(shape)).map(drop)
    }
}

impl sealed::Sealed for f16 {}
impl ScaledOutput for f16 {
    fn from_f32(v: f32) -> Self {
        f16::from_f32(v)
    }
    fn empty_sums<B: Backend>(stream: &Stream<B>, c: &mut impl ViewMut<B, Self>, shape: MatmulShape) -> Result<()> {
        let none = stream.alloc::<f16>(0)?;
        super::matmul_rounded(stream, MatmulStrategy::Tiled, &none, &none, c, without_k(shape)).map(drop)
    }
}

impl sealed::Sealed for bf16 {}
impl ScaledOutput for bf16 {
    fn from_f32(v: f32) -> Self {
        bf16::from_f32(v)
    }
    fn empty_sums<B: Backend>(stream: &Stream<B>, c: &mut impl ViewMut<B, Self>, shape: MatmulShape) -> Result<()> {
        let none = stream.alloc::<bf16>(0)?;
        super::matmul_rounded(stream, MatmulStrategy::Tiled, &none, &none, c, without_k(shape)).map(drop)
    }
}

/// `c = scale_a scale_b (a . b)` on `stream` for each of `shape.batch`
/// products: `a` is `m x k` of `A`, `b` is `k x n` of `W`, `c` is `m x n`
/// of `O`, laid out as `shape` says (each view spanning exactly its
/// operand, else `Err(LengthMismatch)`), and `scale_a` and `scale_b` one
/// `f32` each, read on the device when the product runs. The sums are
/// accumulated in `f32` ([`Precision`](super::Precision) does not apply: the
/// inputs are what they are), scaled, and rounded once to `O`. Returns the
/// strategy that ran: [`MatmulStrategy::Vendor`] (cuBLASLt) on CUDA,
/// [`MatmulStrategy::Tiled`] on the CPU; see the module's docs for what each
/// backend takes; an empty sum (`k = 0`) writes zeros with kiln's own
/// kernels ([`MatmulStrategy::Tiled`]) wherever the product is offered.
/// Elements of `c` outside its matrices are left as they are.
///
/// The error of an element against the exact scaled sum of the 8-bit
/// values is at most `k 2^-22 scale_a scale_b sum |a||b|` from the `f32`
/// sum plus one rounding to `O`; cuBLASLt's tensor cores keep partial sums
/// of at least 13 bits between their promotions to `f32`, which the
/// conformance suite allows for (`k 2^-13`).
///
/// # Examples
/// ```
/// use kiln_core::{Device, F8E4M3};
/// use kiln_cpu::Cpu;
/// use kiln_kernels::matmul::{matmul_scaled, MatmulShape, MatmulStrategy};
/// # fn main() -> kiln_core::Result<()> {
/// let s = Device::<Cpu>::open(0)?.stream();
/// let q = |v: f32| F8E4M3::from_f32(v);
/// let a = s.upload(&[q(1.0), q(2.0), q(0.5), q(-1.5)])?; // 2 x 2
/// let b = s.upload(&[q(4.0), q(0.25), q(1.0), q(8.0)])?; // 2 x 2, stored transposed
/// let (sa, sb) = (s.upload(&[0.5f32])?, s.upload(&[2.0f32])?);
/// let mut c = s.alloc::<f32>(4)?;
/// let shape = MatmulShape::new(2, 2, 2).transpose_b();
/// let used = matmul_scaled(&s, &a, &b, &mut c, shape, &sa, &sb)?;
/// assert_eq!(used, MatmulStrategy::Tiled);
/// // b is [[4, 1], [0.25, 8]]: a . b = [[4.5, 17], [1.625, -11.5]], times 0.5 * 2.
/// assert_eq!(c.to_vec()?, [4.5, 17.0, 1.625, -11.5]);
/// # Ok(()) }
/// ```
pub fn matmul_scaled<B: Backend, A: Fp8Element, W: Fp8Element, O: ScaledOutput>(
    stream: &Stream<B>,
    a: &impl View<B, A>,
    b: &impl View<B, W>,
    c: &mut impl ViewMut<B, O>,
    shape: MatmulShape,
    scale_a: &impl View<B, f32>,
    scale_b: &impl View<B, f32>,
) -> Result<MatmulStrategy> {
    let what = format!("matmul_scaled {shape} of {} by {} into {}", A::DTYPE, W::DTYPE, O::DTYPE);
    check_operands(&shape, [a.view().len(), b.view().len(), c.view().len()], &what)?;
    for (name, scale) in [("scale_a", scale_a.view()), ("scale_b", scale_b.view())] {
        if scale.len() != 1 {
            return Err(Error::LengthMismatch { what: format!("{what}: {name}"), expected: 1, actual: scale.len() });
        }
    }
    let vendor = stream.device().raw().vendor_gemm();
    let offered = vendor.is_some_and(|v| v.supports_scaled(A::DTYPE, W::DTYPE, O::DTYPE));
    if shape.k == 0 && (offered || B::KIND == BackendKind::Cpu) {
        // An empty sum: zeros, whatever the scales (kiln's own kernels write them).
        if !shape.is_empty() {
            O::empty_sums(stream, c, shape)?;
        }
        return Ok(MatmulStrategy::Tiled);
    }
    if offered {
        stream.vendor_scaled_gemm(a, b, c, &shape, scale_a, scale_b)?;
        return Ok(MatmulStrategy::Vendor);
    }
    if B::KIND != BackendKind::Cpu {
        let reason = match vendor {
            Some(v) => format!("{} on {} has no such product", v.name, stream.device().name()),
            None => format!(
                "{} offers no vendor GEMM, and kiln has no 8-bit kernel of its own there",
                stream.device().name()
            ),
        };
        return Err(Error::unsupported(B::KIND, what, reason));
    }
    if shape.is_empty() {
        return Ok(MatmulStrategy::Tiled);
    }
    let width = index_width(stream);
    let largest = [a.view().len(), b.view().len(), c.view().len()].into_iter().max().unwrap_or(0);
    width.check::<B>(largest as u64, &what)?;
    let kernel = stream.device().kernel(&scaled_program::<A, W, O>())?;
    let MatmulShape { m, n, k, batch, a: la, b: lb, c: lc, .. } = shape;
    let flags = u32::from(la.transposed) | u32::from(lb.transposed) << 1;
    let mut args = Args::new().arg(a.view()).arg(b.view()).arg(c.view_mut()).arg(scale_a.view()).arg(scale_b.view());
    for value in [m, n, k, batch, la.ld, lb.ld, lc.ld, la.stride, lb.stride, lc.stride] {
        args = args.length(width, value, &what)?;
    }
    // SAFETY: a host function (the CPU backend, checked above): it reads
    // and writes through the slices it is given, whose lengths it checks
    // against the shape.
    unsafe { stream.launch(&kernel, LaunchConfig::new(1, 1), args.arg(flags)) }?;
    Ok(MatmulStrategy::Tiled)
}

/// The CPU program of scaled products of `A` by `W` into `O`.
fn scaled_program<A: Fp8Element, W: Fp8Element, O: ScaledOutput>() -> Arc<Program> {
    let name = format!("kiln_matmul_scaled_{}_{}_{}", A::DTYPE, W::DTYPE, O::DTYPE);
    program(&name, || Program::new(&name).host(host_fn!(scaled_host::<A, W, O>)))
}

/// The CPU's scaled product: the operands widened to `f32` with their
/// layouts, multiplied by matmul's `f32` kernels into a dense `f32`
/// product, then scaled and rounded into `c`'s matrices.
#[allow(clippy::too_many_arguments, reason = "the kernel's arguments, as matmul's kernels take them")]
fn scaled_host<A: Fp8Element, W: Fp8Element, O: ScaledOutput>(
    a: &[A],
    b: &[W],
    c: &mut [O],
    scale_a: &[f32],
    scale_b: &[f32],
    m: u64,
    n: u64,
    k: u64,
    batch: u64,
    lda: u64,
    ldb: u64,
    ldc: u64,
    sa: u64,
    sb: u64,
    sc: u64,
    flags: u32,
) -> Result<()> {
    let what = || format!("matmul_scaled {m} x {n} x {k} (CPU)");
    let (Some(&scale_a), Some(&scale_b)) = (scale_a.first(), scale_b.first()) else {
        return Err(Error::invalid(what(), "a scale is missing"));
    };
    let wide_a: Vec<f32> = a.iter().map(|v| v.to_f32()).collect();
    let wide_b: Vec<f32> = b.iter().map(|v| v.to_f32()).collect();
    let [mu, nu, bu, ldcu, scu] = [m, n, batch, ldc, sc].map(|v| v as usize);
    let len = mu.checked_mul(nu).and_then(|v| v.checked_mul(bu)).ok_or_else(|| Error::invalid(what(), "overflows"))?;
    let mut product = vec![0.0f32; len];
    let dense = (m * n, n);
    super::cpu::matmul::<f32>(
        &wide_a,
        &wide_b,
        &mut product,
        m,
        n,
        k,
        batch,
        lda,
        ldb,
        dense.1,
        sa,
        sb,
        dense.0,
        flags,
    )?;
    let last = (bu - 1) * if bu > 1 { scu } else { 0 } + (mu - 1) * if mu > 1 { ldcu } else { 0 } + nu;
    if c.len() < last {
        return Err(Error::invalid(what(), format!("c holds {} elements of the {last} its layout spans", c.len())));
    }
    let scale = scale_a * scale_b;
    for z in 0..bu {
        for r in 0..mu {
            let at = z * scu + r * ldcu;
            let from = (z * mu + r) * nu;
            for (d, &v) in c[at..at + nu].iter_mut().zip(&product[from..from + nu]) {
                *d = O::from_f32(scale * v);
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use kiln_core::{Device, MatrixLayout};
    use kiln_cpu::Cpu;

    use super::*;

    /// The scaled product of seeded 8-bit values against an f64 sum of
    /// the same values, for every pair of types, layouts and a padded,
    /// batched c; c's padding keeps its poison.
    #[test]
    fn cpu_products_match_an_f64_reference_in_every_layout() {
        let s = Device::<Cpu>::open(0).unwrap().stream();
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 40) as f32 / (1u64 << 24) as f32 * 8.0 - 4.0
        };
        let (m, n, k, batch) = (5usize, 7usize, 33usize, 3usize);
        for (ta, tb) in [(false, true), (false, false), (true, true), (true, false)] {
            let av: Vec<F8E4M3> = (0..batch * m * k).map(|_| F8E4M3::from_f32(next())).collect();
            let bv: Vec<F8E5M2> = (0..batch * k * n).map(|_| F8E5M2::from_f32(next())).collect();
            let ldc = n + 3;
            let poison = f32::from_bits(0x7fc0_dead);
            let mut shape = MatmulShape::new(m, n, k).batch(batch);
            let layout = |transposed: bool, rows: usize, cols: usize| {
                let ld = if transposed { rows } else { cols };
                MatrixLayout { transposed, ld, stride: rows * cols }
            };
            shape = shape.layouts(
                layout(ta, m, k),
                layout(tb, k, n),
                MatrixLayout { transposed: false, ld: ldc, stride: m * ldc },
            );
            let a = s.upload(&av).unwrap();
            let b = s.upload(&bv).unwrap();
            let span = (batch - 1) * m * ldc + (m - 1) * ldc + n;
            let mut c = s.upload(&vec![poison; span]).unwrap();
            let (sa, sb) = (s.upload(&[0.75f32]).unwrap(), s.upload(&[-2.0f32]).unwrap());
            assert_eq!(matmul_scaled(&s, &a, &b, &mut c, shape, &sa, &sb).unwrap(), MatmulStrategy::Tiled);
            let got = c.to_vec().unwrap();
            let at = |v: &[f32], transposed: bool, rows: usize, cols: usize, z: usize, r: usize, j: usize| {
                let base = z * rows * cols;
                if transposed { v[base + j * rows + r] } else { v[base + r * cols + j] }
            };
            let (aw, bw): (Vec<f32>, Vec<f32>) =
                (av.iter().map(|v| v.to_f32()).collect(), bv.iter().map(|v| v.to_f32()).collect());
            for z in 0..batch {
                for i in 0..m {
                    for j in 0..n {
                        let (mut sum, mut mag) = (0.0f64, 0.0f64);
                        for p in 0..k {
                            let x = f64::from(at(&aw, ta, m, k, z, i, p)) * f64::from(at(&bw, tb, k, n, z, p, j));
                            sum += x;
                            mag += x.abs();
                        }
                        let want = sum * 0.75 * -2.0;
                        let bound = (k as f64 * 2f64.powi(-22) + 2f64.powi(-24)) * mag * 1.5 + 1e-30;
                        let have = f64::from(got[z * m * ldc + i * ldc + j]);
                        assert!((have - want).abs() <= bound, "({ta}, {tb}) [{z}][{i}][{j}]: {have} vs {want}");
                    }
                    for j in n..ldc {
                        let at = z * m * ldc + i * ldc + j;
                        if at < span {
                            assert_eq!(got[at].to_bits(), poison.to_bits(), "padding kept");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn bad_scales_and_lengths_are_errors_that_leave_c_alone() {
        let s = Device::<Cpu>::open(0).unwrap().stream();
        let a = s.upload(&[F8E4M3::from_f32(1.0); 4]).unwrap();
        let b = s.upload(&[F8E4M3::from_f32(1.0); 4]).unwrap();
        let mut c = s.upload(&[bf16::from_f32(7.0); 4]).unwrap();
        let two = s.upload(&[1.0f32, 1.0]).unwrap();
        let one = s.upload(&[1.0f32]).unwrap();
        let shape = MatmulShape::new(2, 2, 2);
        let err = matmul_scaled(&s, &a, &b, &mut c, shape, &two, &one).unwrap_err();
        assert!(matches!(err, Error::LengthMismatch { expected: 1, actual: 2, .. }), "{err}");
        let err = matmul_scaled(&s, &a, &b, &mut c, MatmulShape::new(2, 2, 3), &one, &one).unwrap_err();
        assert!(matches!(err, Error::LengthMismatch { .. }), "{err}");
        assert_eq!(c.to_vec().unwrap(), [bf16::from_f32(7.0); 4]);
        // k = 0: an empty sum, zeros.
        let (e, f) = (s.alloc::<F8E4M3>(0).unwrap(), s.alloc::<F8E4M3>(0).unwrap());
        matmul_scaled(&s, &e, &f, &mut c, MatmulShape::new(2, 2, 0), &one, &one).unwrap();
        assert_eq!(c.to_vec().unwrap(), [bf16::ZERO; 4]);
    }
}
