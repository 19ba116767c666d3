//! kiln's own factorisation kernels in WGSL: the LAPACK steps the vendor
//! path asks of cuSOLVER ([`SolverOp`]), on the same column-major batches
//! with the same pivots, scalars and statuses, so that `vendor.rs` runs
//! unchanged on wgpu. CUDA devices take the one-launch QR kernels' CUDA
//! twins for batches of small matrices ([`on_cuda`]), where cuSOLVER has
//! no batched orgqr.
//!
//! - `getrf` ([`lu`]): blocked right-looking LU with partial pivoting.
//!   Matrices of order 32 or less are factored whole in workgroup memory,
//!   one workgroup each (`lu_small.wgsl`). Each panel of 64 columns (fewer for the largest orders) is factored
//!   by one workgroup per matrix (`lu_panel.wgsl`); its row swaps and the
//!   solve of U's panel rows follow, one invocation per column
//!   (`lu_rest.wgsl`); the trailing update is kiln's matrix product
//!   ([`matmul`]) subtracted from the trailing block (`subtract.wgsl`).
//! - `getrs`: the triangular solves in blocks of 64 unknowns, each block
//!   solved by one workgroup per right-hand side, its values and
//!   coefficients in registers (`lu_solve.wgsl`), then taken out of the
//!   rows still to come, one invocation per row (`lu_solve_update.wgsl`).
//! - `potrf` ([`cholesky`]): blocked the same way, the lower triangle:
//!   one workgroup per matrix factors the panel's 64 x 64 diagonal block
//!   in workgroup memory (`chol_panel.wgsl`), one invocation per row below
//!   it solves for `L21` (`chol_trsm.wgsl`), then the product `L21 L21^T`.
//! - `geqrf` and `orgqr` ([`qr`]): Householder reflectors as LAPACK's
//!   larfg makes them (`householder.wgsl`): one workgroup per matrix and
//!   one launch for small matrices (`qr.wgsl`, `orgqr.wgsl`), one or two
//!   launches per reflector for large ones, each column's update its own
//!   workgroup (`qr_step.wgsl`, `orgqr_step.wgsl`).
//! - `syevd`'s results ([`eigh`]) by cyclic Jacobi sweeps, one workgroup
//!   per matrix and one launch per sweep, rounds of disjoint rotations at
//!   once, for orders up to [`eigh::MAX_ORDER`] (`eigh_jacobi.wgsl`);
//!   larger orders are `Unsupported`, naming the tridiagonal reduction
//!   they would need.
//!
//! No invocation plans more than [`LOOP_BUDGET`] loop iterations in one
//! launch (see there).
//!
//! Every index is 32 bits, as WGSL's are: a batch past 2^32 elements is
//! `Unsupported`.
//!
//! [`matmul`]: crate::matmul::matmul

mod cholesky;
mod eigh;
mod lu;
mod qr;

use std::sync::Arc;

use kiln_core::{
    Args, Backend, Buffer, BufferViewMut, Error, LaunchConfig, MatmulShape, MatrixLayout, Program, Result, SolverArgs,
    SolverLayout, SolverOp, Stream, View, ViewMut,
};

use super::LinalgFloat;
use crate::launch::{cuda_source, program, wgsl_preamble};

/// Columns per panel of the blocked factorisations of order `n`: 64
/// (matrices of that order or less are one panel, one launch), or fewer
/// where a panel's workgroup would walk past [`LOOP_BUDGET`] (per column,
/// its rows once for the pivot and once per panel column to update).
fn panel_width(n: usize) -> usize {
    let walks = n.div_ceil(block(n) as usize);
    [64, 32, 16, 8].into_iter().find(|&kb| kb * (walks * (kb + 2) + 20) <= LOOP_BUDGET).unwrap_or(4)
}

/// The most loop iterations a kernel here plans for one invocation:
/// Mesa's software Vulkan driver (lavapipe, llvmpipe) ends every shader
/// invocation's loops after 65535 iterations in all, silently, so a
/// kernel that one workgroup would walk further is split into launches.
const LOOP_BUDGET: usize = 40_000;

/// What every kernel here starts with after its bindings.
const COMMON: &str = include_str!("common.wgsl");

