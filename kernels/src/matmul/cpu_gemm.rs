//! `f32` and `f64` products through the `gemm` and `faer` crates (the
//! `cpu-gemm` feature): `faer`'s matmul where the product is threaded over a
//! pool of [`FAER_FROM_THREADS`] threads or more, `gemm`'s otherwise.

use super::PARALLEL_FROM;
use super::cpu_layout::{Operand, Product};

/// Threaded products go through `faer` where the pool has this many
/// threads or more, through `gemm` on fewer. Measured on a 16-core x86-64
/// host with AVX-512, 2048^3 f32 (f64), median of 10: `faer` 15.0 ms (31.9)
/// and `gemm` 19.7 (37.6) on 16 threads; 42.8 (137) and 52.1 (157) on 4;
/// 120 (228) and 101 (244) on 2. On a 2-core VM `gemm` leads on 2
/// threads: 48 ms (98) against 66 (144).
const FAER_FROM_THREADS: usize = 4;

/// The element types of the packed kernels, `f32` and `f64`.
pub(super) trait Packed: faer::traits::ComplexField + Copy + 'static {}
impl Packed for f32 {}
impl Packed for f64 {}

/// The kernels a product takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    /// `faer`'s, over the pool's threads.
    Faer,
    /// `gemm`'s, over the pool's threads or on the calling one.
    Gemm { threaded: bool },
}

/// The kernels for a product of `m x k` by `k x n` in the current rayon
/// pool: threaded from [`PARALLEL_FROM`] multiply-adds, through `faer`
/// where the pool has [`FAER_FROM_THREADS`] threads or more.
fn route(m: usize, n: usize, k: usize) -> Route {
    let threaded = m.saturating_mul(n).saturating_mul(k) >= PARALLEL_FROM;
    if threaded && rayon::current_num_threads() >= FAER_FROM_THREADS { Route::Faer } else { Route::Gemm { threaded } }
}

/// `c = a . b` for `f32` and `f64`, by [`route`]; the slices hold the
/// operands as `p` lays them out (checked by `matmul`), and none of m, n, k
/// is zero.
pub(super) fn packed<T: Packed>(a: &[T], b: &[T], c: &mut [T], p: &Product) {
    let Product { m, n, k, .. } = *p;
    let (a_rs, a_cs) = p.a.strides();
    let (b_rs, b_cs) = p.b.strides();
    let parallelism = match route(m, n, k) {
        Route::Faer => {
            let view = |x, rows, cols, op: &Operand| match op.transposed {
                true => faer::MatRef::from_column_major_slice_with_stride(x, rows, cols, op.ld),
                false => faer::MatRef::from_row_major_slice_with_stride(x, rows, cols, op.ld),
            };
            let (a, b) = (view(a, m, k, &p.a), view(b, k, n, &p.b));
            // The transpose of a column-major n x m view: faer 0.24's
            // `from_row_major_slice_with_stride_mut` gives its rows a stride
            // of 1 (a column-major matrix), so it is not used.
            let c = faer::MatMut::from_column_major_slice_with_stride_mut(c, n, m, p.ldc).transpose_mut();
            faer::linalg::matmul::matmul(c, faer::Accum::Replace, a, b, T::one_impl(), faer::Par::rayon(0));
            return;
        }
        Route::Gemm { threaded: true } => gemm::Parallelism::Rayon(0),
        Route::Gemm { threaded: false } => gemm::Parallelism::None,
    };
    let last = |rows: usize, cols: usize, rs: usize, cs: usize| (rows - 1) * rs + (cols - 1) * cs;
    assert!(
        last(m, k, a_rs, a_cs) < a.len() && last(k, n, b_rs, b_cs) < b.len() && last(m, n, p.ldc, 1) < c.len(),
        "matmul checks the operands against the shape"
    );
    // SAFETY: every element the strides reach is inside its slice (asserted
    // above); `c` is borrowed exclusively and apart from the inputs, its
    // rows ldc >= n apart (or one row); with read_dst false, c = beta
    // (a . b), and beta is one.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            p.ldc as isize,
            false,
            a.as_ptr(),
            a_cs as isize,
            a_rs as isize,
            b.as_ptr(),
            b_cs as isize,
            b_rs as isize,
            T::one_impl(),
            T::one_impl(),
            false,
            false,
            false,
            parallelism,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::cpu::tests::pool;

    #[test]
    fn large_products_take_faer_on_many_threads_and_gemm_on_few() {
        let few = pool(FAER_FROM_THREADS - 1);
        let many = pool(FAER_FROM_THREADS);
        assert_eq!(few.install(|| route(64, 64, 64)), Route::Gemm { threaded: true });
        assert_eq!(many.install(|| route(64, 64, 64)), Route::Faer);
        assert_eq!(many.install(|| route(64, 64, 63)), Route::Gemm { threaded: false });
        assert_eq!(many.install(|| route(1, 1, usize::MAX)), Route::Faer);
    }
}
