//! Prefix sums and scans (see [`kiln_kernels::scan`]).

use super::Number;
use crate::runtime::Stream;

pub use kiln_kernels::scan::ScanKind;

kiln_kernels::entry_points!(crate::kernels::forward::forward, scan);
