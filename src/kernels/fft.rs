//! Discrete Fourier transforms (see [`kiln_kernels::fft`]).

use crate::runtime::Stream;

pub use kiln_kernels::fft::{Complex, FftDirection, FftFloat, FftNorm, FftShape};

kiln_kernels::entry_points!(crate::kernels::forward::forward, fft);
