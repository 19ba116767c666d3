//! `f32` and `f64` products through the `gemm` and `faer` crates (the
//! `cpu-gemm` feature): `faer`'s matmul where the product is threaded over a
//! pool of [`FAER_FROM_THREADS`] threads or more, `gemm`'s otherwise.

use super::PARALLEL_FROM;

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

/// `c = a . b`, row-major, for `f32` and `f64`, by [`route`]; the slices
/// hold the shapes (checked by `matmul`).
pub(super) fn packed<T: Packed>(a: &[T], b: &[T], c: &mut [T], (m, n, k): (usize, usize, usize)) {
    let parallelism = match route(m, n, k) {
        Route::Faer => {
            let a = faer::MatRef::from_row_major_slice(&a[..m * k], m, k);
            let b = faer::MatRef::from_row_major_slice(&b[..k * n], k, n);
            let c = faer::MatMut::from_row_major_slice_mut(&mut c[..m * n], m, n);
            faer::linalg::matmul::matmul(c, faer::Accum::Replace, a, b, T::one_impl(), faer::Par::rayon(0));
            return;
        }
        Route::Gemm { threaded: true } => gemm::Parallelism::Rayon(0),
        Route::Gemm { threaded: false } => gemm::Parallelism::None,
    };
    // SAFETY: row-major m x k, k x n and m x n matrices inside the slices
    // (checked by the caller); `c` is borrowed exclusively and apart from the
    // inputs; with read_dst false, c = beta (a . b), and beta is one.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            c.as_mut_ptr(),
            1,
            n as isize,
            false,
            a.as_ptr(),
            1,
            k as isize,
            b.as_ptr(),
            1,
            n as isize,
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
