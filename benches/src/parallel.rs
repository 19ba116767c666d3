//! The bench cases of the data-parallel patterns (reduce sum, dot,
//! inclusive and exclusive scans, compaction, histograms): their inputs,
//! rotation among buffer sets, and the timed call. Every timed call leaves
//! its result on the device (`reduce_into`, `copy_if_into`,
//! `histogram_into`), so a run is device work only, never a read back to
//! the host.

use kiln_core::{Args, Backend, Buffer, DType, Error, Result, Stream};
use kiln_kernels::Number;
use kiln_kernels::compact::{Predicate, copy_if_into};
use kiln_kernels::expr::var;
use kiln_kernels::histogram::{HistogramInput, histogram_into};
use kiln_kernels::reduce::{ReduceOp, dot_into, reduce_into};
use kiln_kernels::scan::{ScanKind, scan};
use kiln_kernels::user::{Reduction, Scan};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::case::{Case, Pattern};
use crate::options::{RunOptions, set_count};
use crate::timing::{Timing, time_runs};

/// The histogram cases: 256 bins over [0, 1024), as the targets state them,
/// for i32 and f32 samples alike; the skewed cases' every sample is 7 (bin 1).
const BINS: usize = 256;
const RANGE: (i32, i32) = (0, 1024);
const SKEWED: i32 = 7;

/// Whether this module runs `pattern`.
pub(crate) fn handles(pattern: Pattern) -> bool {
    matches!(
        pattern,
        Pattern::ReduceSum
            | Pattern::Dot
            | Pattern::ScanInclusive
            | Pattern::ScanExclusive
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
    if let Pattern::Histogram { sample, skewed } = case.pattern {
        let (lo, hi) = RANGE;
        let n = case.n;
        return match sample {
            DType::I32 => {
                let host = if skewed { vec![SKEWED; n] } else { (0..n).map(|_| rng.random_range(lo..hi)).collect() };
                histogram(stream, case, &host, lo.into(), hi.into(), opts)
            }
            DType::F32 => {
                let (lo, hi) = (lo as f32, hi as f32);
                let host =
                    if skewed { vec![SKEWED as f32; n] } else { (0..n).map(|_| rng.random_range(lo..hi)).collect() };
                histogram(stream, case, &host, lo, hi, opts)
            }
            d => Err(Error::invalid("bench", format!("no histogram bench of {d} samples"))),
        };
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
            Pattern::ScanExclusive => scan(stream, ScanKind::Exclusive, x, y),
            Pattern::Compact => copy_if_into(stream, x, Predicate::GreaterThan(threshold), y, count),
            Pattern::UserSumSquares => sum_squares.reduce_into(stream, Args::new().arg(&*x), result),
            Pattern::UserScan => user_scan.scan(stream, ScanKind::Inclusive, Args::new().arg(&*x), y),
            p => Err(Error::invalid("bench", format!("{} is not a reduction, scan or compaction", p.name()))),
        }
    })
}

/// Time the histogram of `host` into [`BINS`] bins over `[lo, hi)`.
fn histogram<B: Backend, T: HistogramInput>(
    stream: &Stream<B>,
    case: &Case,
    host: &[T],
    lo: T::Bound,
    hi: T::Bound,
    opts: &RunOptions,
) -> Result<Timing> {
    let sets = set_count(stream, case.pattern.bytes(host.len(), T::DTYPE));
    let mut buffers = (0..sets)
        .map(|_| Ok((stream.upload(host)?, stream.alloc::<u32>(BINS)?, stream.alloc::<u64>(1)?)))
        .collect::<Result<Vec<_>>>()?;
    stream.synchronize()?;
    time_runs(stream, &opts.sampling(), |i| {
        let (x, counts, dropped) = &mut buffers[i % sets];
        histogram_into(stream, x, BINS, lo, hi, counts, dropped)
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
        for sample in [DType::I32, DType::F32] {
            let skewed = Pattern::Histogram { sample, skewed: true };
            assert_eq!(skewed.fixed_dtype(), Some(sample));
            assert_eq!(skewed.bytes(1000, sample), 4000, "reads its samples once");
        }
        let names: Vec<String> =
            Pattern::ALL.into_iter().filter(|p| matches!(p, Pattern::Histogram { .. })).map(Pattern::name).collect();
        assert_eq!(names, ["histogram_i32", "histogram_i32_skewed", "histogram_f32", "histogram_f32_skewed"]);
    }

    /// The exclusive scan is the inclusive one's twin: `--pattern scan`
    /// selects both (and the user scan), and their models agree, so their
    /// rows compare like with like.
    #[test]
    fn the_exclusive_scan_is_the_inclusive_ones_twin() {
        let names: Vec<String> =
            Pattern::ALL.into_iter().map(Pattern::name).filter(|name| name.contains("scan")).collect();
        assert_eq!(names, ["scan_inclusive", "scan_exclusive", "user_scan"]);
        assert_eq!(Pattern::from_name("scan_exclusive"), Some(Pattern::ScanExclusive));
        let (inclusive, exclusive) = (Pattern::ScanInclusive, Pattern::ScanExclusive);
        assert_eq!(exclusive.bytes(1000, DType::F32), 8000, "reads x, writes y");
        assert_eq!(exclusive.bytes(1000, DType::F32), inclusive.bytes(1000, DType::F32));
        assert_eq!(exclusive.flops(1000), inclusive.flops(1000));
        assert_eq!(exclusive.arrays(), inclusive.arrays());
    }
}
