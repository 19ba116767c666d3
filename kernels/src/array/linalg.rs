//! Dense linear algebra of arrays (NumPy's `numpy.linalg`): each array of
//! two or more dimensions is a batch of matrices over its last two axes,
//! the leading axes the batch. Arrays of any layout are copied to
//! row-major order first; results are new row-major arrays.

use kiln_core::{Backend, Error, Result};

use super::Array;
use crate::linalg::{self, LinalgFloat, MatrixShape, QrMode};

/// The leading (batch) axes of `shape` and its batch of matrices; `Err`
/// for fewer than two dimensions.
fn matrices(shape: &[usize], what: &str) -> Result<(Vec<usize>, MatrixShape)> {
    let Some((lead, &[rows, cols])) = shape.len().checked_sub(2).map(|k| shape.split_at(k)) else {
        return Err(Error::invalid(
            what,
            format!("wants a matrix or a stack of them, not an array of shape {shape:?}"),
        ));
    };
    let lead = lead.to_vec();
    Ok((lead.clone(), MatrixShape::new(lead.iter().product(), rows, cols)))
}

/// `lead` followed by `tail`.
fn joined(lead: &[usize], tail: &[usize]) -> Vec<usize> {
    lead.iter().chain(tail).copied().collect()
}

impl<B: Backend, T: LinalgFloat> Array<B, T> {
    /// The right-hand sides `b` as `(nrhs, shape of x)` for matrices of
    /// `lead` x `n` x `n`: a 1-d `b` is one vector for every matrix, any
    /// other is `lead` x `n` x `nrhs` (NumPy's rule since 2.0).
    fn right_hand_sides(b: &Array<B, T>, lead: &[usize], rows: usize, cols: usize, what: &str) -> Result<usize> {
        match b.shape() {
            [m] if *m == rows && lead.iter().product::<usize>() == 1 => Ok(1),
            [m] if *m == rows => Err(Error::invalid(
                what,
                "a vector b with a stack of matrices: give b the stack's leading axes and a last axis of 1",
            )),
            s if s.len() == lead.len() + 2 && s[..lead.len()] == *lead && s[lead.len()] == rows => {
                Ok(s[lead.len() + 1])
            }
            s => Err(Error::invalid(
                what,
                format!("b of shape {s:?} does not fit matrices of shape {:?}", joined(lead, &[rows, cols])),
            )),
        }
    }

    /// The solution `x` of `self x = b` (NumPy's `solve`): `self` square
    /// matrices (`... x n x n`), `b` one vector of `n` (for a single
    /// matrix) or `... x n x k`. A singular matrix is [`Error::LinAlg`].
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let a = Array::from_vec(&s, &[2, 2], &[3.0f64, 1.0, 1.0, 2.0])?;
    /// let b = Array::from_vec(&s, &[2], &[9.0f64, 8.0])?;
    /// let x = a.solve(&b)?.to_vec()?;
    /// assert!((x[0] - 2.0).abs() < 1e-12 && (x[1] - 3.0).abs() < 1e-12);
    /// # Ok(()) }
    /// ```
    pub fn solve(&self, b: &Array<B, T>) -> Result<Array<B, T>> {
        let what = "Array::solve";
        let (lead, shape) = matrices(self.shape(), what)?;
        let nrhs = Self::right_hand_sides(b, &lead, shape.rows, shape.cols, what)?;
        let (a, b) = (self.to_contiguous()?, b.to_contiguous()?);
        let mut x = self.stream().alloc::<T>(b.len())?;
        linalg::solve(self.stream(), a.buffer(), b.buffer(), &mut x, shape, nrhs)?;
        Array::from_buffer(x, b.shape())
    }

    /// The least-squares solution `x` of `self x = b` through QR, the
    /// minimum-norm one where `self` has fewer rows than columns (NumPy's
    /// `lstsq(a, b)[0]`, for full-rank matrices): `x` has `self`'s columns
    /// where `b` has its rows. A rank-deficient matrix is [`Error::LinAlg`].
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// // The line y = c0 + c1 t through (0, 1), (1, 3), (2, 5).
    /// let a = Array::from_vec(&s, &[3, 2], &[1.0f64, 0.0, 1.0, 1.0, 1.0, 2.0])?;
    /// let y = Array::from_vec(&s, &[3], &[1.0f64, 3.0, 5.0])?;
    /// let c = a.lstsq(&y)?.to_vec()?;
    /// assert!((c[0] - 1.0).abs() < 1e-12 && (c[1] - 2.0).abs() < 1e-12);
    /// # Ok(()) }
    /// ```
    pub fn lstsq(&self, b: &Array<B, T>) -> Result<Array<B, T>> {
        let what = "Array::lstsq";
        let (lead, shape) = matrices(self.shape(), what)?;
        let nrhs = Self::right_hand_sides(b, &lead, shape.rows, shape.cols, what)?;
        let (a, bd) = (self.to_contiguous()?, b.to_contiguous()?);
        let mut x = self.stream().alloc::<T>(shape.batch * shape.cols * nrhs)?;
        linalg::lstsq(self.stream(), a.buffer(), bd.buffer(), &mut x, shape, nrhs)?;
        let out = if b.ndim() == 1 { vec![shape.cols] } else { joined(&lead, &[shape.cols, nrhs]) };
        Array::from_buffer(x, &out)
    }

