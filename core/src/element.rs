//! Element types a buffer can hold, and their names in each kernel language.

use float8::{F8E4M3, F8E5M2};
use half::{bf16, f16};
use num_complex::Complex;
use std::fmt;

/// The element types kiln moves and computes on.
///
/// # Examples
/// ```
/// use kiln_core::{DType, Element};
/// assert_eq!(f32::DTYPE, DType::F32);
/// assert_eq!(DType::F32.cuda_name(), "float");
/// assert_eq!(DType::F32.size(), 4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    /// `u8`
    U8,
    /// `i32`
    I32,
    /// `u32`
    U32,
    /// `i64`
    I64,
    /// `u64`
    U64,
    /// IEEE half precision.
    F16,
    /// bfloat16.
    BF16,
    /// `f32`
    F32,
    /// `f64`
    F64,
    /// 8-bit float, 4 exponent and 3 mantissa bits, finite only (OCP
    /// E4M3FN, CUDA's `__nv_fp8_e4m3`: largest 448, no infinities, one
    /// NaN pattern per sign): a storage type, multiplied by
    /// `matmul_scaled`.
    F8E4M3,
    /// 8-bit float, 5 exponent and 2 mantissa bits (OCP E5M2, CUDA's
    /// `__nv_fp8_e5m2`: f16's range with infinities): a storage type,
    /// multiplied by `matmul_scaled`.
    F8E5M2,
    /// Complex of two `f32` (NumPy's `complex64`): `num_complex::Complex<f32>`,
    /// CUDA's `float2`, WGSL's `vec2<f32>`.
    C64,
    /// Complex of two `f64` (NumPy's `complex128`): `num_complex::Complex<f64>`,
    /// CUDA's `double2`, WGSL's `vec2<f64>`.
    C128,
}

impl DType {
    /// Every dtype, in declaration order.
    pub const ALL: [DType; 13] = [
        DType::U8,
        DType::I32,
        DType::U32,
        DType::I64,
        DType::U64,
        DType::F16,
        DType::BF16,
        DType::F32,
        DType::F64,
        DType::F8E4M3,
        DType::F8E5M2,
        DType::C64,
        DType::C128,
    ];

