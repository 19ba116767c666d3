//! Thrust-style helpers (see [`kiln_kernels::thrust`]).

use super::Number;
use crate::runtime::Stream;

kiln_kernels::entry_points!(crate::kernels::forward::forward, thrust);
