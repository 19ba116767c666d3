//! The routines a backend without a vendor solver runs on the host.

use super::QrMode;

/// A host routine over the batch: its inputs, then its outputs, the
/// statuses last.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Task {
    /// `x = a^-1 b` (`b`: `nrhs` columns).
    Solve { nrhs: usize },
    /// Packed `L\U` and 0-based pivots.
    LuFactor,
    /// `a^-1`.
    Inv,
    /// `(sign, log|det|)` per matrix.
    Slogdet,
    /// Lower `L` with `a = L L^T` (zeros above).
    Cholesky,
    /// `Q` and `R`.
    Qr { mode: QrMode },
    /// The least-squares (minimum-norm where underdetermined) `x` of `a x = b`.
    Lstsq { nrhs: usize },
    /// Ascending eigenvalues and, with `vectors`, the eigenvectors as columns.
    Eigh { vectors: bool },
}
