//! The CPU backend's factorisations: faer's (partial-pivoting LU,
//! Cholesky, Householder QR, the symmetric eigensolver), one matrix per
//! rayon task over the batch, each matrix read in place as a row-major
//! view. Each routine writes one status per matrix (the codes of
//! [`super::status`]), which the caller reads back and turns into errors.

use faer::linalg::solvers::{DenseSolveCore, Solve, SolveLstsq};
use faer::{Mat, MatMut, MatRef, Side};
use kiln_core::{Error, HostArgs, HostClosure, Program, Result};
use rayon::prelude::*;

use super::task::Task;

/// The element types faer factors here.
pub(super) trait Float: LinalgFloat + faer::traits::RealField {}

impl Float for f32 {}
impl Float for f64 {}
use super::{LinalgFloat, MatrixShape, QrMode};

/// The host program running `task` over a batch of `shape` in `T`.
pub(super) fn program<T: Float>(task: Task, shape: MatrixShape) -> Program {
    let key = format!("kiln_linalg_cpu_{}_{task:?}_{}x{}x{}", T::DTYPE, shape.batch, shape.rows, shape.cols);
    let run = move |args: &mut HostArgs<'_>| run::<T>(task, shape, args);
    Program::new(&key).host_closure(HostClosure::new(key.clone(), run))
}

/// Slices of `len` elements per matrix, or an error naming the operand.
fn chunks<'a, T>(data: &'a [T], each: usize, shape: &MatrixShape, name: &str) -> Result<std::slice::Chunks<'a, T>> {
    if data.len() < each * shape.batch {
        return Err(Error::invalid(
            format!("linalg on the cpu: {name}"),
            format!("{} elements for {} matrices of {each}", data.len(), shape.batch),
        ));
    }
    Ok(data[..each * shape.batch].chunks(each.max(1)))
}

fn chunks_mut<'a, T>(
    data: &'a mut [T],
    each: usize,
    shape: &MatrixShape,
    name: &str,
) -> Result<std::slice::ChunksMut<'a, T>> {
    if data.len() < each * shape.batch {
        return Err(Error::invalid(
            format!("linalg on the cpu: {name}"),
            format!("{} elements for {} matrices of {each}", data.len(), shape.batch),
        ));
    }
    Ok(data[..each * shape.batch].chunks_mut(each.max(1)))
}

fn run<T: Float>(task: Task, shape: MatrixShape, args: &mut HostArgs<'_>) -> Result<()> {
    let (m, n) = (shape.rows, shape.cols);
    let a: Vec<&[T]> = chunks(args.input::<T>(0)?, m * n, &shape, "a")?.collect();
    match task {
        Task::Solve { nrhs } | Task::Lstsq { nrhs } => {
            let b: Vec<&[T]> = chunks(args.input::<T>(1)?, m * nrhs, &shape, "b")?.collect();
            let x: Vec<&mut [T]> = chunks_mut(args.output::<T>(2)?, n * nrhs, &shape, "x")?.collect();
            let status = args.output::<i32>(3)?;
            let f = if matches!(task, Task::Solve { .. }) { solve::<T> } else { lstsq::<T> };
            (a, b, x, status).into_par_iter().for_each(|(a, b, x, s)| *s = f(a, b, x, m, n, nrhs));
        }
        Task::LuFactor => {
            let lu: Vec<&mut [T]> = chunks_mut(args.output::<T>(1)?, n * n, &shape, "lu")?.collect();
            let piv: Vec<&mut [i32]> = chunks_mut(args.output::<i32>(2)?, n, &shape, "pivots")?.collect();
            let status = args.output::<i32>(3)?;
            (a, lu, piv, status).into_par_iter().for_each(|(a, lu, piv, s)| *s = lu_factor(a, lu, piv, n));
        }
        Task::Inv => {
            let out: Vec<&mut [T]> = chunks_mut(args.output::<T>(1)?, n * n, &shape, "inverse")?.collect();
            let status = args.output::<i32>(2)?;
            (a, out, status).into_par_iter().for_each(|(a, out, s)| *s = inv(a, out, n));
        }
        Task::Slogdet => {
            let sign = args.output::<T>(1)?;
            let logdet = args.output::<T>(2)?;
            let status = args.output::<i32>(3)?;
            (a, sign, logdet, status).into_par_iter().for_each(|(a, sign, logdet, s)| {
                let (sg, l) = slogdet(a, n);
                (*sign, *logdet, *s) = (sg, l, 0);
            });
        }
        Task::Cholesky => {
            let l: Vec<&mut [T]> = chunks_mut(args.output::<T>(1)?, n * n, &shape, "l")?.collect();
            let status = args.output::<i32>(2)?;
            (a, l, status).into_par_iter().for_each(|(a, l, s)| *s = cholesky(a, l, n));
        }
        Task::Qr { mode } => {
            let (qs, rs) = mode.shapes(shape);
            let q: Vec<&mut [T]> = chunks_mut(args.output::<T>(1)?, qs.matrix_len(), &shape, "q")?.collect();
            let r: Vec<&mut [T]> = chunks_mut(args.output::<T>(2)?, rs.matrix_len(), &shape, "r")?.collect();
            let status = args.output::<i32>(3)?;
            (a, q, r, status).into_par_iter().for_each(|(a, q, r, s)| *s = qr(a, q, r, m, n, mode));
        }
        Task::Eigh { vectors } => {
            let w: Vec<&mut [T]> = chunks_mut(args.output::<T>(1)?, n, &shape, "w")?.collect();
            if vectors {
                let v: Vec<&mut [T]> = chunks_mut(args.output::<T>(2)?, n * n, &shape, "v")?.collect();
                let status = args.output::<i32>(3)?;
                (a, w, v, status).into_par_iter().for_each(|(a, w, v, s)| *s = eigh(a, w, Some(v), n));
            } else {
                let status = args.output::<i32>(2)?;
                (a, w, status).into_par_iter().for_each(|(a, w, s)| *s = eigh(a, w, None, n));
            }
        }
    }
    Ok(())
}

