//! Known divergences, as data: where a backend or device is allowed, or
//! known, to differ from the reference, and why.

use kiln_core::{BackendKind, DType, DeviceInfo, Features};

/// An optional device feature a divergence can depend on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feature {
    /// 64-bit floats in kernels.
    F64,
    /// 16-bit floats in kernels.
    F16,
    /// Subgroup (warp) operations.
    Subgroups,
}

impl Feature {
    /// Whether `features` include this one.
    pub fn present(self, features: &Features) -> bool {
        match self {
            Feature::F64 => features.f64,
            Feature::F16 => features.f16,
            Feature::Subgroups => features.subgroups,
        }
    }
}

/// When a divergence applies, checked against the device at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Condition {
    /// On every device it names.
    Always,
    /// On devices without this feature.
    Lacks(Feature),
    /// Where the driver's description contains this text ("NVIDIA").
    Driver(&'static str),
}

/// What a divergence makes of its cases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Not run: reported as unsupported, with the reason.
    Unsupported,
    /// Run, and expected to fail: a failure is reported as expected, a pass
    /// as an unexpected pass (which fails the run, so the entry gets removed).
    Failure,
}

/// One known divergence.
///
/// # Examples
/// ```
/// use kiln_conformance::{Condition, Divergence, Expect, Feature};
/// use kiln_core::{BackendKind, DType};
///
/// let no_f64 = Divergence {
///     backend: Some(BackendKind::Wgpu),
///     patterns: &["map"],
///     dtype: Some(DType::F64),
///     when: Condition::Lacks(Feature::F64),
///     expect: Expect::Unsupported,
///     reason: "adapter has no f64",
/// };
/// let cpu = kiln_core::Device::<kiln_cpu::Cpu>::open(0).unwrap();
/// assert!(!no_f64.applies(cpu.info(), "map", "map/square", DType::F64));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Divergence {
    /// The backend it concerns; `None` for every backend.
    pub backend: Option<BackendKind>,
    /// The groups ("map") or patterns ("map/sqrt") it concerns; empty for all.
    pub patterns: &'static [&'static str],
    /// The dtype it concerns; `None` for every dtype.
    pub dtype: Option<DType>,
    /// When it applies.
    pub when: Condition,
    /// What it makes of the cases it covers.
    pub expect: Expect,
    /// Why, in a few words a reader of the matrix understands.
    pub reason: &'static str,
}

impl Divergence {
    /// Whether this divergence covers pattern `pattern` of group `group` on
    /// `dtype` on the device described by `info`.
    pub fn applies(&self, info: &DeviceInfo, group: &str, pattern: &str, dtype: DType) -> bool {
        self.backend.is_none_or(|b| b == info.backend)
            && (self.patterns.is_empty() || self.patterns.iter().any(|p| *p == group || *p == pattern))
            && self.dtype.is_none_or(|d| d == dtype)
            && match self.when {
                Condition::Always => true,
                Condition::Lacks(f) => !f.present(&info.features),
                Condition::Driver(d) => info.driver.contains(d),
            }
    }
}

/// The divergences every run starts from; the cases each covers are not
/// run, and are reported as unsupported.
pub const KNOWN: &[Divergence] = &[
    // Fill and the memory patterns move bytes and need no f64 arithmetic.
    lacks(
        Feature::F64,
        &["sequence", "map", "elementwise"],
        Some(DType::F64),
        "the device has no 64-bit float arithmetic",
    ),
    lacks(Feature::F64, &["matmul"], Some(DType::F64), "the device has no 64-bit float arithmetic"),
    lacks(Feature::F16, HALVES, Some(DType::F16), "the device has no 16-bit float arithmetic"),
    always(BackendKind::Wgpu, NO_BF16, Some(DType::BF16), "WGSL has no bfloat16 type"),
    always(BackendKind::Cpu, VENDOR, None, "the CPU backend offers no vendor GEMM"),
    always(BackendKind::Wgpu, VENDOR, None, "the wgpu backend offers no vendor GEMM"),
    always(BackendKind::Cuda, VENDOR, Some(DType::I32), "cuBLAS has no 32-bit integer matrix product"),
    always(BackendKind::Cuda, VENDOR, Some(DType::U32), "cuBLAS has no 32-bit integer matrix product"),
];

/// matmul's patterns of the vendor strategy (`patterns/matmul.rs`): dense
/// products, batches of random layouts, and f32 under each precision mode.
const VENDOR: Patterns = &[
    "matmul/vendor",
    "matmul/vendor/rounded",
    "matmul/vendor/layouts",
    "matmul/vendor/precision_exact",
    "matmul/vendor/precision_tf32",
    "matmul/vendor/precision_bf16",
];

/// The groups that run on the 16-bit floats.
const HALVES: Patterns =
    &["matmul", "map", "elementwise", "reduce", "scan", "user/half-elementwise", "user/half-reduce", "user/half-array"];

/// The 16-bit groups wgpu cannot run on bf16: the patterns compute bf16
/// through f32 there (converted as bits), the matrix products and user
/// kernels do not.
const NO_BF16: Patterns = &["matmul", "user/half-elementwise", "user/half-reduce", "user/half-array"];

/// The groups or patterns of a divergence (see [`Divergence::patterns`]).
type Patterns = &'static [&'static str];

/// Cases of `patterns` on `dtype` (`None`: every dtype), on a device of any
/// backend without `feature`, unsupported.
const fn lacks(feature: Feature, patterns: Patterns, dtype: Option<DType>, reason: &'static str) -> Divergence {
    let when = Condition::Lacks(feature);
    Divergence { backend: None, patterns, dtype, when, expect: Expect::Unsupported, reason }
}

/// Cases of `patterns` on `dtype` (`None`: every dtype), on every device of
/// `backend`, unsupported.
const fn always(backend: BackendKind, patterns: Patterns, dtype: Option<DType>, reason: &'static str) -> Divergence {
    let when = Condition::Always;
    Divergence { backend: Some(backend), patterns, dtype, when, expect: Expect::Unsupported, reason }
}

/// Backends allowed to flush subnormal floats to zero, and why: for them the
/// comparer also accepts the result computed with subnormals read as zero.
pub const SUBNORMAL_FLUSH: &[(BackendKind, &str)] =
    &[(BackendKind::Wgpu, "WGSL lets an implementation flush subnormal values to zero")];

/// Whether backend `kind` may flush subnormals (see [`SUBNORMAL_FLUSH`]).
pub fn flushes_subnormals(kind: BackendKind) -> bool {
    SUBNORMAL_FLUSH.iter().any(|(k, _)| *k == kind)
}