/// Enqueue `layout`'s step on `args`, as [`Stream::vendor_solver`] would
/// on a device with a vendor solver: the same checks, operands and results.
pub(crate) fn run<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    layout: &SolverLayout,
    args: SolverArgs<'_, B, T>,
) -> Result<()> {
    let what = || format!("linalg {layout} with kiln's own kernels");
    layout.check()?;
    if T::DTYPE != layout.precision {
        return Err(Error::invalid(
            what(),
            format!("the matrices hold {}, the layout wants {}", T::DTYPE, layout.precision),
        ));
    }
    let spans = layout.spans().ok_or_else(|| Error::invalid(what(), "the layout overflows"))?;
    let SolverArgs { a, b, pivots, info } = args;
    let limit = u32::MAX as usize;
    if [spans.a, spans.b, spans.pivots, spans.info].iter().any(|&s| s > limit) {
        return Err(Error::unsupported(
            B::KIND,
            what(),
            "WGSL kernels index with 32 bits; the batch spans more elements",
        ));
    }
    let a = operand(Some(a), "a", spans.a, &what)?.ok_or_else(|| Error::invalid(what(), "no matrices"))?;
    let b = operand(b, "b", spans.b, &what)?;
    let pivots = operand(pivots, "pivots", spans.pivots, &what)?;
    let info = operand(info, "info", spans.info, &what)?;
    let missing = |name: &str| Error::invalid(what(), format!("{} needs {name}", layout.op.name()));
    let (rows, cols, batch) = (layout.rows, layout.cols, layout.batch);
    match layout.op {
        SolverOp::Lu => lu::getrf(
            stream,
            a,
            pivots.ok_or_else(|| missing("pivots"))?,
            info.ok_or_else(|| missing("info"))?,
            rows,
            batch,
        ),
        SolverOp::LuSolve { nrhs, transpose } => {
            let pivots = pivots.ok_or_else(|| missing("pivots"))?;
            lu::getrs(stream, a, pivots, b.ok_or_else(|| missing("b"))?, rows, nrhs, batch, transpose)
        }
        SolverOp::Cholesky { lower: true } => {
            cholesky::potrf(stream, a, info.ok_or_else(|| missing("info"))?, rows, batch)
        }
        SolverOp::Cholesky { lower: false } => {
            Err(Error::unsupported(B::KIND, what(), "kiln's WGSL potrf factors the lower triangle only"))
        }
        SolverOp::Qr => qr::geqrf(stream, a, b.ok_or_else(|| missing("b"))?, rows, cols, batch),
        SolverOp::QrQ { reflectors } => match b {
            Some(tau) => qr::orgqr(stream, a, tau, rows, cols, reflectors, batch),
            // No reflectors: Q's columns are the identity's.
            None => {
                let mut none = stream.alloc::<T>(1)?;
                qr::orgqr(stream, a, none.view_mut(), rows, cols, 0, batch)
            }
        },
        SolverOp::Eigh { lower, .. } => {
            let w = b.ok_or_else(|| missing("b"))?;
            eigh::syevj(stream, a, w, info.ok_or_else(|| missing("info"))?, rows, batch, lower)
        }
    }
}

/// `view`, checked to hold the `span` elements the step uses; `None`
/// where the step does not use it, an error where it does and `view` is
/// missing.
fn operand<'a, B: Backend, T: kiln_core::Element>(
    view: Option<BufferViewMut<'a, B, T>>,
    name: &str,
    span: usize,
    what: &dyn Fn() -> String,
) -> Result<Option<BufferViewMut<'a, B, T>>> {
    match view {
        _ if span == 0 => Ok(None),
        None => Err(Error::invalid(what(), format!("the step needs `{name}` ({span} elements)"))),
        Some(v) if v.len() < span => {
            Err(Error::LengthMismatch { what: format!("{}: {name}", what()), expected: span, actual: v.len() })
        }
        Some(v) => Ok(Some(v)),
    }
}