/// `m` into the row-major `out`.
fn store<T: Float>(m: MatRef<'_, T>, out: &mut [T]) {
    let mut view = MatMut::from_row_major_slice_mut(out, m.nrows(), m.ncols());
    view.copy_from(m);
}

/// 1 + the first column whose pivot in `u` is exactly zero, or 0.
fn zero_pivot<T: Float>(u: MatRef<'_, T>) -> i32 {
    (0..u.nrows().min(u.ncols())).find(|&i| u[(i, i)] == T::from_f64(0.0)).map_or(0, |i| i as i32 + 1)
}

fn solve<T: Float>(a: &[T], b: &[T], x: &mut [T], _m: usize, n: usize, nrhs: usize) -> i32 {
    let lu = MatRef::from_row_major_slice(a, n, n).partial_piv_lu();
    let status = zero_pivot(lu.U());
    if status == 0 {
        store(lu.solve(MatRef::from_row_major_slice(b, n, nrhs)).as_ref(), x);
    }
    status
}

/// LAPACK's pivots (0-based: row `i` swapped with row `piv[i]`, in order)
/// for the permutation `fwd` (row `i` of the factored matrix is row
/// `fwd[i]` of the input).
pub(super) fn swaps(fwd: &[usize], piv: &mut [i32]) {
    let n = fwd.len();
    // `at[k]`: the input row now at position k; `pos[r]`: where input row r is.
    let mut at: Vec<usize> = (0..n).collect();
    let mut pos: Vec<usize> = (0..n).collect();
    for i in 0..n {
        let j = pos[fwd[i]];
        piv[i] = j as i32;
        let (ri, rj) = (at[i], at[j]);
        at.swap(i, j);
        pos[ri] = j;
        pos[rj] = i;
    }
}

fn lu_factor<T: Float>(a: &[T], out: &mut [T], piv: &mut [i32], n: usize) -> i32 {
    let lu = MatRef::from_row_major_slice(a, n, n).partial_piv_lu();
    let (l, u) = (lu.L(), lu.U());
    let mut packed = MatMut::from_row_major_slice_mut(out, n, n);
    for i in 0..n {
        for j in 0..n {
            packed[(i, j)] = if i > j { l[(i, j)] } else { u[(i, j)] };
        }
    }
    swaps(lu.P().arrays().0, piv);
    zero_pivot(u)
}

