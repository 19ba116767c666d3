//! Arithmetic over the element types the numeric patterns accept.

use kiln_core::{Element, bf16, f16};

/// An element type with arithmetic: `i32`, `u32`, `f32`, `f64`, `f16` and `bf16`.
///
/// Integer operations wrap; integer division by zero gives the dividend and
/// `i32::MIN / -1` gives `i32::MIN` (WGSL's definition, which every kiln
/// backend follows); floats follow IEEE 754. `f16` and `bf16` arithmetic is
/// done in `f32` and rounded once, which for these operations equals the
/// correctly rounded 16-bit result (f32 carries more than twice their
/// significand bits, plus two), on every backend. Reductions and scans of
/// the 16-bit types accumulate in `f32` and round once at the end (see
/// [`reduce`](crate::reduce) and [`scan`](crate::scan)).
///
/// # Examples
/// ```
/// use kiln_kernels::Number;
/// assert_eq!(Number::div(7i32, 0), 7);
/// assert_eq!(Number::div(i32::MIN, -1), i32::MIN);
/// assert_eq!(Number::neg(1u32), u32::MAX);
/// assert!(Number::sqrt(-1.0f32).is_nan());
/// ```
///
/// The trait is sealed: the patterns generate kernels for exactly these
/// types, so no other type can claim to be one.
///
/// ```compile_fail,E0277
/// use kiln_core::{DType, Element};
/// use kiln_kernels::Number;
///
/// #[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
/// #[repr(transparent)]
/// struct Meters(f32);
/// // SAFETY: a transparent wrapper of `f32`.
/// unsafe impl bytemuck::Zeroable for Meters {}
/// // SAFETY: as above.
/// unsafe impl bytemuck::Pod for Meters {}
///
/// impl Element for Meters {
///     const DTYPE: DType = DType::F32;
/// }
///
/// impl Number for Meters {
///     const IS_FLOAT: bool = true;
///     fn add(self, o: Self) -> Self { Meters(self.0 + o.0) }
///     fn sub(self, o: Self) -> Self { Meters(self.0 - o.0) }
///     fn mul(self, o: Self) -> Self { Meters(self.0 * o.0) }
///     fn div(self, o: Self) -> Self { Meters(self.0 / o.0) }
///     fn neg(self) -> Self { Meters(-self.0) }
///     fn abs(self) -> Self { Meters(self.0.abs()) }
///     fn sqrt(self) -> Self { Meters(self.0.sqrt()) }
///     fn from_index(i: u64) -> Self { Meters(i as f32) }
/// }
/// ```
pub trait Number: Element + PartialOrd + sealed::Sealed {
    /// Whether this is a floating-point type.
    const IS_FLOAT: bool;
    /// `self + other`, wrapping for integers.
    fn add(self, other: Self) -> Self;
    /// `self - other`, wrapping for integers.
    fn sub(self, other: Self) -> Self;
    /// `self * other`, wrapping for integers.
    fn mul(self, other: Self) -> Self;
    /// `self / other`; for integers the dividend when `other` is 0 or the division overflows.
    fn div(self, other: Self) -> Self;
    /// `-self`, wrapping for integers (and modulo 2^32 for `u32`).
    fn neg(self) -> Self;
    /// `|self|`, wrapping for `i32::MIN`; the identity for `u32`.
    fn abs(self) -> Self;
    /// Square root (floats only; integers return themselves and the API refuses them).
    fn sqrt(self) -> Self;
    /// `i` converted to this type (modulo 2^32 for integers, rounded for floats).
    fn from_index(i: u64) -> Self;
}

mod sealed {
    /// Keeps [`Number`](super::Number) to the types implemented in this module.
    pub trait Sealed {}
}

macro_rules! int_number {
    ($t:ty, $neg:expr, $abs:expr) => {
        impl sealed::Sealed for $t {}
        impl Number for $t {
            const IS_FLOAT: bool = false;
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
            fn div(self, o: Self) -> Self {
                self.checked_div(o).unwrap_or(self)
            }
            fn neg(self) -> Self {
                $neg(self)
            }
            fn abs(self) -> Self {
                $abs(self)
            }
            fn sqrt(self) -> Self {
                self
            }
            fn from_index(i: u64) -> Self {
                i as $t
            }
        }
    };
}
int_number!(i32, i32::wrapping_neg, i32::wrapping_abs);
int_number!(u32, u32::wrapping_neg, |v: u32| v);

macro_rules! float_number {
    ($t:ty) => {
        impl sealed::Sealed for $t {}
        impl Number for $t {
            const IS_FLOAT: bool = true;
            fn add(self, o: Self) -> Self {
                self + o
            }
            fn sub(self, o: Self) -> Self {
                self - o
            }
            fn mul(self, o: Self) -> Self {
                self * o
            }
            fn div(self, o: Self) -> Self {
                self / o
            }
            fn neg(self) -> Self {
                -self
            }
            fn abs(self) -> Self {
                <$t>::abs(self)
            }
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            fn from_index(i: u64) -> Self {
                i as $t
            }
        }
    };
}
float_number!(f32);
float_number!(f64);

macro_rules! half_number {
    ($t:ty) => {
        impl sealed::Sealed for $t {}
        impl Number for $t {
            const IS_FLOAT: bool = true;
            fn add(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() + o.to_f32())
            }
            fn sub(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() - o.to_f32())
            }
            fn mul(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() * o.to_f32())
            }
            fn div(self, o: Self) -> Self {
                <$t>::from_f32(self.to_f32() / o.to_f32())
            }
            fn neg(self) -> Self {
                <$t>::from_bits(self.to_bits() ^ 0x8000)
            }
            fn abs(self) -> Self {
                <$t>::from_bits(self.to_bits() & 0x7fff)
            }
            fn sqrt(self) -> Self {
                <$t>::from_f32(self.to_f32().sqrt())
            }
            fn from_index(i: u64) -> Self {
                <$t>::from_f32(i as f32)
            }
        }
    };
}
half_number!(f16);
half_number!(bf16);
