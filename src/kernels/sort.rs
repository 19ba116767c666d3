//! Sorting (see [`kiln_kernels::sort`]).

use crate::runtime::Stream;

pub use kiln_kernels::sort::{SortKey, SortOrder};

kiln_kernels::entry_points!(crate::kernels::forward::forward, sort);