fn inv<T: Float>(a: &[T], out: &mut [T], n: usize) -> i32 {
    let lu = MatRef::from_row_major_slice(a, n, n).partial_piv_lu();
    let status = zero_pivot(lu.U());
    if status == 0 {
        store(lu.inverse().as_ref(), out);
    }
    status
}

/// The parity of a permutation: -1 for odd, 1 for even.
fn parity(fwd: &[usize]) -> f64 {
    let mut seen = vec![false; fwd.len()];
    let mut sign = 1.0;
    for start in 0..fwd.len() {
        let mut len = 0;
        let mut i = start;
        while !seen[i] {
            seen[i] = true;
            i = fwd[i];
            len += 1;
        }
        if len > 0 && len % 2 == 0 {
            sign = -sign;
        }
    }
    sign
}

/// NumPy's `slogdet`: `(sign, log|det|)`, `(0, -inf)` for a singular matrix.
fn slogdet<T: Float>(a: &[T], n: usize) -> (T, T) {
    let lu = MatRef::from_row_major_slice(a, n, n).partial_piv_lu();
    let u = lu.U();
    let mut sign = parity(lu.P().arrays().0);
    let mut log = 0.0f64;
    for i in 0..n {
        let d = u[(i, i)].to_f64();
        if d == 0.0 {
            return (T::from_f64(0.0), T::from_f64(f64::NEG_INFINITY));
        }
        sign *= d.signum();
        log += d.abs().ln();
    }
    (T::from_f64(sign), T::from_f64(log))
}

fn cholesky<T: Float>(a: &[T], out: &mut [T], n: usize) -> i32 {
    match MatRef::from_row_major_slice(a, n, n).llt(Side::Lower) {
        Ok(llt) => {
            let l = llt.L();
            let mut view = MatMut::from_row_major_slice_mut(out, n, n);
            for i in 0..n {
                for j in 0..n {
                    view[(i, j)] = if j <= i { l[(i, j)] } else { T::from_f64(0.0) };
                }
            }
            0
        }
        Err(faer::linalg::cholesky::llt::factor::LltError::NonPositivePivot { index }) => index as i32 + 1,
    }
}

fn qr<T: Float>(a: &[T], q: &mut [T], r: &mut [T], m: usize, n: usize, mode: QrMode) -> i32 {
    let f = MatRef::from_row_major_slice(a, m, n).qr();
    match mode {
        QrMode::Reduced => {
            store(f.compute_thin_Q().as_ref(), q);
            store(f.thin_R(), r);
        }
        QrMode::Complete => {
            store(f.compute_Q().as_ref(), q);
            // faer's R has min(m, n) rows; NumPy's complete R has m, zeros below.
            let thin = f.thin_R();
            r.fill(T::from_f64(0.0));
            store(thin, &mut r[..thin.nrows() * n]);
        }
    }
    0
}

/// 1 + the first diagonal entry of `r` at most `tol` times the largest, or 0.
fn rank_deficient<T: Float>(r: MatRef<'_, T>, tol: f64) -> i32 {
    let diag: Vec<f64> = (0..r.nrows().min(r.ncols())).map(|i| r[(i, i)].to_f64()).collect();
    super::status::negligible_diagonal(&diag, tol)
}

/// Least squares through QR: of `a` where `m >= n` (`x = R^-1 Q^T b`), of
/// `a^T` where `m < n` (the minimum-norm `x = Q R^-T b`). A column (or
/// row) whose `R` diagonal is at most `max(m, n) eps` times the largest is
/// rank deficiency, status 1 + its index.
fn lstsq<T: Float>(a: &[T], b: &[T], x: &mut [T], m: usize, n: usize, nrhs: usize) -> i32 {
    let tol = m.max(n) as f64 * T::EPSILON;
    let a = MatRef::from_row_major_slice(a, m, n);
    let b = MatRef::from_row_major_slice(b, m, nrhs);
    if m >= n {
        let f = a.qr();
        let status = rank_deficient(f.thin_R(), tol);
        if status == 0 {
            store(f.solve_lstsq(b).as_ref(), x);
        }
        status
    } else {
        let f = a.transpose().qr();
        let r = f.thin_R();
        let status = rank_deficient(r, tol);
        if status == 0 {
            // R^T z = b, then x = Q z.
            let mut z: Mat<T> = b.to_owned();
            faer::linalg::triangular_solve::solve_lower_triangular_in_place(r.transpose(), z.as_mut(), faer::Par::Seq);
            let q = f.compute_thin_Q();
            store((&q * &z).as_ref(), x);
        }
        status
    }
}