/// The program of kernel `file` (one of this folder's sources) on `T`,
/// with `buffers` its bindings in order: (name, element type, writable).
fn kernel<T: LinalgFloat>(file: &str, body: &str, buffers: &[(&str, &str, bool)]) -> Arc<Program> {
    let name = format!("kiln_linalg_{file}_{}", T::DTYPE);
    program(&name, || {
        let source = format!("{}{COMMON}\n{body}", wgsl_preamble(T::DTYPE, buffers));
        Program::new(&name).wgsl(source).define("KERNEL", &name)
    })
}

/// [`kernel`] with a CUDA twin (`cuda`, after kiln's CUDA prelude), for
/// the steps CUDA devices take here too ([`on_cuda`]).
fn kernel_twin<T: LinalgFloat>(file: &str, body: &str, buffers: &[(&str, &str, bool)], cuda: &str) -> Arc<Program> {
    let name = format!("kiln_linalg_{file}_{}", T::DTYPE);
    program(&name, || {
        let source = format!("{}{COMMON}\n{body}", wgsl_preamble(T::DTYPE, buffers));
        Program::new(&name).wgsl(source).cuda(cuda_source(T::DTYPE, cuda)).define("KERNEL", &name)
    })
}

/// The largest order whose QR a CUDA device takes with kiln's kernels
/// ([`on_cuda`]): one block per matrix, one launch each for geqrf and
/// orgqr (within [`LOOP_BUDGET`], so never the per-reflector steps).
const CUDA_QR_ORDER: usize = 64;

/// Whether a CUDA device takes `layout`'s step with kiln's own kernels
/// instead of its vendor solver: QR (geqrf and orgqr) of a batch of
/// matrices of order at most [`CUDA_QR_ORDER`]. cuSOLVER has no batched
/// orgqr, and one call per matrix costs about 0.1 ms (1.2 s for 10^4
/// matrices of 32, on the H200).
pub(crate) fn on_cuda(layout: &SolverLayout) -> bool {
    let small = layout.batch > 1 && layout.rows <= CUDA_QR_ORDER && layout.cols <= CUDA_QR_ORDER;
    let indexed = layout.spans().is_some_and(|s| s.a <= u32::MAX as usize && s.b <= u32::MAX as usize);
    matches!(layout.op, SolverOp::Qr | SolverOp::QrQ { .. }) && small && indexed
}

/// Invocations per workgroup for a kernel whose workgroup walks `len`
/// elements: a power of two from 32 to 256.
fn block(len: usize) -> u32 {
    len.next_power_of_two().clamp(32, 256) as u32
}

/// The grid of `items` workgroups, `x` as wide as the device allows.
fn grid<B: Backend>(stream: &Stream<B>, items: usize, what: &dyn Fn() -> String) -> Result<(u32, u32)> {
    let max = stream.device().info().limits.max_grid;
    let gx = items.clamp(1, max[0] as usize);
    let gy = items.div_ceil(gx);
    if gy > max[1] as usize {
        return Err(Error::unsupported(B::KIND, what(), format!("{items} workgroups exceed the device's grid")));
    }
    Ok((gx as u32, gy as u32))
}

/// Invocations per workgroup of the kernels with one invocation per item
/// (a column or row of each matrix of the batch): 32, so that the few
/// thousand long-running items of one large matrix (L21's rows, U12's
/// columns) spread over twice the compute units that 64 would reach.
const ITEMS_BLOCK: u32 = 32;

/// Enqueue `kernel` with one invocation per item, `total` of them, in
/// workgroups of [`ITEMS_BLOCK`]: the kernel forms its item from its
/// global invocation id and returns past `total`.
fn launch_items<B: Backend>(
    stream: &Stream<B>,
    kernel: &Arc<Program>,
    total: usize,
    args: Args<'_, B>,
    what: &dyn Fn() -> String,
) -> Result<()> {
    let groups = grid(stream, total.div_ceil(ITEMS_BLOCK as usize), what)?;
    launch(stream, kernel, groups, ITEMS_BLOCK, args)
}

