//! Reductions: whole arrays, dot products, along an axis, arg-min/max (see [`kiln_kernels::reduce`]).

use super::Number;
use crate::runtime::Stream;

pub use kiln_kernels::reduce::{ArgOp, ReduceOp};

kiln_kernels::entry_points!(crate::kernels::forward::forward, reduce);
