//! The factorisations through LAPACK's steps on the device: its vendor
//! solver's (cuSOLVER), or on WGSL devices (and on CUDA for the QR of
//! batches of small matrices) kiln's own kernels of the same steps
//! (`wgsl/`), on column-major matrices, with kiln's masked copies
//! (`masked.rs`) between them and NumPy's row-major order. A row-major
//! `a` read as column-major is `a^T`, which several routines use as it is:
//! `solve` and `inv` factor `a^T` and solve with its transpose, `det` does
//! not care, and for symmetric `a` (`cholesky`, `eigh`) the upper triangle
//! of `a^T` is the lower one of `a`. The factorisations never write the
//! caller's input: each works on a copy.

use kiln_core::{
    Backend, Buffer, BufferView, BufferViewMut, Language, Result, SolverArgs, SolverLayout, SolverOp, Stream,
};

use super::masked::{self, Mask, Strides};
use super::{LinalgFloat, MatrixShape, QrMode};
use crate::matmul::{MatmulShape, matmul};

/// Enqueue `op` on `rows` x `cols` matrices of `shape.batch`.
fn run<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    op: SolverOp,
    rows: usize,
    cols: usize,
    batch: usize,
    args: SolverArgs<'_, B, T>,
) -> Result<()> {
    let layout = SolverLayout { op, precision: T::DTYPE, rows, cols, batch };
    if B::LANGUAGE == Language::Wgsl || (B::LANGUAGE == Language::Cuda && super::wgsl::on_cuda(&layout)) {
        return super::wgsl::run(stream, &layout, args);
    }
    stream.vendor_solver(&layout, args)
}

/// A copy of `a` on `stream`.
fn copy_of<B: Backend, T: LinalgFloat>(stream: &Stream<B>, a: BufferView<'_, B, T>) -> Result<Buffer<B, T>> {
    let mut f = stream.alloc::<T>(a.len())?;
    stream.copy(&a, &mut f)?;
    Ok(f)
}

/// The transposes of `a`'s matrices (`a` holds `shape.batch` matrices of
/// `shape.cols` x `shape.rows`).
fn transposed<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: BufferView<'_, B, T>,
    shape: MatrixShape,
) -> Result<Buffer<B, T>> {
    let mut f = stream.alloc::<T>(shape.len())?;
    masked::transpose(stream, a, f.view_mut(), shape)?;
    Ok(f)
}

/// LU of the square matrices in `f` (column-major) in place: its pivots
/// (1-based) and statuses.
fn lu<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    f: &mut Buffer<B, T>,
    shape: MatrixShape,
) -> Result<(Buffer<B, i32>, Buffer<B, i32>)> {
    let mut piv = stream.alloc::<i32>(shape.batch * shape.rows)?;
    let mut info = stream.alloc::<i32>(shape.batch)?;
    let args = SolverArgs { a: f.view_mut(), b: None, pivots: Some(piv.view_mut()), info: Some(info.view_mut()) };
    run(stream, SolverOp::Lu, shape.rows, shape.cols, shape.batch, args)?;
    Ok((piv, info))
}

/// Row-major `n` x `nrhs` right-hand sides as column-major ones (the same
/// buffer's copy when `nrhs` is 1).
fn to_col_major<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    b: BufferView<'_, B, T>,
    batch: usize,
    n: usize,
    nrhs: usize,
) -> Result<Buffer<B, T>> {
    if nrhs == 1 { copy_of(stream, b) } else { transposed(stream, b, MatrixShape::new(batch, nrhs, n)) }
}

/// Column-major `n` x `nrhs` solutions into the row-major `x`.
fn from_col_major<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    y: &Buffer<B, T>,
    mut x: BufferViewMut<'_, B, T>,
    batch: usize,
    n: usize,
    nrhs: usize,
) -> Result<()> {
    if nrhs == 1 {
        stream.copy(y, &mut x)
    } else {
        masked::transpose(stream, y.view(), x, MatrixShape::new(batch, n, nrhs))
    }
}

