//! Cases: one pattern on one dtype, run on a device at a size with a seed.

use kiln_core::{Backend, Buffer, DType, Device, Error, Result};
use kiln_kernels::Number;
use rand::SeedableRng;

use crate::{Arith, CaseRng, Expected, Mismatch, Sample, compare, poison_for};

/// What one run of a case is given: its size, its seed and random generator,
/// and what the backend is allowed to differ in.
#[derive(Debug)]
pub struct Ctx {
    /// Number of elements.
    pub n: usize,
    /// The seed `rng` started from; printed with every failure.
    pub seed: u64,
    /// The case's random generator.
    pub rng: CaseRng,
    /// Whether the backend may flush subnormals to zero (see [`crate::SUBNORMAL_FLUSH`]).
    pub flush_subnormals: bool,
}

impl Ctx {
    /// A context for `n` elements whose generator starts from `seed`.
    pub fn new(n: usize, seed: u64, flush_subnormals: bool) -> Self {
        Ctx { n, seed, rng: CaseRng::seed_from_u64(seed), flush_subnormals }
    }

    /// `Err(Failure::Mismatch)` unless `got` matches `expected`.
    pub fn compare<T: Sample>(&self, what: &str, expected: &Expected<T>, got: &[T]) -> Result<(), Failure> {
        compare(what, expected, got).map_err(Failure::Mismatch)
    }

    /// Like [`compare`](Self::compare), and a mismatch also shows the
    /// `inputs` (name, values) at the first bad index, so a report says what
    /// the operation was given.
    pub fn compare_inputs<T: Sample>(
        &self,
        what: &str,
        expected: &Expected<T>,
        got: &[T],
        inputs: &[(&str, &[T])],
    ) -> Result<(), Failure> {
        compare(what, expected, got).map_err(|mut m| {
            let given: Vec<String> = inputs
                .iter()
                .filter_map(|(name, v)| v.get(m.index).map(|x| format!("{name}[{}] = {x:?}", m.index)))
                .collect();
            if !given.is_empty() {
                m.neighbours = format!("  inputs: {}\n{}", given.join(", "), m.neighbours);
            }
            Failure::Mismatch(m)
        })
    }

    /// `n` random values.
    pub fn random<T: Sample>(&mut self) -> Vec<T> {
        crate::random_vec(&mut self.rng, self.n)
    }
}

/// Why a case failed.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// A kiln call returned an error (`Unsupported` is reported as such, not as a failure).
    Error(Error),
    /// An output differs from the reference.
    Mismatch(Mismatch),
    /// The call broke a contract of its API (succeeded where it must refuse).
    Contract(String),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Error(e)
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Error(e) => write!(f, "error: {e}"),
            Failure::Mismatch(m) => write!(f, "{m}"),
            Failure::Contract(c) => write!(f, "contract broken: {c}"),
        }
    }
}

/// The body of a case.
pub type CaseFn<B> = Box<dyn Fn(&Device<B>, &mut Ctx) -> Result<(), Failure> + Send + Sync>;

/// One pattern on one dtype.
pub struct Case<B: Backend> {
    /// The pattern's group ("map"): one test of the [`conformance_tests!`](crate::conformance_tests) macro each.
    pub group: &'static str,
    /// The pattern's name ("map/square"), a row of the matrix.
    pub pattern: String,
    /// The element type.
    pub dtype: DType,
    /// The body.
    pub run: CaseFn<B>,
}

impl<B: Backend> std::fmt::Debug for Case<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Case({} {})", self.pattern, self.dtype)
    }
}

/// A pattern over the numeric types `i32`, `u32`, `f32`, `f64`.
pub trait NumberPattern: Copy + Send + Sync + 'static {
    /// Run once on `device`, on `T`, with `ctx`.
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure>;
}

/// A pattern over every type the suite samples: `u8`, `i32`, `u32`, `f32`, `f64`.
pub trait ElementPattern: Copy + Send + Sync + 'static {
    /// Run once on `device`, on `T`, with `ctx`.
    fn run<B: Backend, T: Sample>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure>;
}

/// A list of cases under construction: one call per pattern stamps it over its dtypes.
///
/// # Examples
/// ```
/// use kiln_conformance::{Cases, Failure};
/// use kiln_core::DType;
///
/// let mut cases = Cases::<kiln_cpu::Cpu>::new();
/// cases.one("demo", "demo/upload", DType::U32, |dev, ctx| {
///     let data: Vec<u32> = ctx.random();
///     let back = dev.upload(&data)?.to_vec()?;
///     if back == data { Ok(()) } else { Err(Failure::Contract("round trip changed data".into())) }
/// });
/// assert_eq!(cases.into_vec().len(), 1);
/// ```
pub struct Cases<B: Backend> {
    cases: Vec<Case<B>>,
}

impl<B: Backend> Default for Cases<B> {
    fn default() -> Self {
        Cases { cases: Vec::new() }
    }
}

impl<B: Backend> Cases<B> {
    /// No cases yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add one case with a hand-written body.
    pub fn one(
        &mut self,
        group: &'static str,
        pattern: impl Into<String>,
        dtype: DType,
        run: impl Fn(&Device<B>, &mut Ctx) -> Result<(), Failure> + Send + Sync + 'static,
    ) -> &mut Self {
        self.cases.push(Case { group, pattern: pattern.into(), dtype, run: Box::new(run) });
        self
    }

