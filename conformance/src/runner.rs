//! The runner: every case at every size on one device, as records.

use std::panic::{AssertUnwindSafe, catch_unwind};

use kiln_core::{Backend, DType, Device, Error};

use crate::{Case, Ctx, Divergence, Expect, Failure, KNOWN, Record, Status, cases, flushes_subnormals};

/// The sizes every case runs at: empty, one, a warp and a block +-1, a large
/// prime, and one past a power of two large enough to need many blocks.
pub const SIZES: [usize; 13] = [0, 1, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 100_003, (1 << 20) + 1];

/// The sizes of a quick run (`kiln conform --quick`).
pub const QUICK_SIZES: [usize; 6] = [0, 1, 31, 33, 257, 1025];

/// The base seed when none is given; per-case seeds are derived from it.
pub const DEFAULT_SEED: u64 = 0x6b69_6c6e_2023_0001;

/// The environment variable that overrides the base seed.
pub const SEED_VAR: &str = "KILN_CONFORMANCE_SEED";

/// What to run, with what.
#[derive(Debug, Clone)]
pub struct Options {
    /// Only patterns of this group or name ("map", "map/sqrt"); `None` for all.
    pub pattern: Option<String>,
    /// The sizes to run each case at.
    pub sizes: Vec<usize>,
    /// The base seed.
    pub seed: u64,
    /// The known divergences.
    pub divergences: Vec<Divergence>,
}

impl Default for Options {
    /// Every pattern, every size, the default seed, the known divergences.
    fn default() -> Self {
        Options { pattern: None, sizes: SIZES.to_vec(), seed: DEFAULT_SEED, divergences: KNOWN.to_vec() }
    }
}

impl Options {
    /// The defaults, with the base seed from `KILN_CONFORMANCE_SEED` when it
    /// is set (decimal or `0x` hex); `Err` names a value that does not parse.
    pub fn from_env() -> kiln_core::Result<Self> {
        let mut o = Options::default();
        if let Ok(v) = std::env::var(SEED_VAR) {
            o.seed = parse_seed(&v).ok_or_else(|| {
                Error::invalid(SEED_VAR, format!("{v:?} is not a seed (a decimal or 0x-prefixed hex u64)"))
            })?;
        }
        Ok(o)
    }

    /// Whether a case of `group` named `pattern` is selected.
    pub fn selects(&self, group: &str, pattern: &str) -> bool {
        self.pattern.as_deref().is_none_or(|f| {
            f == group || f == pattern || pattern.strip_prefix(f).is_some_and(|rest| rest.starts_with('/'))
        })
    }
}

/// Parse a seed written in decimal or as `0x` hex.
///
/// # Examples
/// ```
/// assert_eq!(kiln_conformance::parse_seed("0x10"), Some(16));
/// assert_eq!(kiln_conformance::parse_seed("17"), Some(17));
/// assert_eq!(kiln_conformance::parse_seed("seventeen"), None);
/// ```
pub fn parse_seed(text: &str) -> Option<u64> {
    let t = text.trim();
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => t.parse().ok(),
    }
}

/// The seed of one case at one size: the base seed mixed with the case's
/// identity, so each case's inputs are independent of which others run.
pub fn case_seed(base: u64, pattern: &str, dtype: DType, size: usize) -> u64 {
    // FNV-1a over the identity, then a SplitMix64 finaliser.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in pattern.bytes().chain(dtype.name().bytes()).chain(size.to_le_bytes()) {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    let mut z = base ^ h;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Where a run is, for progress display.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// Case runs finished so far.
    pub done: usize,
    /// Case runs in all.
    pub total: usize,
    /// The pattern just run.
    pub pattern: &'a str,
    /// Its dtype.
    pub dtype: DType,
    /// Its size.
    pub size: usize,
}

/// Run every selected case of the suite at every size on `device`; calls
/// `progress` after each. Failures are records, never panics or errors.
///
/// # Examples
/// ```
/// use kiln_conformance::{run, Options, Status};
/// let dev = kiln_core::Device::<kiln_cpu::Cpu>::open(0).unwrap();
/// let options = Options { pattern: Some("map/abs".into()), sizes: vec![0, 33], ..Options::default() };
/// let records = run(&dev, &options, &mut |_| {});
/// assert_eq!(records.len(), 6 * 2);                       // 6 dtypes (f16, bf16 too) x 2 sizes
/// assert!(records.iter().all(|r| r.status == Status::Pass));
/// ```
pub fn run<B: Backend>(device: &Device<B>, options: &Options, progress: &mut dyn FnMut(&Progress<'_>)) -> Vec<Record> {
    run_cases(device, &cases::<B>(), options, progress)
}

/// Run the selected cases among `cases` (for suites of one's own, and for
/// testing the runner itself).
pub fn run_cases<B: Backend>(
    device: &Device<B>,
    cases: &[Case<B>],
    options: &Options,
    progress: &mut dyn FnMut(&Progress<'_>),
) -> Vec<Record> {
    let info = device.info();
    let selected: Vec<&Case<B>> = cases.iter().filter(|c| options.selects(c.group, &c.pattern)).collect();
    let total = selected.len() * options.sizes.len();
    let mut records = Vec::with_capacity(total);
    for case in selected {
        let divergence =
            options.divergences.iter().find(|d| d.applies(info, case.group, &case.pattern, case.dtype)).copied();
        for &size in &options.sizes {
            let status = match divergence {
                Some(d) if d.expect == Expect::Unsupported => Status::Unsupported { reason: d.reason.to_string() },
                _ => {
                    let seed = case_seed(options.seed, &case.pattern, case.dtype, size);
                    match (divergence, run_one(device, case, size, seed)) {
                        (Some(d), Status::Fail { .. }) => Status::ExpectedFail { reason: d.reason.to_string() },
                        (Some(d), Status::Pass) => Status::UnexpectedPass { reason: d.reason.to_string() },
                        (_, status) => status,
                    }
                }
            };
            records.push(Record {
                pattern: case.pattern.clone(),
                dtype: case.dtype.name().to_string(),
                size,
                backend: info.backend.name().to_string(),
                device: info.name.clone(),
                status,
            });
            progress(&Progress { done: records.len(), total, pattern: &case.pattern, dtype: case.dtype, size });
        }
    }
    records
}

/// Run `case` once at `size` with `seed`, with no divergence applied.
pub fn run_one<B: Backend>(device: &Device<B>, case: &Case<B>, size: usize, seed: u64) -> Status {
    let mut ctx = Ctx::new(size, seed, flushes_subnormals(B::KIND));
    // A backend that panics must not take the whole matrix down with it.
    let outcome =
        catch_unwind(AssertUnwindSafe(|| (case.run)(device, &mut ctx).and_then(|()| Ok(device.synchronize()?))));
    let fail = |index, expected, got, message| Status::Fail { seed, index, expected, got, message };
    match outcome {
        Ok(Ok(())) => Status::Pass,
        Ok(Err(Failure::Error(e @ Error::Unsupported { .. }))) => Status::Unsupported { reason: e.to_string() },
        Ok(Err(Failure::Mismatch(m))) => {
            let (index, expected, got) = (m.index, m.expected.clone(), m.got.clone());
            fail(Some(index), Some(expected), Some(got), m.to_string())
        }
        Ok(Err(f)) => fail(None, None, None, f.to_string()),
        Err(panic) => fail(None, None, None, format!("panicked: {}", panic_text(&*panic))),
    }
}

/// The message a panic carried (its payload, where that is a string).
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "a non-string panic payload".to_string())
}
