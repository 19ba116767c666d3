//! The bench cases of kiln's arrays and random numbers: a fused
//! `alpha * x + y` into a new array, a fused expression reduced on the
//! device, the sums of a few long rows, and Philox uniform and normal fills. Inputs are uniform in [0.5, 2), made before timing
//! and rotated among sets as the other cases do.

use kiln_core::{Backend, DType, Error, Result, Stream};
use kiln_kernels::Number;
use kiln_kernels::array::{Array, ArrayExpr, Fold};
use kiln_kernels::random::{Normal, Philox, Uniform};
use ndarray::s;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::case::{Case, Pattern};
use crate::options::{RunOptions, set_count};
use crate::timing::{Timing, time_runs};

/// The rows of `array_row_sums` (the elements past a multiple of it are left out).
const ROWS: usize = 8;

/// Whether this module runs `pattern`.
pub(crate) fn handles(pattern: Pattern) -> bool {
    matches!(
        pattern,
        Pattern::ArrayAxpy
            | Pattern::ArrayFusedSum
            | Pattern::ArrayRowSums
            | Pattern::RandomUniform
            | Pattern::RandomNormal
    )
}

/// Time `case` (a pattern [`handles`] accepts) on `stream`.
pub(crate) fn run_case<B: Backend>(stream: &Stream<B>, case: &Case, opts: &RunOptions) -> Result<Timing> {
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed ^ case.n as u64);
    match (case.pattern, case.dtype) {
        (Pattern::RandomUniform, DType::F32) => uniform::<B, f32>(stream, case, opts),
        (Pattern::RandomUniform, DType::F64) => uniform::<B, f64>(stream, case, opts),
        (Pattern::RandomUniform, DType::U32) => uniform::<B, u32>(stream, case, opts),
        (Pattern::RandomNormal, DType::F32) => normal::<B, f32>(stream, case, opts),
        (Pattern::RandomNormal, DType::F64) => normal::<B, f64>(stream, case, opts),
        (_, DType::F32) => typed(stream, case, opts, || rng.random_range(0.5f32..2.0)),
        (_, DType::F64) => typed(stream, case, opts, || rng.random_range(0.5f64..2.0)),
        (p, d) => Err(Error::invalid(
            "bench",
            format!("{} runs on f32 and f64 (u32 too for random_uniform), not {d}", p.name()),
        )),
    }
}

fn typed<B: Backend, T: Number>(
    stream: &Stream<B>,
    case: &Case,
    opts: &RunOptions,
    mut draw: impl FnMut() -> T,
) -> Result<Timing> {
    let n = case.n;
    let host: Vec<T> = (0..n).map(|_| draw()).collect();
    let sets = set_count(stream, case.pattern.bytes(n, case.dtype));
    let arrays = (0..sets)
        .map(|_| Ok((Array::from_vec(stream, &[n], &host)?, Array::from_vec(stream, &[n], &host)?)))
        .collect::<Result<Vec<_>>>()?;
    stream.synchronize()?;
    let alpha = ArrayExpr::scalar(draw());
    let two = ArrayExpr::scalar(T::from_index(2));
    time_runs(stream, &opts.sampling(), |i| {
        let (x, y) = &arrays[i % sets];
        match case.pattern {
            Pattern::ArrayAxpy => (x * &alpha + y).eval().map(drop),
            Pattern::ArrayFusedSum => (x * &two + y).sqrt().fold_axes(Fold::Sum, &[0]).map(drop),
            Pattern::ArrayRowSums => {
                let rows = x.slice(s![..ROWS * (n / ROWS)])?.reshape(&[ROWS, n / ROWS])?;
                rows.fold_axes(Fold::Sum, &[1]).map(drop)
            }
            p => Err(Error::invalid("bench", format!("{} is not an array case", p.name()))),
        }
    })
}

fn uniform<B: Backend, T: Uniform>(stream: &Stream<B>, case: &Case, opts: &RunOptions) -> Result<Timing> {
    let sets = set_count(stream, case.pattern.bytes(case.n, case.dtype));
    let mut buffers = (0..sets).map(|_| stream.alloc::<T>(case.n)).collect::<Result<Vec<_>>>()?;
    let mut rng = Philox::new(opts.seed);
    time_runs(stream, &opts.sampling(), |i| rng.fill_uniform(stream, &mut buffers[i % sets]))
}

fn normal<B: Backend, T: Normal>(stream: &Stream<B>, case: &Case, opts: &RunOptions) -> Result<Timing> {
    let sets = set_count(stream, case.pattern.bytes(case.n, case.dtype));
    let mut buffers = (0..sets).map(|_| stream.alloc::<T>(case.n)).collect::<Result<Vec<_>>>()?;
    let mut rng = Philox::new(opts.seed);
    time_runs(stream, &opts.sampling(), |i| rng.fill_normal(stream, &mut buffers[i % sets]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{cpu, every_case_times};

    #[test]
    fn every_case_runs_on_the_cpu() {
        every_case_times(handles, &[DType::F32, DType::F64], run_case);
        let (s, opts) = cpu();
        assert!(run_case(&s, &Case { pattern: Pattern::ArrayAxpy, dtype: DType::I32, n: 8 }, &opts).is_err());
    }
}
