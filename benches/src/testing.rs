//! What the bench modules' tests share: a CPU stream with quick run
//! options, and every case a module handles timed on it.

use kiln_core::{DType, Device, Result, Stream};
use kiln_cpu::Cpu;

use crate::case::{Case, Pattern};
use crate::options::RunOptions;
use crate::timing::Timing;

/// A stream of the CPU device and options for two timed runs after one warm-up.
pub(crate) fn cpu() -> (Stream<Cpu>, RunOptions) {
    let stream = Device::<Cpu>::open(0).unwrap().stream();
    (stream, RunOptions { warmup: 1, runs: 2, ..Default::default() })
}

/// Time, with `run` on the CPU, every pattern of [`Pattern::ALL`] that
/// `handles` accepts on each of `dtypes` (a pattern's fixed dtype in their
/// place where it has one), at 4 Ki elements: each must succeed with two
/// runs that took time.
pub(crate) fn every_case_times(
    handles: impl Fn(Pattern) -> bool,
    dtypes: &[DType],
    run: impl Fn(&Stream<Cpu>, &Case, &RunOptions) -> Result<Timing>,
) {
    let (s, opts) = cpu();
    for pattern in Pattern::ALL.into_iter().filter(|&p| handles(p)) {
        for &dtype in dtypes {
            let case = Case { pattern, dtype: pattern.fixed_dtype().unwrap_or(dtype), n: 1 << 12 };
            let name = pattern.name();
            let t = run(&s, &case, &opts).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(t.runs, 2, "{name}");
            assert!(t.median_ms > 0.0, "{name}");
        }
    }
}
