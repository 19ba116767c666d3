//! matmul's launches: kiln's own kernels, with their SAFETY notes, and the
//! check that the vendor GEMM is offered. The callers have checked the
//! lengths against the shape.

use kiln_core::{Args, Backend, DType, Device, Error, RawDevice, Result, Stream, View, ViewMut};

use super::plan::plan;
use super::program::matmul_program;
use super::{MatmulElement, MatmulShape};
use crate::launch::index_width;

/// `c = a . b` with kiln's naive (`naive`) or tiled kernel, for every
/// product of the batch; `shape` has passed `check_layouts` and the views
/// span its operands (checked by the caller); m, n and the batch are at
/// least 1, and k = 0 writes zeros.
pub(super) fn own<B: Backend, T: MatmulElement>(
    stream: &Stream<B>,
    naive: bool,
    a: &impl View<B, T>,
    b: &impl View<B, T>,
    c: &mut impl ViewMut<B, T::Acc>,
    shape: MatmulShape,
    what: &str,
) -> Result<()> {
    // Kernels index each operand with the device's indices: the largest must fit.
    let width = index_width(stream);
    let largest = [a.view().len(), b.view().len(), c.view().len()].into_iter().max().unwrap_or(0);
    width.check::<B>(largest as u64, what)?;
    let offsets = [
        a.view().offset() * size_of::<T>(),
        b.view().offset() * size_of::<T>(),
        c.view().offset() * size_of::<T::Acc>(),
    ];
    let plan = plan::<B, T>(stream.device(), naive, &shape, &offsets);
    let prog = matmul_program::<T>(plan.kernel, plan.vec);
    let kernel = stream.device().kernel(&prog)?;
    let MatmulShape { m, n, k, batch, a: la, b: lb, c: lc, .. } = shape;
    let flags = u32::from(la.transposed) | u32::from(lb.transposed) << 1;
    let mut args = Args::new().arg(a.view()).arg(b.view()).arg(c.view_mut());
    for value in [m, n, k, batch, la.ld, lb.ld, lc.ld, la.stride, lb.stride, lc.stride] {
        args = args.length(width, value, what)?;
    }
    // SAFETY: for each product z < batch the kernel reads a's and b's
    // elements z stride + i ld + p (i, p inside the stored matrix) and
    // writes c's likewise: inside the views, whose lengths are the spans
    // (checked by the caller), and c's elements distinct (check_layouts).
    // The 16-byte paths are chosen only where every pointer, row and
    // stride is 16-byte aligned and no operand is transposed (the
    // tensor-core kernels' stores of two elements: c's rows and strides even).
    unsafe { stream.launch(&kernel, plan.config, args.arg(flags)) }
}

/// `Ok` where the device's vendor GEMM multiplies `input` matrices into
/// `output`; `Err(Unsupported)` saying what it lacks otherwise.
pub(super) fn offered<B: Backend>(device: &Device<B>, input: DType, output: DType, what: &str) -> Result<()> {
    let refused = |reason: String| Error::unsupported(B::KIND, format!("{what} with strategy vendor"), reason);
    let vendor =
        device.raw().vendor_gemm().ok_or_else(|| refused(format!("{} offers no vendor GEMM", device.name())))?;
    if !vendor.supports(input, output) {
        return Err(refused(format!("{} has no product of {input} matrices into {output}", vendor.name)));
    }
    Ok(())
}