    /// The inverse of each square matrix (NumPy's `inv`). A singular
    /// matrix is [`Error::LinAlg`].
    pub fn inv(&self) -> Result<Array<B, T>> {
        let (_, shape) = matrices(self.shape(), "Array::inv")?;
        let a = self.to_contiguous()?;
        let mut out = self.stream().alloc::<T>(a.len())?;
        linalg::inv(self.stream(), a.buffer(), &mut out, shape)?;
        Array::from_buffer(out, self.shape())
    }

    /// The determinant of each square matrix, of the leading axes' shape
    /// (NumPy's `det`; a 0-d array for one matrix).
    pub fn det(&self) -> Result<Array<B, T>> {
        let (lead, shape) = matrices(self.shape(), "Array::det")?;
        let a = self.to_contiguous()?;
        let mut out = self.stream().alloc::<T>(shape.batch)?;
        linalg::det(self.stream(), a.buffer(), &mut out, shape)?;
        Array::from_buffer(out, &lead)
    }

    /// The sign and log of the absolute determinant of each square matrix
    /// (NumPy's `slogdet`), each of the leading axes' shape.
    pub fn slogdet(&self) -> Result<(Array<B, T>, Array<B, T>)> {
        let (lead, shape) = matrices(self.shape(), "Array::slogdet")?;
        let a = self.to_contiguous()?;
        let mut sign = self.stream().alloc::<T>(shape.batch)?;
        let mut log = self.stream().alloc::<T>(shape.batch)?;
        linalg::slogdet(self.stream(), a.buffer(), &mut sign, &mut log, shape)?;
        Ok((Array::from_buffer(sign, &lead)?, Array::from_buffer(log, &lead)?))
    }

    /// The lower Cholesky factor of each symmetric positive definite
    /// matrix, from its lower triangle (NumPy's `cholesky`). A matrix that
    /// is not positive definite is [`Error::LinAlg`].
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let a = Array::from_vec(&s, &[2, 2], &[4.0f64, 2.0, 2.0, 5.0])?;
    /// assert_eq!(a.cholesky()?.to_vec()?, [2.0, 0.0, 1.0, 2.0]);
    /// let not_pd = Array::from_vec(&s, &[2, 2], &[1.0f64, 2.0, 2.0, 1.0])?;
    /// assert!(matches!(not_pd.cholesky(), Err(kiln_core::Error::LinAlg { .. })));
    /// # Ok(()) }
    /// ```
    pub fn cholesky(&self) -> Result<Array<B, T>> {
        let (_, shape) = matrices(self.shape(), "Array::cholesky")?;
        let a = self.to_contiguous()?;
        let mut l = self.stream().alloc::<T>(a.len())?;
        linalg::cholesky(self.stream(), a.buffer(), &mut l, shape)?;
        Array::from_buffer(l, self.shape())
    }

    /// `(q, r)` of each matrix (NumPy's `qr` with `mode` "reduced" or
    /// "complete").
    pub fn qr(&self, mode: QrMode) -> Result<(Array<B, T>, Array<B, T>)> {
        let (lead, shape) = matrices(self.shape(), "Array::qr")?;
        let (qs, rs) = mode.shapes(shape);
        let a = self.to_contiguous()?;
        let mut q = self.stream().alloc::<T>(qs.len())?;
        let mut r = self.stream().alloc::<T>(rs.len())?;
        linalg::qr(self.stream(), a.buffer(), &mut q, &mut r, shape, mode)?;
        Ok((
            Array::from_buffer(q, &joined(&lead, &[qs.rows, qs.cols]))?,
            Array::from_buffer(r, &joined(&lead, &[rs.rows, rs.cols]))?,
        ))
    }

    /// `(w, v)`: the ascending eigenvalues and the eigenvectors (columns)
    /// of each symmetric matrix, from its lower triangle (NumPy's `eigh`).
    pub fn eigh(&self) -> Result<(Array<B, T>, Array<B, T>)> {
        let (lead, shape) = matrices(self.shape(), "Array::eigh")?;
        let a = self.to_contiguous()?;
        let mut w = self.stream().alloc::<T>(shape.batch * shape.rows)?;
        let mut v = self.stream().alloc::<T>(a.len())?;
        linalg::eigh(self.stream(), a.buffer(), &mut w, &mut v, shape)?;
        Ok((Array::from_buffer(w, &joined(&lead, &[shape.rows]))?, Array::from_buffer(v, self.shape())?))
    }

    /// The ascending eigenvalues of each symmetric matrix (NumPy's `eigvalsh`).
    pub fn eigvalsh(&self) -> Result<Array<B, T>> {
        let (lead, shape) = matrices(self.shape(), "Array::eigvalsh")?;
        let a = self.to_contiguous()?;
        let mut w = self.stream().alloc::<T>(shape.batch * shape.rows)?;
        linalg::eigvalsh(self.stream(), a.buffer(), &mut w, shape)?;
        Array::from_buffer(w, &joined(&lead, &[shape.rows]))
    }

    /// `(lu, pivots)`: the packed LU factors and 0-based row swaps of each
    /// square matrix (SciPy's `lu_factor`; see [`linalg::lu_factor`]).
    pub fn lu_factor(&self) -> Result<(Array<B, T>, Array<B, i32>)> {
        let (lead, shape) = matrices(self.shape(), "Array::lu_factor")?;
        let a = self.to_contiguous()?;
        let mut lu = self.stream().alloc::<T>(a.len())?;
        let mut piv = self.stream().alloc::<i32>(shape.batch * shape.rows)?;
        linalg::lu_factor(self.stream(), a.buffer(), &mut lu, &mut piv, shape)?;
        Ok((Array::from_buffer(lu, self.shape())?, Array::from_buffer(piv, &joined(&lead, &[shape.rows]))?))
    }
}