fn eigh<T: Float>(a: &[T], w: &mut [T], v: Option<&mut [T]>, n: usize) -> i32 {
    let a = MatRef::from_row_major_slice(a, n, n);
    match v {
        Some(v) => match a.self_adjoint_eigen(Side::Lower) {
            Ok(e) => {
                let s = e.S();
                for (i, w) in w.iter_mut().enumerate() {
                    *w = s[i];
                }
                store(e.U(), v);
                0
            }
            Err(_) => 1,
        },
        None => match a.self_adjoint_eigenvalues(Side::Lower) {
            Ok(s) => {
                w.copy_from_slice(&s);
                0
            }
            Err(_) => 1,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swaps_replay_the_permutation() {
        // Row i of the result is row fwd[i] of the input.
        for fwd in [vec![0usize, 1, 2, 3], vec![2, 0, 3, 1], vec![3, 2, 1, 0], vec![1, 2, 3, 0]] {
            let mut piv = vec![0; fwd.len()];
            swaps(&fwd, &mut piv);
            let mut rows: Vec<usize> = (0..fwd.len()).collect();
            for (i, &p) in piv.iter().enumerate() {
                assert!(p as usize >= i, "{fwd:?}: {piv:?}");
                rows.swap(i, p as usize);
            }
            assert_eq!(rows, fwd, "{piv:?}");
        }
    }

    #[test]
    fn parity_counts_transpositions() {
        assert_eq!(parity(&[0, 1, 2]), 1.0);
        assert_eq!(parity(&[1, 0, 2]), -1.0);
        assert_eq!(parity(&[1, 2, 0]), 1.0);
        assert_eq!(parity(&[3, 2, 1, 0]), 1.0);
        assert_eq!(parity(&[1, 2, 3, 0]), -1.0);
    }

    #[test]
    fn the_packed_factors_and_pivots_rebuild_the_matrix() {
        let n = 4;
        let a: Vec<f64> = vec![2.0, 1.0, 1.0, 0.0, 4.0, 3.0, 3.0, 1.0, 8.0, 7.0, 9.0, 5.0, 6.0, 7.0, 9.0, 8.0];
        let mut lu = vec![0.0; 16];
        let mut piv = vec![0; 4];
        assert_eq!(lu_factor(&a, &mut lu, &mut piv, n), 0);
        // P A = L U with P the swaps in order.
        let mut pa = a.clone();
        for (i, &p) in piv.iter().enumerate() {
            for c in 0..n {
                pa.swap(i * n + c, p as usize * n + c);
            }
        }
        for i in 0..n {
            for j in 0..n {
                let s: f64 = (0..n)
                    .map(|k| {
                        let l = if k == i {
                            1.0
                        } else if k < i {
                            lu[i * n + k]
                        } else {
                            0.0
                        };
                        let u = if k <= j { lu[k * n + j] } else { 0.0 };
                        l * u
                    })
                    .sum();
                assert!((s - pa[i * n + j]).abs() < 1e-12, "({i}, {j}): {s} vs {}", pa[i * n + j]);
            }
        }
        // Partial pivoting: every multiplier at most 1.
        assert!((0..n).all(|i| (0..i).all(|k| lu[i * n + k].abs() <= 1.0)));
        let (sign, log) = slogdet(&a, n);
        let det = cofactor_det(&a, n);
        assert!((sign * log.exp() - det).abs() < 1e-9 * det.abs().max(1.0), "det {sign} {log} vs {det}");
    }

    /// The determinant by cofactor expansion along the first row.
    fn cofactor_det(a: &[f64], n: usize) -> f64 {
        if n == 1 {
            return a[0];
        }
        (0..n)
            .map(|c| {
                let minor: Vec<f64> =
                    (1..n).flat_map(|i| (0..n).filter(move |&j| j != c).map(move |j| a[i * n + j])).collect();
                let sign = if c % 2 == 0 { 1.0 } else { -1.0 };
                sign * a[c] * cofactor_det(&minor, n - 1)
            })
            .sum()
    }
}