/// The statuses of LU of `a` itself, from a transposed copy: for a
/// failure found on `a^T`, whose statuses name `a`'s rows, not its columns.
fn statuses_of_a<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: BufferView<'_, B, T>,
    shape: MatrixShape,
) -> Result<Vec<i32>> {
    let mut f = transposed(stream, a, shape)?;
    let (_, info) = lu(stream, &mut f, shape)?;
    info.to_vec()
}

pub(super) fn solve<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: BufferView<'_, B, T>,
    b: BufferView<'_, B, T>,
    x: BufferViewMut<'_, B, T>,
    shape: MatrixShape,
    nrhs: usize,
) -> Result<Vec<i32>> {
    let (n, batch) = (shape.rows, shape.batch);
    // a^T, column-major: solved with its transpose, which is a.
    let mut f = copy_of(stream, a)?;
    let (mut piv, info) = lu(stream, &mut f, shape)?;
    let mut y = to_col_major(stream, b, batch, n, nrhs)?;
    let args = SolverArgs { a: f.view_mut(), b: Some(y.view_mut()), pivots: Some(piv.view_mut()), info: None };
    run(stream, SolverOp::LuSolve { nrhs, transpose: true }, n, n, batch, args)?;
    from_col_major(stream, &y, x, batch, n, nrhs)?;
    let info = info.to_vec()?;
    if info.iter().all(|&i| i == 0) { Ok(info) } else { statuses_of_a(stream, a, shape) }
}

pub(super) fn inv<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: BufferView<'_, B, T>,
    mut out: BufferViewMut<'_, B, T>,
    shape: MatrixShape,
) -> Result<Vec<i32>> {
    let n = shape.rows;
    // (a^T)^-1, column-major, is a^-1 row-major.
    let mut f = copy_of(stream, a)?;
    let (mut piv, info) = lu(stream, &mut f, shape)?;
    masked::identity(stream, out.slice_mut(..)?, shape)?;
    let args = SolverArgs { a: f.view_mut(), b: Some(out), pivots: Some(piv.view_mut()), info: None };
    run(stream, SolverOp::LuSolve { nrhs: n, transpose: false }, n, n, shape.batch, args)?;
    let info = info.to_vec()?;
    if info.iter().all(|&i| i == 0) { Ok(info) } else { statuses_of_a(stream, a, shape) }
}

pub(super) fn lu_factor<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: BufferView<'_, B, T>,
    lu_out: BufferViewMut<'_, B, T>,
    pivots: BufferViewMut<'_, B, i32>,
    shape: MatrixShape,
) -> Result<()> {
    let mut f = transposed(stream, a, shape)?;
    let (piv, info) = lu(stream, &mut f, shape)?;
    masked::transpose(stream, f.view(), lu_out, shape)?;
    masked::zero_based(stream, piv.view(), pivots)?;
    // Statuses only say where U's diagonal is 0: not an error here.
    drop(info);
    Ok(())
}

/// Each matrix's diagonal, in f64, from the square matrices in `f`.
fn diagonal<B: Backend, T: LinalgFloat>(stream: &Stream<B>, f: &Buffer<B, T>, shape: MatrixShape) -> Result<Vec<f64>> {
    let n = shape.rows;
    let mut d = stream.alloc::<T>(shape.batch * n)?;
    let strides = Strides { batch: n * n, row: 0, col: n + 1 };
    masked::copy(stream, f.view(), d.view_mut(), MatrixShape::new(shape.batch, 1, n), strides, Mask::ALL)?;
    Ok(d.to_vec()?.into_iter().map(T::to_f64).collect())
}

pub(super) fn slogdet<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: BufferView<'_, B, T>,
    shape: MatrixShape,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let n = shape.rows;
    let mut f = copy_of(stream, a)?;
    let (piv, _) = lu(stream, &mut f, shape)?;
    let diag = diagonal(stream, &f, shape)?;
    let piv = piv.to_vec()?;
    let mut signs = Vec::with_capacity(shape.batch);
    let mut logs = Vec::with_capacity(shape.batch);
    for (d, p) in diag.chunks(n).zip(piv.chunks(n)) {
        let swaps = p.iter().enumerate().filter(|(i, p)| **p as usize != i + 1).count();
        let mut sign = if swaps % 2 == 0 { 1.0 } else { -1.0 };
        let mut log = 0.0;
        for &v in d {
            sign *= v.signum();
            log += v.abs().ln();
        }
        if d.contains(&0.0) {
            (sign, log) = (0.0, f64::NEG_INFINITY);
        }
        signs.push(sign);
        logs.push(log);
    }
    Ok((signs, logs))
}

