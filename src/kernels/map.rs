//! Unary maps (see [`kiln_kernels::map`]).

use super::Number;
use crate::runtime::Stream;

pub use kiln_kernels::map::MapOp;

kiln_kernels::entry_points!(crate::kernels::forward::forward, map);
