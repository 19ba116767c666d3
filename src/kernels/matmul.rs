//! Matrix multiply (see [`kiln_kernels::matmul`]).

use kiln_core::DType;

use super::dispatch;
use crate::runtime::{Device, Stream};

pub use kiln_kernels::matmul::{
    Fp8Element, MatmulElement, MatmulShape, MatmulStrategy, MatrixLayout, Precision, RoundedElement, ScaledOutput,
};

/// The strategy [`MatmulStrategy::Auto`] picks on `device` for a product of
/// `dtype` inputs and `shape`.
pub fn choose(device: &Device, dtype: DType, shape: MatmulShape) -> MatmulStrategy {
    dispatch!(device, Device, d => kiln_kernels::matmul::choose(d, dtype, shape))
}

/// The strategy [`MatmulStrategy::Auto`] picks on `device` for
/// [`matmul_rounded`] of `dtype` inputs and `shape`.
pub fn choose_rounded(device: &Device, dtype: DType, shape: MatmulShape) -> MatmulStrategy {
    dispatch!(device, Device, d => kiln_kernels::matmul::choose_rounded(d, dtype, shape))
}

kiln_kernels::entry_points!(crate::kernels::forward::forward, matmul);
