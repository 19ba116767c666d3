//! The statuses a factorisation writes, one `i32` per matrix (LAPACK's
//! `info`: 0 for success, a positive code naming where it failed), turned
//! into [`Error::LinAlg`] naming the first matrix that failed.

use kiln_core::{Error, Result};

/// The first matrix whose status is not 0, and its status.
fn first(status: &[i32]) -> Option<(usize, i32)> {
    status.iter().enumerate().find(|(_, s)| **s != 0).map(|(i, s)| (i, *s))
}

fn failed(what: &str, matrix: usize, reason: String) -> Error {
    Error::LinAlg { what: what.to_string(), matrix, reason }
}

/// LU: status `k` is an exactly zero pivot in column `k - 1`.
pub(super) fn singular(what: &str, status: &[i32]) -> Result<()> {
    match first(status) {
        None => Ok(()),
        Some((i, k)) => Err(failed(what, i, format!("is singular: the pivot of column {} is exactly 0", k - 1))),
    }
}

/// Cholesky: status `k` is a leading minor of order `k` that is not positive definite.
pub(super) fn not_positive_definite(what: &str, status: &[i32]) -> Result<()> {
    match first(status) {
        None => Ok(()),
        Some((i, k)) => Err(failed(
            what,
            i,
            format!(
                "is not positive definite: its leading minor of order {k} is not (the pivot of column {} is <= 0)",
                k - 1
            ),
        )),
    }
}

/// Least squares: status `k` is a diagonal entry `k - 1` of `R` at most
/// `max(rows, cols) eps` times the largest.
pub(super) fn rank_deficient(what: &str, status: &[i32]) -> Result<()> {
    match first(status) {
        None => Ok(()),
        Some((i, k)) => Err(failed(
            what,
            i,
            format!(
                "is rank deficient: R's diagonal entry {} is at most max(rows, cols) * eps times the largest \
                 (QR without pivoting solves full-rank problems only)",
                k - 1
            ),
        )),
    }
}

/// The least-squares status of one matrix from the diagonal `d` of its
/// `R`: 1 + the first entry at most `tol` times the largest in magnitude,
/// or 0. The CPU's and the vendor path's rule.
pub(super) fn negligible_diagonal(d: &[f64], tol: f64) -> i32 {
    let big = d.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    d.iter().position(|v| v.abs() <= tol * big).map_or(0, |i| i as i32 + 1)
}

/// Eigenvalues: a positive status is an eigensolver that did not converge.
pub(super) fn no_convergence(what: &str, status: &[i32]) -> Result<()> {
    match first(status) {
        None => Ok(()),
        Some((i, k)) => Err(failed(what, i, format!("did not converge (status {k})"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_failing_matrix_is_named() {
        assert!(singular("solve", &[0, 0, 0]).is_ok());
        match singular("solve of 3 x 4x4 f32", &[0, 3, 1]) {
            Err(Error::LinAlg { what, matrix, reason }) => {
                assert_eq!((what.as_str(), matrix), ("solve of 3 x 4x4 f32", 1));
                assert!(reason.contains("column 2"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        let e = not_positive_definite("cholesky", &[0, 0, 5]).unwrap_err();
        assert!(e.to_string().contains("matrix 2 of the batch") && e.to_string().contains("order 5"), "{e}");
        assert!(rank_deficient("lstsq", &[2]).unwrap_err().to_string().contains("entry 1"));
        assert!(no_convergence("eigh", &[0, 7]).unwrap_err().to_string().contains("did not converge"));
    }

    #[test]
    fn the_first_negligible_diagonal_entry_is_rank_deficiency() {
        assert_eq!(negligible_diagonal(&[3.0, -2.0, 1.0], 1e-12), 0);
        assert_eq!(negligible_diagonal(&[4.0, 1e-20, 2.0], 1e-12), 2);
        assert_eq!(negligible_diagonal(&[0.0, 0.0], 1e-12), 1);
    }
}