pub(super) fn cholesky<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: BufferView<'_, B, T>,
    l: BufferViewMut<'_, B, T>,
    shape: MatrixShape,
) -> Result<Vec<i32>> {
    // a column-major, its lower triangle factored (NumPy reads a's lower
    // triangle), and the factor turned back to row-major with zeros above.
    let mut f = transposed(stream, a, shape)?;
    let mut info = stream.alloc::<i32>(shape.batch)?;
    let args = SolverArgs { a: f.view_mut(), b: None, pivots: None, info: Some(info.view_mut()) };
    run(stream, SolverOp::Cholesky { lower: true }, shape.rows, shape.cols, shape.batch, args)?;
    masked::copy(stream, f.view(), l, shape, Strides::col_major(shape.rows, shape.matrix_len()), Mask::LOWER)?;
    let mut info = info.to_vec()?;
    if info.iter().any(|&i| i != 0) {
        // cuSOLVER's blocked potrf may stop a column past the first pivot
        // that is not positive: the first diagonal entry of the factor that
        // is not positive (or NaN) names the minor exactly.
        let diag = diagonal(stream, &f, shape)?;
        for (status, d) in info.iter_mut().zip(diag.chunks(shape.rows.max(1))) {
            if let Some(j) = d.iter().position(|v| v.is_nan() || *v <= 0.0) {
                *status = if *status == 0 { 0 } else { (*status).min(j as i32 + 1) };
            }
        }
    }
    Ok(info)
}

pub(super) fn eigh<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: BufferView<'_, B, T>,
    w: BufferViewMut<'_, B, T>,
    v: Option<BufferViewMut<'_, B, T>>,
    shape: MatrixShape,
) -> Result<Vec<i32>> {
    let mut f = copy_of(stream, a)?;
    let mut info = stream.alloc::<i32>(shape.batch)?;
    let vectors = v.is_some();
    let args = SolverArgs { a: f.view_mut(), b: Some(w), pivots: None, info: Some(info.view_mut()) };
    // a's lower triangle is the upper one of a^T, column-major.
    run(stream, SolverOp::Eigh { vectors, lower: false }, shape.rows, shape.cols, shape.batch, args)?;
    if let Some(v) = v {
        masked::transpose(stream, f.view(), v, shape)?;
    }
    info.to_vec()
}

/// Householder QR of `a` (`shape`) into column-major `f` (`rows` x
/// `cols`), with its reflectors' scalars.
fn householder<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    f: &mut Buffer<B, T>,
    rows: usize,
    cols: usize,
    batch: usize,
) -> Result<Buffer<B, T>> {
    let mut tau = stream.alloc::<T>(batch * rows.min(cols))?;
    let args = SolverArgs { a: f.view_mut(), b: Some(tau.view_mut()), pivots: None, info: None };
    run(stream, SolverOp::Qr, rows, cols, batch, args)?;
    Ok(tau)
}

pub(super) fn qr<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: BufferView<'_, B, T>,
    q: BufferViewMut<'_, B, T>,
    r: BufferViewMut<'_, B, T>,
    shape: MatrixShape,
    mode: QrMode,
) -> Result<()> {
    let (m, n, batch) = (shape.rows, shape.cols, shape.batch);
    let k = shape.min_dim();
    let (qs, rs) = mode.shapes(shape);
    // a, column-major.
    let mut f = transposed(stream, a, MatrixShape::new(batch, n, m))?;
    let mut tau = householder(stream, &mut f, m, n, batch)?;
    // R: on and above the diagonal of f.
    masked::copy(stream, f.view(), r, rs, Strides::col_major(m, m * n), Mask::UPPER)?;
    // Q from the reflectors, in a column-major m x qcols matrix whose first
    // columns are f's (orgqr overwrites the rest).
    let qcols = qs.cols;
    let mut g = if qcols == n {
        f
    } else {
        let mut g = stream.alloc::<T>(batch * m * qcols)?;
        let cut = Mask { rows: n, ..Mask::ALL };
        masked::copy(
            stream,
            f.view(),
            g.view_mut(),
            MatrixShape::new(batch, qcols, m),
            Strides::row_major(MatrixShape::new(batch, n, m)),
            cut,
        )?;
        g
    };
    let args = SolverArgs { a: g.view_mut(), b: Some(tau.view_mut()), pivots: None, info: None };
    run(stream, SolverOp::QrQ { reflectors: k }, m, qcols, batch, args)?;
    masked::transpose(stream, g.view(), q, qs)
}

