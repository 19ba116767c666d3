//! Histograms (see [`kiln_kernels::histogram`]).

use crate::runtime::Stream;

pub use kiln_kernels::histogram::{HistogramInput, MAX_BINS};

kiln_kernels::entry_points!(crate::kernels::forward::forward, histogram);
