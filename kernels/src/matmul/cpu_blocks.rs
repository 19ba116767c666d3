//! `f32` and `f64` products without the `cpu-gemm` feature: matrixmultiply's
//! packed, cache-blocked kernels (AVX2 and FMA chosen at run time), which
//! ndarray brings into every build of kiln, so a lean build compiles no
//! second product library. matrixmultiply runs on one thread; from
//! [`PARALLEL_FROM`] multiply-adds each of the pool's threads takes a block
//! of rows of `c`. Correct, and slower than `cpu-gemm` on large products.

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2, LinalgScalar};
use rayon::prelude::*;

use super::PARALLEL_FROM;

/// The element types of the packed kernels, `f32` and `f64` (ndarray sends
/// both to matrixmultiply).
pub(super) trait Packed: LinalgScalar + Send + Sync {}
impl Packed for f32 {}
impl Packed for f64 {}

/// `c = a . b`, row-major, for `f32` and `f64`; the slices hold the shapes
/// (checked by `matmul`), and none of `m`, `n`, `k` is zero.
///
/// Each element's sum over k is blocked by matrixmultiply alone, whichever
/// block of rows it falls in, so results do not depend on the thread count.
pub(super) fn packed<T: Packed>(a: &[T], b: &[T], c: &mut [T], (m, n, k): (usize, usize, usize)) {
    let threaded = m.saturating_mul(n).saturating_mul(k) >= PARALLEL_FROM;
    let rows = if threaded { m.div_ceil(rayon::current_num_threads()) } else { m };
    let b = ArrayView2::from_shape((k, n), &b[..k * n]).expect("b holds k x n (checked by matmul)");
    c[..m * n].par_chunks_mut(rows * n).zip(a[..m * k].par_chunks(rows * k)).for_each(|(c, a)| {
        let r = c.len() / n;
        let a = ArrayView2::from_shape((r, k), a).expect("a block of r rows of a");
        let mut c = ArrayViewMut2::from_shape((r, n), c).expect("a block of r rows of c");
        // With beta zero, matrixmultiply writes c without reading it.
        general_mat_mul(T::one(), &a, &b, T::zero(), &mut c);
    });
}
