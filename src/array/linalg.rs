//! Dense linear algebra of an [`Array`] on the run-time tier (NumPy's
//! `numpy.linalg`); each forwards to the typed array on its backend (see
//! [`kiln_kernels::array::Array::solve`]).

use kiln_core::Result;
use kiln_kernels::linalg::{LinalgFloat, QrMode};

use super::compute::same;
use super::{Array, wrapped};
use crate::runtime::{Tier, dispatch};

impl<T: LinalgFloat> Array<T> {
    /// The solution `x` of `self x = b` (NumPy's `solve`).
    ///
    /// # Examples
    /// ```
    /// # fn main() -> kiln::Result<()> {
    /// let s = kiln::Device::open(kiln::BackendKind::Cpu, 0)?.stream();
    /// let a = kiln::Array::from_vec(&s, &[2, 2], &[3.0f64, 1.0, 1.0, 2.0])?;
    /// let b = kiln::Array::from_vec(&s, &[2], &[9.0f64, 8.0])?;
    /// let x = a.solve(&b)?.to_vec()?;
    /// assert!((x[0] - 2.0).abs() < 1e-12 && (x[1] - 3.0).abs() < 1e-12);
    /// # Ok(()) }
    /// ```
    pub fn solve(&self, b: &Array<T>) -> Result<Array<T>> {
        dispatch!(self, Array, a => a.solve(same::<B, T>("Array::solve", a, b)?).map(B::wrap_array))
    }

    /// The least-squares (minimum-norm where underdetermined) solution of
    /// `self x = b` through QR (NumPy's `lstsq(a, b)[0]`, full rank).
    pub fn lstsq(&self, b: &Array<T>) -> Result<Array<T>> {
        dispatch!(self, Array, a => a.lstsq(same::<B, T>("Array::lstsq", a, b)?).map(B::wrap_array))
    }

    /// The inverse of each square matrix (NumPy's `inv`).
    pub fn inv(&self) -> Result<Array<T>> {
        wrapped!(self, a => a.inv())
    }

    /// The determinant of each square matrix (NumPy's `det`).
    pub fn det(&self) -> Result<Array<T>> {
        wrapped!(self, a => a.det())
    }

    /// The sign and log of the absolute determinant (NumPy's `slogdet`).
    pub fn slogdet(&self) -> Result<(Array<T>, Array<T>)> {
        dispatch!(self, Array, a => a.slogdet().map(|(s, l)| (B::wrap_array(s), B::wrap_array(l))))
    }

    /// The lower Cholesky factor of each symmetric positive definite matrix (NumPy's `cholesky`).
    pub fn cholesky(&self) -> Result<Array<T>> {
        wrapped!(self, a => a.cholesky())
    }

    /// `(q, r)` of each matrix (NumPy's `qr`).
    pub fn qr(&self, mode: QrMode) -> Result<(Array<T>, Array<T>)> {
        dispatch!(self, Array, a => a.qr(mode).map(|(q, r)| (B::wrap_array(q), B::wrap_array(r))))
    }

    /// `(w, v)`: eigenvalues (ascending) and eigenvectors of each symmetric matrix (NumPy's `eigh`).
    pub fn eigh(&self) -> Result<(Array<T>, Array<T>)> {
        dispatch!(self, Array, a => a.eigh().map(|(w, v)| (B::wrap_array(w), B::wrap_array(v))))
    }

    /// The ascending eigenvalues of each symmetric matrix (NumPy's `eigvalsh`).
    pub fn eigvalsh(&self) -> Result<Array<T>> {
        wrapped!(self, a => a.eigvalsh())
    }

    /// `(lu, pivots)`: packed LU factors and 0-based row swaps (SciPy's `lu_factor`).
    pub fn lu_factor(&self) -> Result<(Array<T>, Array<i32>)> {
        dispatch!(self, Array, a => a.lu_factor().map(|(lu, p)| (B::wrap_array(lu), B::wrap_array(p))))
    }
}
