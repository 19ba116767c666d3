//! `geqrf` and `orgqr` on WGSL: see the [module docs](super).
//!
//! A batch whose matrices one workgroup walks within [`LOOP_BUDGET`]
//! iterations per invocation takes one launch (`qr.wgsl`, `orgqr.wgsl`);
//! larger matrices take one or two launches per reflector, each column's
//! update its own workgroup (`qr_step.wgsl`, `orgqr_step.wgsl`). The
//! one-launch kernels have CUDA twins (`qr.cu`, `orgqr.cu`), which CUDA
//! devices take for batches of small matrices ([`on_cuda`](super::on_cuda)).

use kiln_core::{Args, Backend, BufferViewMut, Result, Stream, View, ViewMut};

use super::{LOOP_BUDGET, block, grid, kernel, kernel_twin, launch};
use crate::linalg::LinalgFloat;

/// The loop iterations one invocation of `qr.wgsl` runs on an `m` x `n`
/// matrix with workgroups of `bs`: per column, its reductions and, for
/// each column it updates, two walks down the rows.
fn geqrf_iterations(m: usize, n: usize, bs: usize) -> usize {
    let log = bs.trailing_zeros() as usize;
    (0..m.min(n)).map(|j| 3 * (m - j).div_ceil(bs) + 2 * log + (n - j - 1).div_ceil(bs) * 2 * (m - j)).sum()
}

/// The same for `orgqr.wgsl` with `k` reflectors.
fn orgqr_iterations(m: usize, q: usize, k: usize, bs: usize) -> usize {
    (q - k) * m.div_ceil(bs) + (0..k).map(|j| (q - j - 1).div_ceil(bs) * 2 * (m - j) + m.div_ceil(bs)).sum::<usize>()
}

/// Householder QR of the `batch` column-major `m` x `n` matrices in `a`,
/// in place (R on and above the diagonal, the reflectors below it), the
/// reflectors' scalars into `tau` (`min(m, n)` per matrix).
pub(super) fn geqrf<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    mut a: BufferViewMut<'_, B, T>,
    mut tau: BufferViewMut<'_, B, T>,
    m: usize,
    n: usize,
    batch: usize,
) -> Result<()> {
    let what = || format!("geqrf of {batch} x {m}x{n} {} with kiln's WGSL kernels", T::DTYPE);
    let matrices = grid(stream, batch, &what)?;
    let bs = block(m.max(n));
    if geqrf_iterations(m, n, bs as usize) <= LOOP_BUDGET {
        let k = kernel_twin::<T>(
            "qr",
            concat!(include_str!("householder.wgsl"), include_str!("qr.wgsl")),
            &[("a", "T", true), ("tau_out", "T", true)],
            concat!(include_str!("householder.cu"), include_str!("qr.cu")),
        );
        let args =
            Args::new().arg(a).arg(tau).scalar(m as u32).scalar(n as u32).scalar(batch as u32).scalar(matrices.0);
        return launch(stream, &k, matrices, bs, args);
    }
    let step = kernel::<T>(
        "qr_step",
        concat!(include_str!("householder.wgsl"), include_str!("qr_step.wgsl")),
        &[("a", "T", true), ("tau_out", "T", true)],
    );
    for j in 0..m.min(n) {
        // Column j's reflector, one workgroup per matrix, then its
        // application, one workgroup per column right of it (which reads
        // no `gx`: it finds its column from the grid's width).
        for house in [true, false] {
            let mut args = Args::new().arg(a.view_mut()).arg(tau.view_mut());
            for p in [m as u32, n as u32, j as u32, batch as u32, matrices.0, u32::from(house)] {
                args = args.scalar(p);
            }
            let columns = batch * (n - j - 1);
            if house {
                launch(stream, &step, matrices, block(m - j), args)?;
            } else if columns > 0 {
                launch(stream, &step, grid(stream, columns, &what)?, block(m - j), args)?;
            }
        }
    }
    Ok(())
}

/// The first `n` columns of Q (`n <= m`) from `reflectors` reflectors in
/// the first columns of each column-major `m` x `n` matrix in `a` and
/// their scalars in `tau` (`reflectors` per matrix), over `a`.
pub(super) fn orgqr<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    mut a: BufferViewMut<'_, B, T>,
    tau: BufferViewMut<'_, B, T>,
    m: usize,
    n: usize,
    reflectors: usize,
    batch: usize,
) -> Result<()> {
    let what = || format!("orgqr of {batch} x {m}x{n} {} with kiln's WGSL kernels", T::DTYPE);
    let k = reflectors;
    let bs = block(m.max(n));
    if orgqr_iterations(m, n, k, bs as usize) <= LOOP_BUDGET {
        let kern = kernel_twin::<T>(
            "orgqr",
            concat!(include_str!("householder.wgsl"), include_str!("orgqr.wgsl")),
            &[("a", "T", true), ("tau", "T", false)],
            concat!(include_str!("householder.cu"), include_str!("orgqr.cu")),
        );
        let matrices = grid(stream, batch, &what)?;
        let args = Args::new()
            .arg(a)
            .arg(tau)
            .scalar(m as u32)
            .scalar(n as u32)
            .scalar(k as u32)
            .scalar(batch as u32)
            .scalar(matrices.0);
        return launch(stream, &kern, matrices, bs, args);
    }
    let step = kernel::<T>(
        "orgqr_step",
        concat!(include_str!("householder.wgsl"), include_str!("orgqr_step.wgsl")),
        &[("a", "T", true), ("tau", "T", false)],
    );
    // (lo, apply, init) of each launch, in order.
    let mut launches: Vec<(usize, bool, bool)> = (0..k).rev().map(|j| (j + 1, true, j + 1 == k)).collect();
    launches.push((0, false, k == 0));
    for (lo, apply, init) in launches {
        let total = batch * (n - lo);
        if total == 0 {
            continue;
        }
        let args = Args::new()
            .arg(a.view_mut())
            .arg(tau.view())
            .scalar(m as u32)
            .scalar(n as u32)
            .scalar(k as u32)
            .scalar(lo as u32)
            .scalar(batch as u32)
            .scalar(u32::from(apply))
            .scalar(u32::from(init));
        launch(stream, &step, grid(stream, total, &what)?, bs, args)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_loop_counts_grow_as_the_kernels_walk() {
        // One reflector of a 2 x 1 matrix: three reductions' walks of one
        // step, the tree of a 32-wide workgroup twice, no column to update.
        assert_eq!(geqrf_iterations(2, 1, 32), 3 + 10);
        // A square matrix of 200 in workgroups of 256: about 200^2 walks.
        let big = geqrf_iterations(200, 200, 256);
        assert!((40_000..45_000).contains(&big), "{big}");
        assert!(geqrf_iterations(300, 200, 256) > LOOP_BUDGET);
        assert_eq!(orgqr_iterations(4, 4, 0, 32), 4);
    }
}