    /// Add `p` on `i32`, `u32`, `f32` and `f64`.
    pub fn numbers(&mut self, group: &'static str, pattern: impl Into<String>, p: impl NumberPattern) -> &mut Self {
        let pattern = pattern.into();
        self.one(group, pattern.clone(), DType::I32, move |d, c| p.run::<B, i32>(d, c));
        self.one(group, pattern.clone(), DType::U32, move |d, c| p.run::<B, u32>(d, c));
        self.one(group, pattern.clone(), DType::F32, move |d, c| p.run::<B, f32>(d, c));
        self.one(group, pattern, DType::F64, move |d, c| p.run::<B, f64>(d, c))
    }

    /// Add `p` on every number type: `i32`, `u32`, `f32`, `f64`, and the
    /// 16-bit floats `f16` and `bf16`.
    pub fn numbers_and_halves(
        &mut self,
        group: &'static str,
        pattern: impl Into<String>,
        p: impl NumberPattern,
    ) -> &mut Self {
        let pattern = pattern.into();
        self.numbers(group, pattern.clone(), p);
        self.one(group, pattern.clone(), DType::F16, move |d, c| p.run::<B, half::f16>(d, c));
        self.one(group, pattern, DType::BF16, move |d, c| p.run::<B, half::bf16>(d, c))
    }

    /// Add `p` on `u8`, `i32`, `u32`, `f32` and `f64`.
    pub fn elements(&mut self, group: &'static str, pattern: impl Into<String>, p: impl ElementPattern) -> &mut Self {
        let pattern = pattern.into();
        self.one(group, pattern.clone(), DType::U8, move |d, c| p.run::<B, u8>(d, c));
        self.one(group, pattern.clone(), DType::I32, move |d, c| p.run::<B, i32>(d, c));
        self.one(group, pattern.clone(), DType::U32, move |d, c| p.run::<B, u32>(d, c));
        self.one(group, pattern.clone(), DType::F32, move |d, c| p.run::<B, f32>(d, c));
        self.one(group, pattern, DType::F64, move |d, c| p.run::<B, f64>(d, c))
    }

    /// The cases, in the order they were added.
    pub fn into_vec(self) -> Vec<Case<B>> {
        self.cases
    }
}

/// A device buffer holding the poison of each expected value, for a kernel to overwrite.
pub fn poisoned<B: Backend, T: Sample>(device: &Device<B>, expected: &[T]) -> Result<Buffer<B, T>> {
    device.upload(&poison_for(expected))
}

/// Apply `f` to every element with subnormal inputs flushed to zero, and
/// flush its result: what a backend that flushes subnormals computes.
pub fn flushed<T: Sample, const K: usize>(inputs: [&[T]; K], f: impl Fn([T; K]) -> T) -> Vec<T> {
    flushed_by(inputs, f, T::flush_subnormal)
}

/// [`flushed`] with the result flushed by `flush`.
fn flushed_by<T: Sample, const K: usize>(inputs: [&[T]; K], f: impl Fn([T; K]) -> T, flush: fn(T) -> T) -> Vec<T> {
    let n = inputs.first().map_or(0, |x| x.len());
    (0..n).map(|i| flush(f(std::array::from_fn(|k| inputs[k][i].flush_subnormal())))).collect()
}

/// `expected` also accepting what a backend that flushes subnormals
/// computes: [`flushed`], and where the type computes in a wider one whose
/// own subnormals may flush before the rounding ([`Sample::flush_result`]:
/// bf16 through f32), that result too.
///
/// # Examples
/// ```
/// use half::bf16;
/// use kiln_conformance::{Expected, Tolerance, compare, or_flushed};
/// let tiny = bf16::MIN_POSITIVE; // f32's smallest normal too
/// let op = |x: [bf16; 1], y: [bf16; 1], f: fn(f32, f32) -> f32| {
///     let f = move |[x, y]: [bf16; 2]| bf16::from_f32(f(x.to_f32(), y.to_f32()));
///     or_flushed(Expected::new(vec![f([x[0], y[0]])], Tolerance::Ulps(0)), [&x[..], &y[..]], f)
/// };
/// // (1 - 2^-8) 2^-126 rounds up to bf16's smallest normal; in f32 it is
/// // subnormal, and a backend that flushes gives zero.
/// let mul = op([bf16::from_f32(-0.99609375)], [-tiny], |x, y| x * y);
/// assert!(compare("mul", &mul, &[tiny]).is_ok());
/// assert!(compare("mul", &mul, &[bf16::ZERO]).is_ok());
/// assert!(compare("mul", &mul, &[bf16::ONE]).is_err());
/// // A subnormal input read as zero leaves the smallest normal, kept.
/// let add = op([bf16::from_bits(0x0003)], [tiny], |x, y| x + y);
/// assert!(compare("add", &add, &[bf16::from_bits(0x0083)]).is_ok());
/// assert!(compare("add", &add, &[tiny]).is_ok());
/// ```
pub fn or_flushed<T: Sample, const K: usize>(
    expected: Expected<T>,
    inputs: [&[T]; K],
    f: impl Fn([T; K]) -> T,
) -> Expected<T> {
    let narrow = flushed(inputs, &f);
    let wide = flushed_by(inputs, &f, T::flush_result);
    let differs = narrow.iter().zip(&wide).any(|(a, b)| !a.same_as(*b));
    let expected = expected.or(narrow);
    if differs { expected.or(wide) } else { expected }
}
