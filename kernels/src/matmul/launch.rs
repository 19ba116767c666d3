//! matmul's launches: kiln's own kernels and the vendor GEMM, with their
//! SAFETY notes. The callers have checked the lengths against the shape.

use kiln_core::{Args, Backend, Element, Error, RawDevice, Result, Stream, View, ViewMut};

use super::plan::plan;
use super::program::matmul_program;
use super::{MatmulElement, MatmulShape};
use crate::launch::index_width;

/// `c = a . b` with kiln's naive (`naive`) or tiled kernel; m, n and k are at least 1.
pub(super) fn own<B: Backend, T: MatmulElement>(
    stream: &Stream<B>,
    naive: bool,
    a: &impl View<B, T>,
    b: &impl View<B, T>,
    c: &mut impl ViewMut<B, T::Acc>,
    shape: MatmulShape,
    what: &str,
) -> Result<()> {
    let MatmulShape { m, n, k } = shape;
    // Kernels index each matrix with the device's indices: the largest must fit.
    let width = index_width(stream);
    let largest = (m as u64 * k as u64).max(k as u64 * n as u64).max(m as u64 * n as u64);
    width.check::<B>(largest, what)?;
    let offsets = [
        a.view().offset() * size_of::<T>(),
        b.view().offset() * size_of::<T>(),
        c.view().offset() * size_of::<T::Acc>(),
    ];
    let plan = plan::<B, T>(stream.device(), naive, shape, &offsets);
    let prog = matmul_program::<T>(plan.algo, plan.vec);
    let kernel = stream.device().kernel(&prog)?;
    let args = Args::new().arg(a.view()).arg(b.view()).arg(c.view_mut());
    let args = args.length(width, m, what)?.length(width, n, what)?.length(width, k, what)?;
    // SAFETY: the kernel reads a[0..m k) and b[0..k n) and writes c[0..m n),
    // the lengths checked by the caller; the 16-byte path is chosen only
    // where every pointer and row is 16-byte aligned.
    unsafe { stream.launch(&kernel, plan.config, args) }
}

/// Hand the product to the device's vendor GEMM.
pub(super) fn vendor<B: Backend, T: MatmulElement>(
    stream: &Stream<B>,
    a: &impl View<B, T>,
    b: &impl View<B, T>,
    c: &mut impl ViewMut<B, T::Acc>,
    shape: MatmulShape,
    what: &str,
) -> Result<()> {
    let device = stream.device();
    let (input, output) = (T::DTYPE, <T::Acc as Element>::DTYPE);
    let refused = |reason: String| Error::unsupported(B::KIND, format!("{what} with strategy vendor"), reason);
    let vendor =
        device.raw().vendor_gemm().ok_or_else(|| refused(format!("{} offers no vendor GEMM", device.name())))?;
    if !vendor.supports(input, output) {
        return Err(refused(format!("{} has no product of {input} matrices into {output}", vendor.name)));
    }
    stream.vendor_gemm(a, b, c, (shape.m, shape.n, shape.k))
}
