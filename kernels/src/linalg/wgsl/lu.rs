//! `getrf` and `getrs` on WGSL: see the [module docs](super).

use kiln_core::{Args, Backend, BufferViewMut, Result, Stream, View, ViewMut};

use super::{NB, Product, block, grid, kernel, launch, trailing_update};
use crate::linalg::LinalgFloat;

/// LU with partial pivoting of the `batch` column-major matrices of order
/// `n` in `a`, in place: LAPACK's 1-based pivots into `pivots`, and into
/// `info` 0 or the 1-based column of the first exactly zero pivot.
pub(super) fn getrf<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    mut a: BufferViewMut<'_, B, T>,
    mut pivots: BufferViewMut<'_, B, i32>,
    mut info: BufferViewMut<'_, B, i32>,
    n: usize,
    batch: usize,
) -> Result<()> {
    let what = || format!("getrf of {batch} x {n}x{n} {} with kiln's WGSL kernels", T::DTYPE);
    stream.fill(&mut info, 0)?;
    let panel = kernel::<T>(
        "lu_panel",
        include_str!("lu_panel.wgsl"),
        &[("a", "T", true), ("piv", "i32", true), ("info", "i32", true)],
    );
    let rest = kernel::<T>("lu_rest", include_str!("lu_rest.wgsl"), &[("a", "T", true), ("piv", "i32", false)]);
    let mut prod = if n > NB { Some(stream.alloc::<T>(batch * (n - NB) * (n - NB))?) } else { None };
    let matrices = grid(stream, batch, &what)?;
    for k0 in (0..n).step_by(NB) {
        let kb = NB.min(n - k0);
        let args = Args::new()
            .arg(a.view_mut())
            .arg(pivots.view_mut())
            .arg(info.view_mut())
            .scalar(n as u32)
            .scalar(k0 as u32)
            .scalar(kb as u32)
            .scalar(batch as u32)
            .scalar(matrices.0);
        launch(stream, &panel, matrices, block(n - k0), args)?;
        if kb == n {
            break;
        }
        let total = batch * (n - kb);
        let args = Args::new()
            .arg(a.view_mut())
            .arg(pivots.view())
            .scalar(n as u32)
            .scalar(k0 as u32)
            .scalar(kb as u32)
            .scalar(total as u32);
        launch(stream, &rest, grid(stream, total.div_ceil(64), &what)?, 64, args)?;
        if let Some(prod) = prod.as_mut() {
            trailing_update(stream, &mut a, prod, n, k0, kb, batch, Product::Lu)?;
        }
    }
    Ok(())
}

/// Solve with `getrf`'s factors in `a` and `pivots` the `nrhs` column-major
/// right-hand sides of each matrix in `b` (`n` x `nrhs` per matrix), in
/// place: `A X = B`, or `A^T X = B` with `transpose`.
#[allow(clippy::too_many_arguments, reason = "LAPACK's getrs, operand for operand")]
pub(super) fn getrs<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: BufferViewMut<'_, B, T>,
    pivots: BufferViewMut<'_, B, i32>,
    b: BufferViewMut<'_, B, T>,
    n: usize,
    nrhs: usize,
    batch: usize,
    transpose: bool,
) -> Result<()> {
    let total = batch * nrhs;
    let what = || format!("getrs of {batch} x {n}x{n} {} with {nrhs} right-hand sides", T::DTYPE);
    let solve = kernel::<T>(
        "lu_solve",
        include_str!("lu_solve.wgsl"),
        &[("a", "T", false), ("piv", "i32", false), ("b", "T", true)],
    );
    let rhs = grid(stream, total, &what)?;
    let args = Args::new()
        .arg(a.view())
        .arg(pivots.view())
        .arg(b)
        .scalar(n as u32)
        .scalar(nrhs as u32)
        .scalar(total as u32)
        .scalar(rhs.0)
        .scalar(u32::from(transpose));
    launch(stream, &solve, rhs, block(n), args)
}