    /// Size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            DType::U8 | DType::F8E4M3 | DType::F8E5M2 => 1,
            DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 | DType::C64 => 8,
            DType::C128 => 16,
        }
    }

    /// Short name, as used in kernel names and reports ("f32").
    pub const fn name(self) -> &'static str {
        match self {
            DType::U8 => "u8",
            DType::I32 => "i32",
            DType::U32 => "u32",
            DType::I64 => "i64",
            DType::U64 => "u64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F8E4M3 => "f8e4m3",
            DType::F8E5M2 => "f8e5m2",
            DType::C64 => "c64",
            DType::C128 => "c128",
        }
    }

    /// The CUDA C type ("float", "__half", "unsigned int").
    pub const fn cuda_name(self) -> &'static str {
        match self {
            DType::U8 => "unsigned char",
            DType::I32 => "int",
            DType::U32 => "unsigned int",
            DType::I64 => "long long",
            DType::U64 => "unsigned long long",
            DType::F16 => "__half",
            DType::BF16 => "__nv_bfloat16",
            DType::F32 => "float",
            DType::F64 => "double",
            DType::F8E4M3 => "__nv_fp8_e4m3",
            DType::F8E5M2 => "__nv_fp8_e5m2",
            DType::C64 => "float2",
            DType::C128 => "double2",
        }
    }

    /// The WGSL type, where WGSL has one (no 8-bit, 64-bit integer or bf16 types).
    pub const fn wgsl_name(self) -> Option<&'static str> {
        match self {
            DType::I32 => Some("i32"),
            DType::U32 => Some("u32"),
            DType::F16 => Some("f16"),
            DType::F32 => Some("f32"),
            DType::F64 => Some("f64"),
            DType::C64 => Some("vec2<f32>"),
            DType::C128 => Some("vec2<f64>"),
            _ => None,
        }
    }

    /// Whether this is a floating-point type computed on (the 8-bit floats,
    /// storage types, are [`is_fp8`](Self::is_fp8) instead).
    pub const fn is_float(self) -> bool {
        matches!(self, DType::F16 | DType::BF16 | DType::F32 | DType::F64)
    }

    /// Whether this is a complex type ([`C64`](Self::C64), [`C128`](Self::C128)).
    pub const fn is_complex(self) -> bool {
        matches!(self, DType::C64 | DType::C128)
    }

    /// The real type of a complex type's parts (`f32` for `c64`), the type
    /// itself for every other.
    pub const fn real(self) -> DType {
        match self {
            DType::C64 => DType::F32,
            DType::C128 => DType::F64,
            d => d,
        }
    }

    /// Whether this is one of the 8-bit float storage types.
    pub const fn is_fp8(self) -> bool {
        matches!(self, DType::F8E4M3 | DType::F8E5M2)
    }

    /// Parse a short name ("f32").
    pub fn parse(name: &str) -> Option<DType> {
        DType::ALL.into_iter().find(|d| d.name() == name)
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A plain-old-data type that can live in a kiln buffer.
///
/// Implemented for `u8`, `i32`, `u32`, `i64`, `u64`, `f32`, `f64`,
/// [`half::f16`], [`half::bf16`] and the 8-bit floats
/// [`float8::F8E4M3`] and [`float8::F8E5M2`]; every bit pattern is a valid value, so
/// device memory can be read back without undefined behaviour.
///
/// The trait is sealed: kernels size their buffer arguments by
/// [`DTYPE`](Self::DTYPE) while buffers are allocated by `size_of::<T>()`, so
/// an element whose tag disagreed with its layout would hand kernels ranges
/// past the end of their buffers. Every implementation is checked at compile
/// time to have `size_of::<T>() == T::DTYPE.size()`, and no other type can
/// implement it:
///
/// ```compile_fail,E0277
/// use kiln_core::{DType, Element};
///
/// #[derive(Clone, Copy, Debug, Default, PartialEq)]
/// #[repr(transparent)]
/// struct Tiny(u8);
/// // SAFETY: a transparent wrapper of `u8`.
/// unsafe impl bytemuck::Zeroable for Tiny {}
/// // SAFETY: as above.
/// unsafe impl bytemuck::Pod for Tiny {}
///
/// impl Element for Tiny {
///     const DTYPE: DType = DType::F64; // 8 bytes claimed, 1 byte real
/// }
/// ```
pub trait Element: sealed::Sealed + bytemuck::Pod + Send + Sync + fmt::Debug + PartialEq + Default + 'static {
    /// The runtime tag of this type.
    const DTYPE: DType;
}

mod sealed {
    /// Keeps [`Element`](super::Element) to the types listed in this module.
    pub trait Sealed {}
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t { const DTYPE: DType = DType::$d; }
        const _: () = assert!(
            size_of::<$t>() == DType::$d.size(),
            concat!("the size of `", stringify!($t), "` differs from DType::", stringify!($d), ".size()"),
        );
    )*};
}
element!(
    u8 => U8,
    i32 => I32,
    u32 => U32,
    i64 => I64,
    u64 => U64,
    f16 => F16,
    bf16 => BF16,
    f32 => F32,
    f64 => F64,
    F8E4M3 => F8E4M3,
    F8E5M2 => F8E5M2,
);

/// The real types a complex element is made of (`f32`, `f64`): every
/// `Complex<T>` of one is an [`Element`] (`c64`, `c128`), which generic
/// code over `T: ComplexPart` may rely on.
///
/// # Examples
/// ```
/// use kiln_core::{Complex, ComplexPart, DType, Element};
/// fn complex_dtype<T: ComplexPart>() -> DType {
///     <Complex<T> as Element>::DTYPE
/// }
/// assert_eq!(complex_dtype::<f32>(), DType::C64);
/// assert_eq!(complex_dtype::<f64>(), DType::C128);
/// ```
pub trait ComplexPart: Element + sealed::Sealed {
    /// The dtype of `Complex<Self>`.
    const COMPLEX: DType;
}

impl ComplexPart for f32 {
    const COMPLEX: DType = DType::C64;
}

impl ComplexPart for f64 {
    const COMPLEX: DType = DType::C128;
}

impl<T: ComplexPart> sealed::Sealed for Complex<T> {}
impl<T: ComplexPart> Element for Complex<T> {
    const DTYPE: DType = T::COMPLEX;
}
const _: () =
    assert!(size_of::<Complex<f32>>() == DType::C64.size() && size_of::<Complex<f64>>() == DType::C128.size());
