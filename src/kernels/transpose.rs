//! Matrix transpose (see [`kiln_kernels::transpose`]).

use kiln_core::Element;

use crate::runtime::Stream;

pub use kiln_kernels::transpose::TransposeAlgorithm;

kiln_kernels::entry_points!(crate::kernels::forward::forward, transpose);
