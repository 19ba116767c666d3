//! The shape of a batch of matrices, and of what each routine writes.

use kiln_core::{Error, Result};

/// A batch of `batch` dense row-major matrices of `rows` x `cols`, one
/// after another (NumPy's C-ordered `(batch, rows, cols)`; a single matrix
/// is a batch of one).
///
/// # Examples
/// ```
/// use kiln_kernels::linalg::MatrixShape;
/// let s = MatrixShape::square(10, 32);
/// assert_eq!((s.len(), s.matrix_len(), s.min_dim()), (10 * 32 * 32, 32 * 32, 32));
/// assert_eq!(MatrixShape::new(2, 5, 3).to_string(), "2 x 5x3");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MatrixShape {
    /// Matrices.
    pub batch: usize,
    /// Rows of each.
    pub rows: usize,
    /// Columns of each.
    pub cols: usize,
}

impl MatrixShape {
    /// `batch` matrices of `rows` x `cols`.
    pub const fn new(batch: usize, rows: usize, cols: usize) -> Self {
        MatrixShape { batch, rows, cols }
    }

    /// `batch` square matrices of `n` x `n`.
    pub const fn square(batch: usize, n: usize) -> Self {
        MatrixShape { batch, rows: n, cols: n }
    }

    /// Elements of one matrix (saturating).
    pub const fn matrix_len(&self) -> usize {
        self.rows.saturating_mul(self.cols)
    }

    /// Elements of the batch (saturating).
    pub const fn len(&self) -> usize {
        self.matrix_len().saturating_mul(self.batch)
    }

    /// Whether the batch holds no element.
    pub const fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The smaller of rows and columns.
    pub const fn min_dim(&self) -> usize {
        if self.rows < self.cols { self.rows } else { self.cols }
    }

    /// `Err(InvalidArgument)` unless the sizes fit LAPACK's 32-bit integers
    /// and the batch's element count fits memory; and, with `square`,
    /// unless the matrices are square.
    pub(crate) fn check(&self, what: &str, square: bool) -> Result<()> {
        if square && self.rows != self.cols {
            return Err(Error::invalid(what, format!("wants square matrices, not {} x {}", self.rows, self.cols)));
        }
        for (name, v) in [("batch", self.batch), ("rows", self.rows), ("cols", self.cols)] {
            if i32::try_from(v).is_err() {
                return Err(Error::invalid(what, format!("{name} = {v} is past 2^31 - 1")));
            }
        }
        if self.rows.checked_mul(self.cols).and_then(|m| m.checked_mul(self.batch)).is_none() {
            return Err(Error::invalid(what, "the batch's size overflows"));
        }
        Ok(())
    }
}

impl std::fmt::Display for MatrixShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} x {}x{}", self.batch, self.rows, self.cols)
    }
}

/// How much of `Q` and `R` [`qr`](super::qr) returns (NumPy's `mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum QrMode {
    /// `Q` of `rows` x `k` and `R` of `k` x `cols`, `k = min(rows, cols)`.
    #[default]
    Reduced,
    /// `Q` of `rows` x `rows` and `R` of `rows` x `cols`.
    Complete,
}

impl QrMode {
    /// The shapes of `Q` and `R` for `a` of `shape`.
    ///
    /// # Examples
    /// ```
    /// use kiln_kernels::linalg::{MatrixShape, QrMode};
    /// let a = MatrixShape::new(1, 5, 3);
    /// assert_eq!(QrMode::Reduced.shapes(a), (MatrixShape::new(1, 5, 3), MatrixShape::new(1, 3, 3)));
    /// assert_eq!(QrMode::Complete.shapes(a), (MatrixShape::new(1, 5, 5), MatrixShape::new(1, 5, 3)));
    /// ```
    pub fn shapes(self, a: MatrixShape) -> (MatrixShape, MatrixShape) {
        let k = match self {
            QrMode::Reduced => a.min_dim(),
            QrMode::Complete => a.rows,
        };
        (MatrixShape::new(a.batch, a.rows, k), MatrixShape::new(a.batch, k, a.cols))
    }
}
