//! `f32` and `f64` products without the `cpu-gemm` feature: matrixmultiply's
//! packed, cache-blocked kernels (AVX2 and FMA chosen at run time), which
//! ndarray brings into every build of kiln, so a lean build compiles no
//! second product library. matrixmultiply runs on one thread; from
//! [`PARALLEL_FROM`] multiply-adds each of the pool's threads takes a block
//! of rows of `c`. Correct, and slower than `cpu-gemm` on large products.

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2, LinalgScalar, ShapeBuilder, s};
use rayon::prelude::*;

use super::PARALLEL_FROM;
use super::cpu_layout::{Operand, Product};

/// The element types of the packed kernels, `f32` and `f64` (ndarray sends
/// both to matrixmultiply).
pub(super) trait Packed: LinalgScalar + Send + Sync {}
impl Packed for f32 {}
impl Packed for f64 {}

/// `c = a . b` for `f32` and `f64`; the slices hold the operands as `p`
/// lays them out (checked by `matmul`), and none of m, n, k is zero.
///
/// Each element's sum over k is blocked by matrixmultiply alone, whichever
/// block of rows it falls in, so results do not depend on the thread count.
pub(super) fn packed<T: Packed>(a: &[T], b: &[T], c: &mut [T], p: &Product) {
    let Product { m, n, k, .. } = *p;
    let threaded = m.saturating_mul(n).saturating_mul(k) >= PARALLEL_FROM;
    let rows = if threaded { m.div_ceil(rayon::current_num_threads()) } else { m };
    let view = |x, rows, cols, op: &Operand| {
        ArrayView2::from_shape((rows, cols).strides(op.strides()), x).expect("matmul checks the operand's span")
    };
    let (a, b) = (view(a, m, k, &p.a), view(b, k, n, &p.b));
    c.par_chunks_mut(rows * p.ldc).take(m.div_ceil(rows)).enumerate().for_each(|(block, c)| {
        let first = block * rows;
        let r = rows.min(m - first);
        let a = a.slice(s![first..first + r, ..]);
        let mut c =
            ArrayViewMut2::from_shape((r, n).strides((p.ldc, 1)), c).expect("a block of r rows of c, ldc apart");
        // With beta zero, matrixmultiply writes c without reading it.
        general_mat_mul(T::one(), &a, &b, T::zero(), &mut c);
    });
}