/// Enqueue `kernel` over `grid` workgroups of `block` invocations.
fn launch<B: Backend>(
    stream: &Stream<B>,
    kernel: &Arc<Program>,
    grid: (u32, u32),
    block: u32,
    args: Args<'_, B>,
) -> Result<()> {
    let kernel = stream.device().kernel(kernel)?;
    // SAFETY: each kernel here indexes matrix `g < batch` (or right-hand
    // side `w < batch * nrhs`) of its bindings at offsets below
    // `batch * rows * cols` (`batch * nrhs * n` for right-hand sides,
    // `batch * n` for pivots, `batch` for statuses and tolerances), which
    // the operands hold (`run` checked them against `SolverLayout::spans`)
    // and the scratch buffers (the products', Jacobi's matrices and
    // tolerances) are allocated to; every offset is below 2^32 (checked by
    // `run`); workgroups and invocations past the batch return at once.
    // Pivots are read only where getrf's panels wrote them, or where the
    // caller (`vendor.rs`) passes getrf's or the identity's, in `1..=n`.
    // Bindings are distinct buffers, or views of one buffer all read-only.
    unsafe { stream.launch(&kernel, LaunchConfig::new(grid, block), args) }
}

/// Which product a trailing update subtracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Product {
    /// LU's `A22 -= L21 U12`, the whole block.
    Lu,
    /// Cholesky's `A22 -= L21 L21^T`, its lower triangle.
    Cholesky,
}

/// One panel of a blocked factorisation: columns `k0 .. k0 + kb` of each
/// of `batch` matrices of order `n`.
#[derive(Debug, Clone, Copy)]
struct Panel {
    n: usize,
    k0: usize,
    kb: usize,
    batch: usize,
}

/// The trailing update after `panel` of the matrices in `a`: the block
/// from `(r0, r0)`, `r0 = k0 + kb`, less the product of the panel's
/// blocks, formed by kiln's matrix product in `prod` (at least
/// `batch (n - r0)^2` elements).
fn trailing_update<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: &mut BufferViewMut<'_, B, T>,
    prod: &mut Buffer<B, T>,
    panel: Panel,
    product: Product,
) -> Result<()> {
    let Panel { n, k0, kb, batch } = panel;
    let r0 = k0 + kb;
    let m = n - r0;
    if m == 0 {
        return Ok(());
    }
    // A column-major block read row-major is its transpose, so the
    // column-major product C = X Y is the row-major C^T = Y^T X^T.
    let strided = |transposed| MatrixLayout { transposed, ld: n, stride: n * n };
    let dense = MatrixLayout::dense(m, m, false);
    let (shape, a_at, b_at) = match product {
        // Y^T = U12^T (m x kb) at (k0, r0); X^T = L21^T (kb x m) at (r0, k0).
        Product::Lu => {
            (MatmulShape::new(m, m, kb).layouts(strided(false), strided(false), dense), r0 * n + k0, k0 * n + r0)
        }
        // C = L21 L21^T is symmetric: L21 (m x kb) read from L21^T
        // (stored transposed), times L21^T, both at (r0, k0).
        Product::Cholesky => {
            (MatmulShape::new(m, m, kb).layouts(strided(true), strided(false), dense), k0 * n + r0, k0 * n + r0)
        }
    };
    let shape = shape.batch(batch);
    let [sa, sb, sc] = shape.spans().ok_or_else(|| Error::invalid("linalg trailing update", "overflows"))?;
    {
        let whole = a.view();
        let x = whole.slice(a_at..a_at + sa)?;
        let y = whole.slice(b_at..b_at + sb)?;
        let mut c = prod.slice_mut(..sc)?;
        crate::matmul::matmul(stream, &x, &y, &mut c, shape)?;
    }
    let total = batch * m * m;
    let what = || format!("linalg trailing update of {batch} x {n}x{n} from row {r0}");
    let kernel = kernel::<T>("subtract", include_str!("subtract.wgsl"), &[("a", "T", true), ("prod", "T", false)]);
    let groups = crate::launch::blocks(total, 256, stream.device().info().limits.max_grid[0]) as usize;
    let args = Args::new()
        .arg(a.view_mut())
        .arg(prod.slice(..sc)?)
        .scalar(n as u32)
        .scalar(r0 as u32)
        .scalar(m as u32)
        .scalar(total as u32)
        .scalar(u32::from(product == Product::Cholesky));
    launch(stream, &kernel, grid(stream, groups, &what)?, 256, args)
}
