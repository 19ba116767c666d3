//! `potrf` (lower) on WGSL: see the [module docs](super).

use kiln_core::{Args, Backend, BufferViewMut, Result, Stream, View, ViewMut};

use super::{Panel, Product, block, grid, kernel, launch, launch_items, trailing_update};
use crate::linalg::LinalgFloat;

/// Columns per panel: `chol_panel.wgsl` holds an `NB` x `NB` diagonal block's
/// lower triangle in workgroup memory, and `chol_trsm.wgsl` walks `NB^2 / 2`
/// steps per row, within [`LOOP_BUDGET`](super::LOOP_BUDGET) at every order.
const NB: usize = 64;

/// Cholesky factorisation of the lower triangles of the `batch`
/// column-major symmetric matrices of order `n` in `a`, in place (the
/// upper triangles left as they are): into `info` 0, or the order of the
/// first leading minor that is not positive definite.
pub(super) fn potrf<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    mut a: BufferViewMut<'_, B, T>,
    mut info: BufferViewMut<'_, B, i32>,
    n: usize,
    batch: usize,
) -> Result<()> {
    let what = || format!("potrf of {batch} x {n}x{n} {} with kiln's WGSL kernels", T::DTYPE);
    stream.fill(&mut info, 0)?;
    // The panel kernel's block: 32 x 32 for matrices that fit, so that
    // their workgroups hold a quarter of the memory.
    let widest = if n <= 32 { 32 } else { NB };
    let source = include_str!("chol_panel.wgsl")
        .replace("PANEL_NB", &widest.to_string())
        .replace("PANEL_TRI", &(widest * (widest + 1) / 2).to_string());
    let panel = kernel::<T>(&format!("chol_panel_{widest}"), &source, &[("a", "T", true), ("info", "i32", true)]);
    let trsm = kernel::<T>("chol_trsm", include_str!("chol_trsm.wgsl"), &[("a", "T", true), ("info", "i32", false)]);
    let nb = NB;
    let mut prod = if n > nb { Some(stream.alloc::<T>(batch * (n - nb) * (n - nb))?) } else { None };
    let matrices = grid(stream, batch, &what)?;
    for k0 in (0..n).step_by(nb) {
        let kb = nb.min(n - k0);
        let args = Args::new()
            .arg(a.view_mut())
            .arg(info.view_mut())
            .scalar(n as u32)
            .scalar(k0 as u32)
            .scalar(kb as u32)
            .scalar(batch as u32)
            .scalar(matrices.0);
        // Invocations to spread a step's rank-1 update over: 256 for a
        // block of 64, fewer for smaller ones (at least 32, columns of 16).
        launch(stream, &panel, matrices, block(kb * kb / 16), args)?;
        let total = batch * (n - k0 - kb);
        if total == 0 {
            break;
        }
        let args = Args::new()
            .arg(a.view_mut())
            .arg(info.view())
            .scalar(n as u32)
            .scalar(k0 as u32)
            .scalar(kb as u32)
            .scalar(total as u32);
        launch_items(stream, &trsm, total, args, &what)?;
        if let Some(prod) = prod.as_mut() {
            trailing_update(stream, &mut a, prod, Panel { n, k0, kb, batch }, Product::Cholesky)?;
        }
    }
    Ok(())
}
