//! CPU implementation of matmul: every strategy computes the same sums.
//!
//! `f32` and `f64` go through the `gemm` crate (packed, cache-blocked
//! kernels chosen for the CPU's SIMD at run time, threaded through rayon);
//! the others (`f16`, `bf16` into `f32`; `i32`, `u32` wrapping) through the
//! row loop below.

use kiln_core::{DType, Error, HostArgs, Result};
use rayon::prelude::*;

use super::MatmulElement;

/// Products of fewer multiply-adds than this run on one thread: below it,
/// handing blocks to the pool costs more than it saves.
const PARALLEL_FROM: usize = 1 << 18;

/// `c = a . b`; arguments (a, b, c, m, n, k), row-major.
///
/// Results depend only on the inputs and the machine's SIMD width: each
/// element of `c` is one thread's sum over k, in an order fixed by the
/// blocking (for `gemm`) or p = 0, 1, ... (the row loop), whatever the
/// thread count.
pub(crate) fn matmul<T: MatmulElement>(args: &mut HostArgs<'_>) -> Result<()> {
    let (a, b) = (args.input::<T>(0)?, args.input::<T>(1)?);
    let m = args.scalar::<u64>(3)? as usize;
    let n = args.scalar::<u64>(4)? as usize;
    let k = args.scalar::<u64>(5)? as usize;
    let c = args.output::<T::Acc>(2)?;
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

/// `c = a . b` through `gemm`, row-major, for `f32` and `f64`; the slices
/// hold the shapes (checked by `matmul`).
fn packed<T: Copy + 'static + num_one::One>(a: &[T], b: &[T], c: &mut [T], (m, n, k): (usize, usize, usize)) {
    let parallelism = if m * n * k >= PARALLEL_FROM { gemm::Parallelism::Rayon(0) } else { gemm::Parallelism::None };
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
            T::one(),
            T::one(),
            false,
            false,
            false,
            parallelism,
        )
    }
}

/// One of `f32` and `f64`.
mod num_one {
    pub trait One {
        fn one() -> Self;
    }
    impl One for f32 {
        fn one() -> f32 {
            1.0
        }
    }
    impl One for f64 {
        fn one() -> f64 {
            1.0
        }
    }
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
