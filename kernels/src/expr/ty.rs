//! Types of user-kernel values: dtypes, placeholders bound at launch, and booleans.

use std::sync::Arc;

use kiln_core::DType;

/// The dtype of a user-kernel argument or cast: one dtype, or a placeholder
/// (CuPy's `T`) bound at launch by the arguments declared with it.
///
/// User kernels compute on `i32`, `u32`, `i64`, `u64`, `f32` and `f64`
/// ([`SUPPORTED`]); WGSL has no 64-bit integers, and 64-bit floats need the
/// device's `f64` feature. Arguments and values may also be `f16` and
/// `bf16` ([`STORED`]): stored as themselves, computed in `f32`, each
/// operation's result rounded once to its 16-bit dtype (the correctly
/// rounded 16-bit result); WGSL has no `bf16`, and `f16` needs the device's
/// `f16` feature. Accumulators of reductions and scans are not 16-bit:
/// accumulate in `f32` and round in the post-map.
///
/// # Examples
/// ```
/// use kiln_core::DType;
/// use kiln_kernels::expr::Ty;
/// assert_eq!(Ty::param("T").to_string(), "T");
/// assert_eq!(Ty::from(DType::F32).to_string(), "f32");
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
    /// One dtype.
    Is(DType),
    /// A placeholder, bound at launch.
    Param(Arc<str>),
}

/// The dtypes user kernels compute on.
pub const SUPPORTED: [DType; 6] = [DType::I32, DType::U32, DType::I64, DType::U64, DType::F32, DType::F64];

/// The 16-bit floats user kernels store and compute in `f32`.
pub const STORED: [DType; 2] = [DType::F16, DType::BF16];

impl Ty {
    /// The placeholder named `name`.
    pub fn param(name: &str) -> Ty {
        Ty::Param(Arc::from(name))
    }
}

impl From<DType> for Ty {
    fn from(d: DType) -> Ty {
        Ty::Is(d)
    }
}

impl std::fmt::Display for Ty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ty::Is(d) => write!(f, "{d}"),
            Ty::Param(p) => f.write_str(p),
        }
    }
}

/// The type of a value inside a kernel body: a number of one dtype, or a boolean.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Vt {
    Num(DType),
    Bool,
}

impl Vt {
    pub(crate) fn dtype(self) -> Option<DType> {
        match self {
            Vt::Num(d) => Some(d),
            Vt::Bool => None,
        }
    }

    pub(crate) fn is_float(self) -> bool {
        matches!(self, Vt::Num(d) if d.is_float())
    }

    pub(crate) fn is_int(self) -> bool {
        matches!(self, Vt::Num(d) if !d.is_float())
    }

    pub(crate) fn is_signed(self) -> bool {
        matches!(self, Vt::Num(DType::I32 | DType::I64 | DType::F32 | DType::F64))
    }
}

impl std::fmt::Display for Vt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Vt::Num(d) => write!(f, "{d}"),
            Vt::Bool => f.write_str("bool"),
        }
    }
}
