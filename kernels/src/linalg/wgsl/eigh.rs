//! `syevd`'s results on WGSL by Jacobi sweeps: see the [module docs](super).

use kiln_core::{Args, Backend, BufferViewMut, Error, Result, Stream};

use super::{block, grid, kernel, launch};
use crate::linalg::LinalgFloat;

/// The largest order the Jacobi kernel takes: its workgroup holds a
/// matrix's eigenvalues and half as many rotations.
pub(super) const MAX_ORDER: usize = 256;

/// Sweeps before a matrix counts as not converged (quadratic convergence
/// takes under 15 in f64 on every matrix of the suite).
const SWEEPS: u32 = 40;

/// Eigenvalues (ascending, into `w`, `n` per matrix) and eigenvectors
/// (over `a`, one per column) of the `batch` column-major symmetric
/// matrices of order `n` in `a`, read from their `lower` triangle (else
/// the upper); `info` 0, or 1 where the sweeps did not converge.
pub(super) fn syevj<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: BufferViewMut<'_, B, T>,
    w: BufferViewMut<'_, B, T>,
    info: BufferViewMut<'_, B, i32>,
    n: usize,
    batch: usize,
    lower: bool,
) -> Result<()> {
    let what = || format!("eigh of {batch} x {n}x{n} {} with kiln's WGSL kernels", T::DTYPE);
    if n > MAX_ORDER {
        return Err(Error::unsupported(
            B::KIND,
            what(),
            format!(
                "kiln's WGSL eigensolver (Jacobi sweeps in one workgroup) takes orders up to {MAX_ORDER}; larger \
                 ones need a tridiagonal reduction kiln does not have yet"
            ),
        ));
    }
    let mut work = stream.alloc::<T>(batch * n * n)?;
    let k = kernel::<T>(
        "eigh_jacobi",
        include_str!("eigh_jacobi.wgsl"),
        &[("a", "T", true), ("w", "T", true), ("work", "T", true), ("info", "i32", true)],
    );
    let matrices = grid(stream, batch, &what)?;
    let args = Args::new()
        .arg(a)
        .arg(w)
        .arg(&mut work)
        .arg(info)
        .scalar(n as u32)
        .scalar(batch as u32)
        .scalar(matrices.0)
        .scalar(u32::from(lower))
        .scalar(SWEEPS)
        .scalar(T::from_f64(T::EPSILON));
    launch(stream, &k, matrices, block(n), args)
}
