//! `geqrf` and `orgqr` on WGSL: see the [module docs](super).

use kiln_core::{Args, Backend, BufferViewMut, Result, Stream};

use super::{block, grid, kernel, launch};
use crate::linalg::LinalgFloat;

/// Householder QR of the `batch` column-major `m` x `n` matrices in `a`,
/// in place (R on and above the diagonal, the reflectors below it), the
/// reflectors' scalars into `tau` (`min(m, n)` per matrix).
pub(super) fn geqrf<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: BufferViewMut<'_, B, T>,
    tau: BufferViewMut<'_, B, T>,
    m: usize,
    n: usize,
    batch: usize,
) -> Result<()> {
    let what = || format!("geqrf of {batch} x {m}x{n} {} with kiln's WGSL kernels", T::DTYPE);
    let k = kernel::<T>("qr", include_str!("qr.wgsl"), &[("a", "T", true), ("tau_out", "T", true)]);
    let matrices = grid(stream, batch, &what)?;
    let args = Args::new().arg(a).arg(tau).scalar(m as u32).scalar(n as u32).scalar(batch as u32).scalar(matrices.0);
    launch(stream, &k, matrices, block(m.max(n)), args)
}

/// The first `n` columns of Q (`n <= m`) from `reflectors` reflectors in
/// the first columns of each column-major `m` x `n` matrix in `a` and
/// their scalars in `tau` (`reflectors` per matrix), over `a`.
pub(super) fn orgqr<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: BufferViewMut<'_, B, T>,
    tau: BufferViewMut<'_, B, T>,
    m: usize,
    n: usize,
    reflectors: usize,
    batch: usize,
) -> Result<()> {
    let what = || format!("orgqr of {batch} x {m}x{n} {} with kiln's WGSL kernels", T::DTYPE);
    let k = kernel::<T>("orgqr", include_str!("orgqr.wgsl"), &[("a", "T", true), ("tau", "T", false)]);
    let matrices = grid(stream, batch, &what)?;
    let args = Args::new()
        .arg(a)
        .arg(tau)
        .scalar(m as u32)
        .scalar(n as u32)
        .scalar(reflectors as u32)
        .scalar(batch as u32)
        .scalar(matrices.0);
    launch(stream, &k, matrices, block(m.max(n)), args)
}
