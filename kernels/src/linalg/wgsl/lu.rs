//! `getrf` and `getrs` on WGSL: see the [module docs](super).

use kiln_core::{Args, Backend, BufferViewMut, Result, Stream, View, ViewMut};

use super::{Panel, Product, grid, kernel, launch, launch_items, panel_width, trailing_update};
use crate::linalg::LinalgFloat;

/// The largest order `lu_small.wgsl` factors whole in workgroup memory,
/// and its workgroups' width.
const SMALL: usize = 32;

/// Invocations per workgroup for an LU panel of `rows` rows: a power of
/// two from 32 to `widest`.
fn panel_block(rows: usize, widest: u32) -> u32 {
    rows.next_power_of_two().clamp(32, widest as usize) as u32
}

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
    // The panel's workgroups: as wide as its rows ask, up to 1024 where
    // the device allows.
    let limits = &stream.device().info().limits;
    let widest = [1024, limits.max_threads_per_block, limits.max_block[0]].into_iter().min().unwrap_or(256).max(32);
    let widest = 1u32 << (31 - widest.leading_zeros());
    let source = include_str!("lu_panel.wgsl").replace("PANEL_BLOCK", &widest.to_string());
    let panel = kernel::<T>(
        &format!("lu_panel_{widest}"),
        &source,
        &[("a", "T", true), ("piv", "i32", true), ("info", "i32", true)],
    );
    // Matrices of SMALL or less: whole in workgroup memory, one launch.
    let small = n <= SMALL;
    let panel = if small {
        kernel::<T>(
            "lu_small",
            include_str!("lu_small.wgsl"),
            &[("a", "T", true), ("piv", "i32", true), ("info", "i32", true)],
        )
    } else {
        panel
    };
    let rest = kernel::<T>("lu_rest", include_str!("lu_rest.wgsl"), &[("a", "T", true), ("piv", "i32", false)]);
    let nb = if small { SMALL } else { panel_width(n) };
    let mut prod = if n > nb { Some(stream.alloc::<T>(batch * (n - nb) * (n - nb))?) } else { None };
    let matrices = grid(stream, batch, &what)?;
    for k0 in (0..n).step_by(nb) {
        let kb = nb.min(n - k0);
        let args = Args::new()
            .arg(a.view_mut())
            .arg(pivots.view_mut())
            .arg(info.view_mut())
            .scalar(n as u32)
            .scalar(k0 as u32)
            .scalar(kb as u32)
            .scalar(batch as u32)
            .scalar(matrices.0);
        let block = if small { SMALL as u32 } else { panel_block(n - k0, widest) };
        launch(stream, &panel, matrices, block, args)?;
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
        launch_items(stream, &rest, total, args, &what)?;
        if let Some(prod) = prod.as_mut() {
            trailing_update(stream, &mut a, prod, Panel { n, k0, kb, batch }, Product::Lu)?;
        }
    }
    Ok(())
}

/// Unknowns per block of a substitution (`lu_solve.wgsl`'s workgroup).
const SOLVE_BLOCK: usize = 64;

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
        concat!(include_str!("lu_tri.wgsl"), include_str!("lu_solve.wgsl")),
        &[("a", "T", false), ("piv", "i32", false), ("b", "T", true)],
    );
    let update = kernel::<T>(
        "lu_solve_update",
        concat!(include_str!("lu_tri.wgsl"), include_str!("lu_solve_update.wgsl")),
        &[("a", "T", false), ("b", "T", true)],
    );
    let rhs = grid(stream, total, &what)?;
    let mut b = b;
    let phases: &[u32] = if transpose { &[3, 4, 5] } else { &[0, 1, 2] };
    for &phase in phases {
        // The swaps' one launch, or a substitution's blocks in its order.
        let mut blocks: Vec<usize> =
            if phase == 0 || phase == 5 { vec![0] } else { (0..n).step_by(SOLVE_BLOCK).collect() };
        if phase == 2 || phase == 4 {
            blocks.reverse();
        }
        for j0 in blocks {
            let kb = SOLVE_BLOCK.min(n - j0);
            let scalars = [n, nrhs, total, rhs.0 as usize, phase as usize, j0, kb].map(|v| v as u32);
            let mut args = Args::new().arg(a.view()).arg(pivots.view()).arg(b.view_mut());
            for v in scalars {
                args = args.scalar(v);
            }
            launch(stream, &solve, rhs, SOLVE_BLOCK as u32, args)?;
            let rows = if phase == 0 || phase == 5 {
                0
            } else if phase == 1 || phase == 3 {
                n - j0 - kb
            } else {
                j0
            };
            if rows > 0 {
                let mut args = Args::new().arg(a.view()).arg(b.view_mut());
                for v in scalars {
                    args = args.scalar(v);
                }
                launch_items(stream, &update, total * rows, args, &what)?;
            }
        }
    }
    Ok(())
}
