//! A vendor library's dense factorisations and solves (cuSOLVER on CUDA),
//! offered by a backend as an optional capability of its device:
//! [`RawDevice::vendor_solver`] says whether there is one and in which
//! precisions, [`RawDevice::solver_work_size`] how much scratch a call
//! needs, and [`RawDevice::solver`] enqueues one [`SolverCall`]. Backends
//! without one keep the trait's defaults ("not offered"). kiln-kernels'
//! `linalg` module is the safe, checked entry point users call; it
//! computes the factorisations itself where no vendor solver is offered.
//!
//! Matrices are column-major, as LAPACK's are: element `(i, j)` of matrix
//! `b` of a call at `b * rows * cols + j * rows + i`, in elements of the
//! call's precision; the matrices of a batch lie one after another.
//!
//! [`RawDevice::vendor_solver`]: crate::RawDevice::vendor_solver
//! [`RawDevice::solver_work_size`]: crate::RawDevice::solver_work_size
//! [`RawDevice::solver`]: crate::RawDevice::solver

use std::fmt;

use crate::{Backend, DType, Error, GemmOperand, Result};

/// What a backend's vendor solver is and which precisions it computes in.
///
/// # Examples
/// ```
/// use kiln_core::{DType, VendorSolver};
/// let s = VendorSolver { name: "demo", precisions: &[DType::F64] };
/// assert!(s.supports(DType::F64));
/// assert!(!s.supports(DType::F32));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VendorSolver {
    /// The library's name, for messages and reports ("cuSOLVER").
    pub name: &'static str,
    /// The element types it factors.
    pub precisions: &'static [DType],
}

impl VendorSolver {
    /// Whether it computes in `precision`.
    pub fn supports(&self, precision: DType) -> bool {
        self.precisions.contains(&precision)
    }
}

/// One LAPACK-style step on each matrix of a batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SolverOp {
    /// LU factorisation with partial pivoting (`getrf`) of square `a`, in
    /// place: unit lower `L` below the diagonal, `U` on and above it.
    /// `pivots` receives `cols` `i32` per matrix, LAPACK's (row `i` was
    /// swapped with row `pivots[i] - 1`), `info` 0 or the 1-based column
    /// of the first exactly zero pivot.
    Lu,
    /// Solve `A X = B` (`A^T X = B` when `transpose`) with [`Lu`](Self::Lu)'s
    /// factors in `a` and `pivots` (`getrs`): `b` holds `nrhs` columns of
    /// `cols` rows per matrix and is overwritten with `X`.
    LuSolve {
        /// Right-hand sides per matrix.
        nrhs: usize,
        /// Solve with the transpose of `A`.
        transpose: bool,
    },
    /// Cholesky factorisation (`potrf`) of symmetric positive definite `a`
    /// in place: its `lower` triangle (else the upper) read and
    /// overwritten with the factor, the other left as it was. `info` 0 or
    /// the order of the first leading minor that is not positive definite.
    Cholesky {
        /// Factor the lower triangle (`A = L L^T`); else the upper (`A = U^T U`).
        lower: bool,
    },
    /// Householder QR (`geqrf`) of `rows` x `cols` `a` in place: `R` on and
    /// above the diagonal, the reflectors below it, their scalars in `b`
    /// (`min(rows, cols)` per matrix).
    Qr,
    /// The first `cols` columns of `Q` (`orgqr`, `cols <= rows`) from
    /// `reflectors` Householder reflectors in `a`'s first columns and their
    /// scalars in `b` (`reflectors` per matrix, as [`Qr`](Self::Qr) wrote
    /// them for a matrix of that many columns or rows), written over `a`.
    QrQ {
        /// Reflectors to apply (`reflectors <= cols`).
        reflectors: usize,
    },
    /// Eigenvalues of symmetric `a` (`syevd`, its `lower` triangle read,
    /// else the upper), in ascending order into `b` (`cols` per matrix),
    /// and with `vectors` the orthonormal eigenvectors over `a`, one per
    /// column; `info` 0, or positive where the method did not converge.
    Eigh {
        /// Compute the eigenvectors too.
        vectors: bool,
        /// Read the lower triangle; else the upper.
        lower: bool,
    },
}

impl SolverOp {
    /// LAPACK's name of the step ("getrf").
    pub const fn name(self) -> &'static str {
        match self {
            SolverOp::Lu => "getrf",
            SolverOp::LuSolve { .. } => "getrs",
            SolverOp::Cholesky { .. } => "potrf",
            SolverOp::Qr => "geqrf",
            SolverOp::QrQ { .. } => "orgqr",
            SolverOp::Eigh { .. } => "syevd",
        }
    }

    /// Whether the step writes `info` (one `i32` per matrix).
    pub const fn has_info(self) -> bool {
        matches!(self, SolverOp::Lu | SolverOp::Cholesky { .. } | SolverOp::Eigh { .. })
    }

    /// Whether the step reads or writes `pivots`.
    pub const fn has_pivots(self) -> bool {
        matches!(self, SolverOp::Lu | SolverOp::LuSolve { .. })
    }
}

