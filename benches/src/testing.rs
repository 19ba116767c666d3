//! What the bench modules' tests share: a CPU stream, quick run options,
//! the patterns a module handles, and the check that a case times.

use kiln_core::{Device, Result, Stream};
use kiln_cpu::Cpu;

use crate::case::{Case, Pattern};
use crate::options::RunOptions;
use crate::timing::Timing;

/// A stream of the CPU device and options for two timed runs after one warm-up.
pub(crate) fn cpu() -> (Stream<Cpu>, RunOptions) {
    let stream = Device::<Cpu>::open(0).unwrap().stream();
    (stream, RunOptions { warmup: 1, runs: 2, ..Default::default() })
}

/// The patterns of [`Pattern::ALL`] that a module's `handles` accepts.
pub(crate) fn handled(handles: fn(Pattern) -> bool) -> Vec<Pattern> {
    Pattern::ALL.into_iter().filter(|&p| handles(p)).collect()
}

/// Time `case` with `run`: it must succeed with the two runs of [`cpu`]'s
/// options and take time.
pub(crate) fn assert_times(case: &Case, run: impl FnOnce(&Case) -> Result<Timing>) {
    let name = case.pattern.name();
    let t = run(case).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(t.runs, 2, "{name}");
    assert!(t.median_ms > 0.0, "{name}");
}
