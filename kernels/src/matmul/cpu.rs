//! CPU implementation of matmul: every strategy computes the same sums.
//!
//! `f32` and `f64` go through packed, cache-blocked kernels chosen for the
//! CPU's SIMD at run time: with the `cpu-gemm` feature (default on), those
//! of `faer` and `gemm` (`cpu_gemm.rs`); without it, matrixmultiply's,
//! which ndarray brings into every build (`cpu_blocks.rs`). The others
//! (`f16`, `bf16` into `f32`; `i32`, `u32` wrapping) go through the row
//! loop below.

use kiln_core::{DType, Error, Result};
use rayon::prelude::*;

use super::MatmulElement;
#[cfg(not(feature = "cpu-gemm"))]
use super::cpu_blocks::packed;
#[cfg(feature = "cpu-gemm")]
use super::cpu_gemm::packed;

/// `c = a . b`; arguments (a, b, c, m, n, k), row-major.
///
/// Results depend only on the inputs, the machine's SIMD width and which
/// kernels the product takes (with `cpu-gemm`, `faer`'s or `gemm`'s, by its
/// size and the pool's thread count): each element of `c` is one thread's
/// sum over k, in an order fixed by the blocking (for the packed kernels)
/// or p = 0, 1, ... (the row loop), whatever the number of threads that
/// share it.
pub(crate) fn matmul<T: MatmulElement>(a: &[T], b: &[T], c: &mut [T::Acc], m: u64, n: u64, k: u64) -> Result<()> {
    let (m, n, k) = (m as usize, n as usize, k as usize);
    if n == 0 || m == 0 {
        return Ok(());
    }
    if k == 0 {
        c.fill(T::zero());
        return Ok(());
    }
    if a.len() < m * k || b.len() < k * n || c.len() < m * n {
        return Err(Error::invalid("matmul (CPU)", format!("operands shorter than {m} x {k} . {k} x {n}")));
    }
    let shape = (m, n, k);
    match T::DTYPE {
        DType::F32 => {
            packed::<f32>(bytemuck::cast_slice(a), bytemuck::cast_slice(b), bytemuck::cast_slice_mut(c), shape)
        }
        DType::F64 => {
            packed::<f64>(bytemuck::cast_slice(a), bytemuck::cast_slice(b), bytemuck::cast_slice_mut(c), shape)
        }
        _ => rows::<T>(a, b, c, n, k),
    }
    Ok(())
}

/// Rows of c in parallel; within a row, the i-k-j order streams rows of b
/// (cache-friendly) and adds each element's k products in order.
fn rows<T: MatmulElement>(a: &[T], b: &[T], c: &mut [T::Acc], n: usize, k: usize) {
    c.par_chunks_mut(n).enumerate().for_each(|(i, row)| {
        row.fill(T::zero());
        for p in 0..k {
            let x = a[i * k + p].widen();
            for (out, y) in row.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                *out = T::mul_add(*out, x, y.widen());
            }
        }
    });
}

#[cfg(test)]
pub(super) mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;
    use crate::matmul::cpu_blocks;

    /// Shapes (m, n, k): below the threading size, at it, and past it, with
    /// single rows and columns and sides that fill no SIMD register.
    const SHAPES: [(usize, usize, usize); 8] = [
        (1, 1, 1),
        (7, 13, 5),
        (64, 64, 64),
        (97, 131, 61),
        (1, 1031, 509),
        (523, 1, 600),
        (300, 257, 129),
        (33, 2, 4001),
    ];

    /// Pools of these sizes take every route: one thread; threaded products
    /// through `gemm` (with `cpu-gemm`, below its `FAER_FROM_THREADS`, 4);
    /// through `faer` (from 4). On matrixmultiply's route (`cpu_blocks`,
    /// the one without `cpu-gemm`): one block of rows, and three or four
    /// blocks, one a thread.
    const THREADS: [usize; 3] = [1, 3, 4];

    pub(in crate::matmul) fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a thread pool")
    }

    /// A packed product: `packed` of this build, or another route's.
    type Product<T> = fn(&[T], &[T], &mut [T], (usize, usize, usize));

    /// `product` in a pool of `threads` against an f64 reference, within
    /// `(k + 2) eps sum |a b|`, its output poisoned first.
    fn agrees<T>(product: Product<T>, threads: usize, eps: f64)
    where
        T: Copy + Send + Sync + From<f32> + Into<f64>,
    {
        let mut rng = ChaCha8Rng::seed_from_u64(29 + threads as u64);
        let pool = pool(threads);
        for (m, n, k) in SHAPES {
            let a: Vec<T> = (0..m * k).map(|_| T::from(rng.random_range(-2.0f32..2.0))).collect();
            let b: Vec<T> = (0..k * n).map(|_| T::from(rng.random_range(-2.0f32..2.0))).collect();
            let mut c = vec![T::from(f32::NAN); m * n];
            pool.install(|| product(&a, &b, &mut c, (m, n, k)));
            for i in 0..m {
                for j in 0..n {
                    let terms = (0..k).map(|p| a[i * k + p].into() * b[p * n + j].into());
                    let (want, abs) = terms.fold((0.0, 0.0), |(s, t), v: f64| (s + v, t + v.abs()));
                    let got: f64 = c[i * n + j].into();
                    let bound = (k + 2) as f64 * eps * abs;
                    assert!(
                        (got - want).abs() <= bound,
                        "{m}x{k} . {k}x{n} on {threads} threads, ({i}, {j}): {got} against {want}"
                    );
                }
            }
        }
    }

    #[test]
    fn products_run_side_by_side_on_the_pool_threads() {
        // Streams on several of the pool's threads, each taking a threaded
        // product at once: each finishes, with the same bits as alone.
        let (m, n, k) = (97, 131, 61);
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let a: Vec<f32> = (0..m * k).map(|_| rng.random_range(-1.0..1.0)).collect();
        let b: Vec<f32> = (0..k * n).map(|_| rng.random_range(-1.0..1.0)).collect();
        let many = pool(THREADS[2]);
        let mut alone = vec![f32::NAN; m * n];
        many.install(|| packed(&a, &b, &mut alone, (m, n, k)));
        let together: Vec<Vec<f32>> = many.install(|| {
            (0..2 * THREADS[2])
                .into_par_iter()
                .map(|_| {
                    let mut c = vec![f32::NAN; m * n];
                    packed(&a, &b, &mut c, (m, n, k));
                    c
                })
                .collect()
        });
        for c in together {
            assert!(c.iter().zip(&alone).all(|(x, y)| x.to_bits() == y.to_bits()));
        }
    }

    #[test]
    fn packed_products_match_a_reference_on_every_route() {
        for threads in THREADS {
            agrees::<f32>(packed, threads, f32::EPSILON as f64 / 2.0);
            // The f64 reference rounds as much as the product: twice the bound.
            agrees::<f64>(packed, threads, f64::EPSILON);
        }
    }

    #[test]
    fn matrixmultiply_products_match_a_reference_on_every_route() {
        // The route of builds without `cpu-gemm`, whichever this build takes.
        for threads in THREADS {
            agrees::<f32>(cpu_blocks::packed, threads, f32::EPSILON as f64 / 2.0);
            agrees::<f64>(cpu_blocks::packed, threads, f64::EPSILON);
        }
    }
}