/// A step and the shape of its batch.
///
/// # Examples
/// ```
/// use kiln_core::{DType, SolverLayout, SolverOp};
/// let lu = SolverLayout { op: SolverOp::Lu, precision: DType::F32, rows: 4, cols: 4, batch: 3 };
/// lu.check().unwrap();
/// assert_eq!(lu.spans(), Some(SolverSpans { a: 48, b: 0, pivots: 12, info: 3 }));
/// # use kiln_core::SolverSpans;
/// let bad = SolverLayout { rows: 4, cols: 5, ..lu };
/// assert!(bad.check().is_err(), "LU of a non-square matrix");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SolverLayout {
    /// The step.
    pub op: SolverOp,
    /// The element type (`f32` or `f64`).
    pub precision: DType,
    /// Rows of each `a`.
    pub rows: usize,
    /// Columns of each `a`.
    pub cols: usize,
    /// Matrices.
    pub batch: usize,
}

/// The elements a [`SolverLayout`] spans on each operand of its call
/// (0: the operand is not used).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SolverSpans {
    /// `a`, in elements of the precision.
    pub a: usize,
    /// `b` (right-hand sides, scalars of reflectors, or eigenvalues), in
    /// elements of the precision.
    pub b: usize,
    /// `pivots`, in `i32`.
    pub pivots: usize,
    /// `info`, in `i32`.
    pub info: usize,
}

impl SolverLayout {
    /// `Err(InvalidArgument)` naming the field unless the dimensions are at
    /// least 1, square where the step wants it, within the step's limits,
    /// each dimension fits an `i32` (LAPACK's integers) and the spans fit
    /// memory, and the precision is `f32` or `f64`.
    pub fn check(&self) -> Result<()> {
        let what = || format!("solver {self}");
        if !matches!(self.precision, DType::F32 | DType::F64) {
            return Err(Error::invalid(what(), format!("solvers compute in f32 and f64, not {}", self.precision)));
        }
        for (name, v) in [("rows", self.rows), ("cols", self.cols), ("batch", self.batch)] {
            if v == 0 {
                return Err(Error::invalid(what(), format!("{name} is 0")));
            }
            if i32::try_from(v).is_err() {
                return Err(Error::invalid(what(), format!("{name} = {v} does not fit LAPACK's 32-bit integers")));
            }
        }
        let square = !matches!(self.op, SolverOp::Qr | SolverOp::QrQ { .. });
        if square && self.rows != self.cols {
            return Err(Error::invalid(
                what(),
                format!("{} wants square matrices, not {} x {}", self.op.name(), self.rows, self.cols),
            ));
        }
        match self.op {
            SolverOp::LuSolve { nrhs, .. } if nrhs == 0 || i32::try_from(nrhs).is_err() => {
                return Err(Error::invalid(what(), format!("nrhs = {nrhs} is not in 1..2^31")));
            }
            SolverOp::QrQ { reflectors } if self.cols > self.rows || reflectors > self.cols => {
                return Err(Error::invalid(
                    what(),
                    format!("orgqr wants reflectors <= cols <= rows, not {reflectors}, {}, {}", self.cols, self.rows),
                ));
            }
            _ => {}
        }
        if self.spans().is_none() {
            return Err(Error::invalid(what(), "the batch's size overflows"));
        }
        Ok(())
    }

    /// The elements the call spans on each operand, or `None` on overflow.
    pub fn spans(&self) -> Option<SolverSpans> {
        let each = self.rows.checked_mul(self.cols)?;
        let a = each.checked_mul(self.batch)?;
        let b_each = match self.op {
            SolverOp::LuSolve { nrhs, .. } => self.cols.checked_mul(nrhs)?,
            SolverOp::Qr => self.rows.min(self.cols),
            SolverOp::QrQ { reflectors } => reflectors,
            SolverOp::Eigh { .. } => self.cols,
            SolverOp::Lu | SolverOp::Cholesky { .. } => 0,
        };
        let pivots = if self.op.has_pivots() { self.cols.checked_mul(self.batch)? } else { 0 };
        let info = if self.op.has_info() { self.batch } else { 0 };
        Some(SolverSpans { a, b: b_each.checked_mul(self.batch)?, pivots, info })
    }
}

impl fmt::Display for SolverLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} of {} x {}x{}", self.op.name(), self.precision, self.batch, self.rows, self.cols)?;
        match self.op {
            SolverOp::LuSolve { nrhs, transpose } => {
                write!(f, " ({nrhs} right-hand sides{})", if transpose { ", transposed" } else { "" })
            }
            SolverOp::QrQ { reflectors } => write!(f, " ({reflectors} reflectors)"),
            _ => Ok(()),
        }
    }
}

