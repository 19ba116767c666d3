//! Binary elementwise operations and axpy (see [`kiln_kernels::elementwise`]).

use super::Number;
use crate::runtime::Stream;

pub use kiln_kernels::elementwise::BinaryOp;

kiln_kernels::entry_points!(crate::kernels::forward::forward, elementwise);
