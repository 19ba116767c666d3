//! `syevd`'s results on WGSL by Jacobi sweeps: see the [module docs](super).

use kiln_core::{Args, Backend, BufferViewMut, Error, Result, Stream, ViewMut};

use super::{block, grid, kernel, launch};
use crate::linalg::LinalgFloat;

/// The largest order the Jacobi kernel takes: its workgroup holds a
/// matrix's eigenvalues and half as many rotations, and one sweep's
/// launch stays within [`LOOP_BUDGET`](super::LOOP_BUDGET) (at 192 in
/// workgroups of 256: 191 rounds of two walks over 96 x 192 elements).
pub(super) const MAX_ORDER: usize = 192;

/// Sweeps before a matrix counts as not converged (quadratic convergence
/// takes under 15 in f64 on every matrix of the suite); a converged
/// matrix's later sweep launches return at once.
const SWEEPS: u32 = 30;

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
    let mut tol = stream.alloc::<T>(batch)?;
    let k = kernel::<T>(
        "eigh_jacobi",
        include_str!("eigh_jacobi.wgsl"),
        &[("a", "T", true), ("w", "T", true), ("work", "T", true), ("tol", "T", true), ("info", "i32", true)],
    );
    let matrices = grid(stream, batch, &what)?;
    let (mut a, mut w, mut info) = (a, w, info);
    let stages = std::iter::once(0).chain(std::iter::repeat_n(1, SWEEPS as usize)).chain(std::iter::once(2));
    for stage in stages {
        let args = Args::new()
            .arg(a.view_mut())
            .arg(w.view_mut())
            .arg(&mut work)
            .arg(&mut tol)
            .arg(info.view_mut())
            .scalar(n as u32)
            .scalar(batch as u32)
            .scalar(matrices.0)
            .scalar(u32::from(lower))
            .scalar(stage as u32)
            .scalar(T::from_f64(T::EPSILON));
        launch(stream, &k, matrices, block(n), args)?;
    }
    Ok(())
}
