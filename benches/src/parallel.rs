//! The bench cases of the data-parallel patterns (reduce sum, dot,
//! inclusive scan, compaction, histograms): their inputs, rotation among
//! buffer sets, and the timed call. Every timed call leaves its result on
//! the device (`reduce_into`, `copy_if_into`, `histogram_into`), so a run
//! is device work only, never a read back to the host.

use kiln_core::{Args, Backend, Buffer, DType, Error, Result, Stream};
use kiln_kernels::Number;
use kiln_kernels::compact::{Predicate, copy_if_into};
use kiln_kernels::expr::var;
use kiln_kernels::histogram::histogram_into;
use kiln_kernels::reduce::{ReduceOp, dot_into, reduce_into};
use kiln_kernels::scan::{ScanKind, scan};
use kiln_kernels::user::{Reduction, Scan};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::case::{Case, Pattern};
use crate::options::{RunOptions, set_count};
use crate::timing::{Timing, time_runs};

/// The histogram cases: 256 bins over [0, 1024), as the targets state them.
const BINS: usize = 256;
const RANGE: (i64, i64) = (0, 1024);

/// Whether this module runs `pattern`.
pub(crate) fn handles(pattern: Pattern) -> bool {
    matches!(
        pattern,
        Pattern::ReduceSum
            | Pattern::Dot
            | Pattern::ScanInclusive
            | Pattern::Compact
            | Pattern::Histogram { .. }
            | Pattern::UserSumSquares
            | Pattern::UserScan
    )
}

/// Time `case` (a pattern [`handles`] accepts) on `stream`. Inputs are
/// uniform over the bench's usual ranges ([0.5, 2) for floats, [1, 1000)
/// for integers); the compaction keeps the values above the midpoint.
pub(crate) fn run_case<B: Backend>(stream: &Stream<B>, case: &Case, opts: &RunOptions) -> Result<Timing> {
    let mut rng = ChaCha8Rng::seed_from_u64(opts.seed ^ case.n as u64);
    if let Pattern::Histogram { skewed } = case.pattern {
        return histogram(stream, case, skewed, opts, &mut rng);
    }
    match case.dtype {
        DType::F32 => typed(stream, case, opts, || rng.random_range(0.5f32..2.0), 1.25),
        DType::F64 => typed(stream, case, opts, || rng.random_range(0.5f64..2.0), 1.25),
        DType::I32 => typed(stream, case, opts, || rng.random_range(1i32..1000), 500),
        DType::U32 => typed(stream, case, opts, || rng.random_range(1u32..1000), 500),
        d => Err(Error::invalid("bench", format!("no bench inputs for {d}"))),
    }
}

/// One buffer set: an input, a second array (dot's y, the scan's and the
/// compaction's output), a one-element result and a count.
struct Set<B: Backend, T: Number> {
    x: Buffer<B, T>,
    y: Buffer<B, T>,
    result: Buffer<B, T>,
    count: Buffer<B, u64>,
}

fn typed<B: Backend, T: Number>(
    stream: &Stream<B>,
    case: &Case,
    opts: &RunOptions,
    mut draw: impl FnMut() -> T,
    threshold: T,
) -> Result<Timing> {
    let n = case.n;
    let host: Vec<T> = (0..n).map(|_| draw()).collect();
    let sets = set_count(stream, case.pattern.bytes(n, case.dtype));
    let mut buffers = (0..sets)
        .map(|_| {
            Ok(Set {
                x: stream.upload(&host)?,
                y: stream.upload(&host)?,
                result: stream.alloc(1)?,
                count: stream.alloc(1)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    stream.synchronize()?;
    let t = kiln_kernels::expr::Ty::from(T::DTYPE);
    let sum_squares = Reduction::new("bench_sum_squares", t.clone())
        .input("x", t.clone())
        .map(var("x") * var("x"))
        .reduce(var("a") + var("b"))
        .identity(0)
        .build()?;
    let user_scan = Scan::new("bench_scan", t.clone()).input("x", t).scan(var("a") + var("b")).identity(0).build()?;
    time_runs(stream, &opts.sampling(), |i| {
        let Set { x, y, result, count } = &mut buffers[i % sets];
        match case.pattern {
            Pattern::ReduceSum => reduce_into(stream, ReduceOp::Sum, x, result),
            Pattern::Dot => dot_into(stream, x, y, result),
            Pattern::ScanInclusive => scan(stream, ScanKind::Inclusive, x, y),
            Pattern::Compact => copy_if_into(stream, x, Predicate::GreaterThan(threshold), y, count),
            Pattern::UserSumSquares => sum_squares.reduce_into(stream, Args::new().arg(&*x), result),
            Pattern::UserScan => user_scan.scan(stream, ScanKind::Inclusive, Args::new().arg(&*x), y),
            p => Err(Error::invalid("bench", format!("{} is not a reduction, scan or compaction", p.name()))),
        }
    })
}

fn histogram<B: Backend>(
    stream: &Stream<B>,
    case: &Case,
    skewed: bool,
    opts: &RunOptions,
    rng: &mut ChaCha8Rng,
) -> Result<Timing> {
    let n = case.n;
    let host: Vec<i32> =
        if skewed { vec![7; n] } else { (0..n).map(|_| rng.random_range(RANGE.0 as i32..RANGE.1 as i32)).collect() };
    let sets = set_count(stream, case.pattern.bytes(n, DType::I32));
    let mut buffers = (0..sets)
        .map(|_| Ok((stream.upload(&host)?, stream.alloc::<u32>(BINS)?, stream.alloc::<u64>(1)?)))
        .collect::<Result<Vec<_>>>()?;
    stream.synchronize()?;
    time_runs(stream, &opts.sampling(), |i| {
        let (x, counts, dropped) = &mut buffers[i % sets];
        histogram_into(stream, x, BINS, RANGE.0, RANGE.1, counts, dropped)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::every_case_times;

    #[test]
    fn every_case_runs_on_the_cpu() {
        every_case_times(handles, &[DType::F32, DType::I32], run_case);
        assert_eq!(Pattern::Compact.bytes(1000, DType::F32), 6000, "reads 1000, writes the 500 kept");
        assert_eq!(Pattern::Histogram { skewed: true }.fixed_dtype(), Some(DType::I32));
    }
}
