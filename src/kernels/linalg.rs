//! Dense linear algebra (see [`kiln_kernels::linalg`]).

use crate::runtime::Stream;

pub use kiln_kernels::linalg::{LinalgFloat, MatrixShape, QrMode};

kiln_kernels::entry_points!(crate::kernels::forward::forward, linalg);