/// The identity permutation as LAPACK pivots (1-based), `n` per matrix.
fn no_pivots<B: Backend>(stream: &Stream<B>, batch: usize, n: usize) -> Result<Buffer<B, i32>> {
    let one: Vec<i32> = (1..=n as i32).collect();
    stream.upload(&one.repeat(batch))
}

pub(super) fn lstsq<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    a: BufferView<'_, B, T>,
    b: BufferView<'_, B, T>,
    x: BufferViewMut<'_, B, T>,
    shape: MatrixShape,
    nrhs: usize,
) -> Result<Vec<i32>> {
    let (m, n, batch) = (shape.rows, shape.cols, shape.batch);
    let tol = m.max(n) as f64 * T::EPSILON;
    // QR of a (m >= n) or of a^T (m < n), column-major: p x q with p >= q.
    let (p, q) = if m >= n { (m, n) } else { (n, m) };
    let mut f = if m >= n { transposed(stream, a, MatrixShape::new(batch, n, m))? } else { copy_of(stream, a)? };
    let mut tau = householder(stream, &mut f, p, q, batch)?;
    // R, q x q, column-major with zeros below: an "LU" whose L is the
    // identity, so that getrs with no pivots solves with R or R^T.
    let mut rp = stream.alloc::<T>(batch * q * q)?;
    let cut = Strides { batch: p * q, row: p, col: 1 };
    masked::copy(stream, f.view(), rp.view_mut(), MatrixShape::square(batch, q), cut, Mask::LOWER)?;
    let diag = diagonal(stream, &rp, MatrixShape::square(batch, q))?;
    // Q's first q columns over f.
    let args = SolverArgs { a: f.view_mut(), b: Some(tau.view_mut()), pivots: None, info: None };
    run(stream, SolverOp::QrQ { reflectors: q }, p, q, batch, args)?;
    let mut piv = no_pivots(stream, batch, q)?;
    if m >= n {
        // x = R^-1 Q^T b; f read row-major is Q^T (n x m).
        let mut y = stream.alloc::<T>(batch * n * nrhs)?;
        matmul(stream, &f, &b, &mut y, MatmulShape::new(n, nrhs, m).batch(batch))?;
        let mut yc = to_col_major(stream, y.view(), batch, n, nrhs)?;
        let args = SolverArgs { a: rp.view_mut(), b: Some(yc.view_mut()), pivots: Some(piv.view_mut()), info: None };
        run(stream, SolverOp::LuSolve { nrhs, transpose: false }, n, n, batch, args)?;
        from_col_major(stream, &yc, x, batch, n, nrhs)?;
    } else {
        // a = R^T Q^T: z = R^-T b, x = Q z; f read row-major is Q^T (m x n).
        let mut zc = to_col_major(stream, b, batch, m, nrhs)?;
        let args = SolverArgs { a: rp.view_mut(), b: Some(zc.view_mut()), pivots: Some(piv.view_mut()), info: None };
        run(stream, SolverOp::LuSolve { nrhs, transpose: true }, m, m, batch, args)?;
        let z = if nrhs == 1 { zc } else { transposed(stream, zc.view(), MatrixShape::new(batch, m, nrhs))? };
        let mut x = x;
        matmul(stream, &f, &z, &mut x, MatmulShape::new(n, nrhs, m).batch(batch).transpose_a())?;
    }
    Ok(diag.chunks(q).map(|d| super::status::negligible_diagonal(d, tol)).collect())
}
