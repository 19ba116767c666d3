//! kiln-conformance: every pattern, on every backend, against a plain-Rust
//! reference.
//!
//! The suite is written once, generic over the backend:
//!
//! - **Cases** ([`cases`]) are a pattern ("map/square") on a dtype, with a
//!   body generic over the backend, in groups ("map") written once, in
//!   [`for_each_group!`]; a new pattern is one entry in its group's file
//!   under [`patterns`].
//! - **Inputs** are random, from a seed derived from a base seed and the
//!   case ([`case_seed`]), and adversarial: NaN, +-inf, -0.0, subnormals and
//!   the extremes of each type ([`Sample`]); every case runs at every size of
//!   [`SIZES`] (0, 1, warp and block sizes +-1, a large prime, 2^20 + 1).
//! - **Outputs are poisoned** before each run with a value the comparer
//!   never accepts in place of the expected one ([`Sample::poison`]), so an
//!   element a kernel fails to write is caught.
//! - **Expected values** come from [`Arith`], a sequential reference written
//!   from the specification, never from a backend's own kernels, so the CPU
//!   column is a real check too.
//! - **One comparer** ([`compare`], [`assert_matches`]): exact for integers,
//!   a relative bound in ulps for floats, NaN-aware, reporting the first bad
//!   index with its neighbours.
//! - **Known divergences are data** ([`KNOWN`], [`Divergence`]): a reason, and
//!   a condition checked against the device (no f64). An expected failure
//!   that starts passing is reported as such.
//! - **One runner** ([`run`]) returns [`Record`]s (serialisable) that the
//!   `kiln conform` command prints as a pattern x backend [`matrix`] and
//!   writes as JSON; [`conformance_tests!`] stamps the suite into a backend's
//!   tests.
//!
//! # Examples
//! ```
//! use kiln_conformance::{matrix, run, Options, Summary, QUICK_SIZES};
//!
//! let dev = kiln_core::Device::<kiln_cpu::Cpu>::open(0).unwrap();
//! let options = Options { sizes: QUICK_SIZES.to_vec(), ..Options::default() };
//! let records = run(&dev, &options, &mut |_| {});
//! assert!(Summary::of(&records).ok());
//! println!("{}", matrix(&records));
//! ```
#![deny(missing_docs)]

mod case;
mod compare;
mod divergence;
pub mod harness;
pub mod patterns;
mod record;
mod reference;
mod registry;
mod report;
mod runner;
mod sample;
pub mod stress;

pub use case::{Case, CaseFn, Cases, Ctx, ElementPattern, Failure, NumberPattern, flushed, or_flushed, poisoned};
pub use compare::{Expected, Mismatch, Tolerance, assert_matches, close, compare};
pub use divergence::{Condition, Divergence, Expect, Feature, KNOWN, SUBNORMAL_FLUSH, flushes_subnormals};
pub use record::{Record, Status};
pub use reference::{Arith, binary, unary};
pub use registry::{GROUPS, cases};
pub use report::{Summary, matrix, notes};
pub use runner::{
    DEFAULT_SEED, Options, Progress, QUICK_SIZES, SEED_VAR, SIZES, case_seed, parse_seed, run, run_cases, run_one,
};
pub use sample::{CaseRng, Sample, poison_for, random_vec};
