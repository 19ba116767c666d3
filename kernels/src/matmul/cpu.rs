//! CPU implementation of matmul: every strategy computes the same sums.
//!
//! `f32` and `f64` go through packed, cache-blocked kernels chosen for the
//! CPU's SIMD at run time: with the `cpu-gemm` feature (default on), those
//! of `faer` and `gemm` (`cpu_gemm.rs`); without it, matrixmultiply's,
//! which ndarray brings into every build (`cpu_blocks.rs`). `f16` and
//! `bf16` operands are widened to `f32` (exactly) and take the same `f32`
//! kernels, so their products are `f32` products of the same values; `i32`
//! and `u32` (wrapping) go through the row loop below.

use kiln_core::{DType, Error, MatmulShape, MatrixLayout, Result};
use rayon::prelude::*;

#[cfg(not(feature = "cpu-gemm"))]
use super::cpu_blocks::packed;
#[cfg(feature = "cpu-gemm")]
use super::cpu_gemm::packed;
use super::cpu_layout::{Operand, Product};
use super::{MatmulElement, PARALLEL_FROM};

/// `c = a . b` for each of `batch` products, laid out as
/// [`MatmulShape`](kiln_core::MatmulShape) says: the kernel's arguments
/// (a, b, c, m, n, k, batch, lda, ldb, ldc, sa, sb, sc, flags), flags bit 0
/// and bit 1 marking a and b stored transposed.
///
/// Results depend only on the inputs, the machine's SIMD width and which
/// kernels the product takes (with `cpu-gemm`, `faer`'s or `gemm`'s, by its
/// size and the pool's thread count): each element of `c` is one thread's
/// sum over k, in an order fixed by the blocking (for the packed kernels)
/// or p = 0, 1, ... (the row loop), whatever the number of threads that
/// share it. Products of a batch too small to share among the pool's
/// threads run side by side, one a thread.
#[allow(clippy::too_many_arguments, reason = "the kernel's arguments, as the CUDA and WGSL kernels take them")]
pub(crate) fn matmul<T: MatmulElement>(
    a: &[T],
    b: &[T],
    c: &mut [T::Acc],
    m: u64,
    n: u64,
    k: u64,
    batch: u64,
    lda: u64,
    ldb: u64,
    ldc: u64,
    sa: u64,
    sb: u64,
    sc: u64,
    flags: u32,
) -> Result<()> {
    let [m, n, k, batch, lda, ldb, ldc, sa, sb, sc] = [m, n, k, batch, lda, ldb, ldc, sa, sb, sc].map(|v| v as usize);
    let layout = |ld, transposed| MatrixLayout { transposed, ld, stride: 0 };
    let shape = MatmulShape::new(m, n, k).batch(batch).layouts(
        MatrixLayout { stride: sa, ..layout(lda, flags & 1 != 0) },
        MatrixLayout { stride: sb, ..layout(ldb, flags & 2 != 0) },
        MatrixLayout { stride: sc, ..layout(ldc, false) },
    );
    let what = || format!("matmul {shape} (CPU)");
    shape.check_layouts().map_err(|reason| Error::invalid(what(), reason))?;
    let spans = shape.spans().ok_or_else(|| Error::invalid(what(), "overflows the address space"))?;
    if a.len() < spans[0] || b.len() < spans[1] || c.len() < spans[2] {
        return Err(Error::invalid(what(), "operands shorter than the shape"));
    }
    if shape.is_empty() {
        return Ok(());
    }
    // A stored matrix of one row takes any leading dimension: give it its width.
    let ld = |layout: &MatrixLayout, rows, cols| {
        let (r, c) = layout.stored(rows, cols);
        if r > 1 { layout.ld } else { c.max(1) }
    };
    let one = Product {
        m,
        n,
        k,
        a: Operand { ld: ld(&shape.a, m, k), transposed: shape.a.transposed },
        b: Operand { ld: ld(&shape.b, k, n), transposed: shape.b.transposed },
        ldc: ld(&shape.c, m, n),
    };
    let c_span = shape.c.span(m, n, 1).unwrap_or(0);
    // With k = 0, a and b span nothing whatever their strides: nothing is read.
    let run = |z: usize, c: &mut [T::Acc]| {
        let (a, b) = (a.get(z * sa..).unwrap_or(&[]), b.get(z * sb..).unwrap_or(&[]));
        product::<T>(a, b, &mut c[..c_span], &one)
    };
    if batch > 1 && m.saturating_mul(n).saturating_mul(k) < PARALLEL_FROM {
        // c's matrices are at least one span apart (check_layouts), so sc >= c_span > 0.
        c.par_chunks_mut(sc).take(batch).enumerate().for_each(|(z, c)| run(z, c));
    } else {
        for z in 0..batch {
            run(z, &mut c[z * sc..]);
        }
    }
    Ok(())
}

