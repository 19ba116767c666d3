//! Fill and sequence (see [`kiln_kernels::fill`]).

use kiln_core::Element;

use super::Number;
use crate::runtime::Stream;

kiln_kernels::entry_points!(crate::kernels::forward::forward, fill);
