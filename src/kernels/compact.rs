//! Stream compaction (see [`kiln_kernels::compact`]).

use super::Number;
use crate::runtime::Stream;

pub use kiln_kernels::compact::Predicate;

kiln_kernels::entry_points!(crate::kernels::forward::forward, compact);