/// One product; the slices hold its operands.
fn product<T: MatmulElement>(a: &[T], b: &[T], c: &mut [T::Acc], p: &Product) {
    match T::DTYPE {
        _ if p.k == 0 => c.chunks_mut(p.ldc).for_each(|row| row[..p.n].fill(T::zero())),
        DType::F32 => packed::<f32>(bytemuck::cast_slice(a), bytemuck::cast_slice(b), bytemuck::cast_slice_mut(c), p),
        DType::F64 => packed::<f64>(bytemuck::cast_slice(a), bytemuck::cast_slice(b), bytemuck::cast_slice_mut(c), p),
        DType::F16 | DType::BF16 => {
            // The operands' spans widened (their layouts kept); c is f32.
            let wide = |x: &[T], span: usize| -> Vec<T::Acc> { x[..span].iter().map(|v| v.widen()).collect() };
            let (wa, wb) = (wide(a, p.a.span(p.m, p.k)), wide(b, p.b.span(p.k, p.n)));
            packed::<f32>(bytemuck::cast_slice(&wa), bytemuck::cast_slice(&wb), bytemuck::cast_slice_mut(c), p)
        }
        _ => rows::<T>(a, b, c, p),
    }
}

/// Rows of c in parallel; within a row, the i-k-j order streams rows of b
/// (cache-friendly where b is not transposed) and adds each element's k
/// products in order.
fn rows<T: MatmulElement>(a: &[T], b: &[T], c: &mut [T::Acc], p: &Product) {
    let Product { n, k, .. } = *p;
    c.par_chunks_mut(p.ldc).enumerate().for_each(|(i, row)| {
        let row = &mut row[..n];
        row.fill(T::zero());
        for q in 0..k {
            let x = a[p.a.at(i, q)].widen();
            for (j, out) in row.iter_mut().enumerate() {
                *out = T::mul_add(*out, x, b[p.b.at(q, j)].widen());
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
    type Packed<T> = fn(&[T], &[T], &mut [T], &Product);

    /// A dense product of `m x k` by `k x n`.
    fn dense(m: usize, n: usize, k: usize) -> Product {
        let op = |ld| Operand { ld, transposed: false };
        Product { m, n, k, a: op(k), b: op(n), ldc: n }
    }

    /// The layouts each shape is tried with: dense; a transposed; b
    /// transposed and every leading dimension padded.
    fn layouts(m: usize, n: usize, k: usize) -> [Product; 3] {
        let d = dense(m, n, k);
        let t = |ld| Operand { ld, transposed: true };
        [
            d,
            Product { a: t(m), ..d },
            Product { a: Operand { ld: k + 3, transposed: false }, b: t(k + 5), ldc: n + 2, ..d },
        ]
    }

    /// `x` (`rows x cols`, row-major) stored as `op` says, the gaps poisoned.
    fn store<T: Copy + From<f32>>(x: &[T], rows: usize, cols: usize, op: Operand) -> Vec<T> {
        let (r, c) = if op.transposed { (cols, rows) } else { (rows, cols) };
        let mut out = vec![T::from(f32::NAN); (r - 1) * op.ld + c];
        for i in 0..rows {
            for j in 0..cols {
                out[op.at(i, j)] = x[i * cols + j];
            }
        }
        out
    }

    /// `product` in a pool of `threads` against an f64 reference, within
    /// `(k + 2) eps sum |a b|`, its output poisoned first, at every shape
    /// and layout; c's padding left as it was.
    fn agrees<T>(product: Packed<T>, threads: usize, eps: f64)
    where
        T: Copy + Send + Sync + From<f32> + Into<f64>,
    {
        let mut rng = ChaCha8Rng::seed_from_u64(29 + threads as u64);
        let pool = pool(threads);
        for (m, n, k) in SHAPES {
            let a: Vec<T> = (0..m * k).map(|_| T::from(rng.random_range(-2.0f32..2.0))).collect();
            let b: Vec<T> = (0..k * n).map(|_| T::from(rng.random_range(-2.0f32..2.0))).collect();
            for p in layouts(m, n, k) {
                let (sa, sb) = (store(&a, m, k, p.a), store(&b, k, n, p.b));
                let mut c = vec![T::from(f32::NAN); (m - 1) * p.ldc + n];
                pool.install(|| product(&sa, &sb, &mut c, &p));
                for i in 0..m {
                    for j in 0..n {
                        let terms = (0..k).map(|q| a[i * k + q].into() * b[q * n + j].into());
                        let (want, abs) = terms.fold((0.0, 0.0), |(s, t), v: f64| (s + v, t + v.abs()));
                        let got: f64 = c[i * p.ldc + j].into();
                        let bound = (k + 2) as f64 * eps * abs;
                        assert!(
                            (got - want).abs() <= bound,
                            "{p:?} on {threads} threads, ({i}, {j}): {got} against {want}"
                        );
                    }
                    if i + 1 < m {
                        assert!(c[i * p.ldc + n..(i + 1) * p.ldc].iter().all(|v| (*v).into().is_nan()), "{p:?}");
                    }
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
        many.install(|| packed(&a, &b, &mut alone, &dense(m, n, k)));
        let together: Vec<Vec<f32>> = many.install(|| {
            (0..2 * THREADS[2])
                .into_par_iter()
                .map(|_| {
                    let mut c = vec![f32::NAN; m * n];
                    packed(&a, &b, &mut c, &dense(m, n, k));
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