/// One vendor solver call: `layout`'s step on the operands it uses
/// ([`SolverLayout::spans`]), each given where its first element is.
pub struct SolverCall<'a, B: Backend> {
    /// The step and its batch.
    pub layout: SolverLayout,
    /// The matrices, read and overwritten.
    pub a: GemmOperand<'a, B>,
    /// Right-hand sides ([`SolverOp::LuSolve`]), reflector scalars
    /// ([`SolverOp::Qr`], [`SolverOp::QrQ`]) or eigenvalues
    /// ([`SolverOp::Eigh`]).
    pub b: Option<GemmOperand<'a, B>>,
    /// The pivots ([`SolverOp::Lu`] writes them, [`SolverOp::LuSolve`] reads them).
    pub pivots: Option<GemmOperand<'a, B>>,
    /// One `i32` per matrix ([`SolverOp::has_info`]).
    pub info: Option<GemmOperand<'a, B>>,
    /// Scratch memory for the library, at least
    /// [`RawDevice::solver_work_size`](crate::RawDevice::solver_work_size)
    /// bytes from its offset; `None` where that size is 0.
    pub work: Option<GemmOperand<'a, B>>,
}

impl<B: Backend> SolverCall<'_, B> {
    /// `Err(InvalidArgument)` unless the layout is well formed and the call
    /// has exactly the operands its step uses.
    pub fn check(&self) -> Result<()> {
        self.layout.check()?;
        let spans = self
            .layout
            .spans()
            .ok_or_else(|| Error::invalid(format!("solver {}", self.layout), "the batch's size overflows"))?;
        for (name, given, wanted) in [
            ("b", self.b.is_some(), spans.b > 0),
            ("pivots", self.pivots.is_some(), spans.pivots > 0),
            ("info", self.info.is_some(), spans.info > 0),
        ] {
            if given != wanted {
                let how = if wanted { "needs" } else { "takes no" };
                return Err(Error::invalid(
                    format!("solver {}", self.layout),
                    format!("{} {how} `{name}`", self.layout.op.name()),
                ));
            }
        }
        Ok(())
    }
}

impl<B: Backend> fmt::Display for SolverCall<'_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.layout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(op: SolverOp, rows: usize, cols: usize) -> SolverLayout {
        SolverLayout { op, precision: DType::F64, rows, cols, batch: 2 }
    }

    #[test]
    fn spans_count_each_operand_per_step() {
        let s = |op, r, c| layout(op, r, c).spans().unwrap();
        assert_eq!(s(SolverOp::Lu, 3, 3), SolverSpans { a: 18, b: 0, pivots: 6, info: 2 });
        assert_eq!(
            s(SolverOp::LuSolve { nrhs: 4, transpose: true }, 3, 3),
            SolverSpans { a: 18, b: 24, pivots: 6, info: 0 }
        );
        assert_eq!(s(SolverOp::Cholesky { lower: true }, 5, 5), SolverSpans { a: 50, b: 0, pivots: 0, info: 2 });
        assert_eq!(s(SolverOp::Qr, 7, 3), SolverSpans { a: 42, b: 6, pivots: 0, info: 0 });
        assert_eq!(s(SolverOp::Qr, 3, 7), SolverSpans { a: 42, b: 6, pivots: 0, info: 0 });
        assert_eq!(s(SolverOp::QrQ { reflectors: 3 }, 7, 3), SolverSpans { a: 42, b: 6, pivots: 0, info: 0 });
        // A complete Q of 7 x 7 from the 3 reflectors of a 7 x 3 matrix.
        assert_eq!(s(SolverOp::QrQ { reflectors: 3 }, 7, 7), SolverSpans { a: 98, b: 6, pivots: 0, info: 0 });
        assert_eq!(
            s(SolverOp::Eigh { vectors: false, lower: true }, 4, 4),
            SolverSpans { a: 32, b: 8, pivots: 0, info: 2 }
        );
    }

    #[test]
    fn bad_layouts_are_refused_by_name() {
        let refused = |l: SolverLayout, word: &str| match l.check() {
            Err(Error::InvalidArgument { reason, .. }) => assert!(reason.contains(word), "{reason}"),
            other => panic!("{l}: {other:?}"),
        };
        refused(layout(SolverOp::Lu, 3, 4), "square");
        refused(layout(SolverOp::Eigh { vectors: true, lower: false }, 0, 0), "rows is 0");
        refused(SolverLayout { batch: 0, ..layout(SolverOp::Qr, 3, 3) }, "batch is 0");
        refused(layout(SolverOp::QrQ { reflectors: 4 }, 5, 3), "reflectors");
        refused(layout(SolverOp::QrQ { reflectors: 2 }, 3, 5), "reflectors");
        refused(layout(SolverOp::LuSolve { nrhs: 0, transpose: false }, 3, 3), "nrhs");
        refused(SolverLayout { precision: DType::I32, ..layout(SolverOp::Lu, 3, 3) }, "f32 and f64");
        refused(layout(SolverOp::Qr, 1 << 31, 1), "32-bit");
        refused(SolverLayout { batch: i32::MAX as usize, ..layout(SolverOp::Qr, 1 << 30, 1 << 30) }, "overflows");
    }
}
