//! The plain-Rust reference: what every numeric pattern must compute,
//! written from the specification, sequentially, with no kiln code involved.
//!
//! Integers wrap; integer division by zero gives the dividend, and so does
//! the one overflowing division (`i32::MIN / -1`); `abs` of a `u32` is the
//! identity and `-x` on `u32` wraps modulo 2^32; `sqrt` has no integer form.
//! Floats follow IEEE 754 with round-to-nearest, which Rust's own operators
//! implement exactly.

use kiln_kernels::elementwise::BinaryOp;
use kiln_kernels::map::MapOp;

use crate::Sample;

/// Reference arithmetic for the numeric element types (`i32`, `u32`, `f32`, `f64`, `f16`, `bf16`).
///
/// # Examples
/// ```
/// use kiln_conformance::Arith;
/// assert_eq!(Arith::over(i32::MIN, -1), i32::MIN);
/// assert_eq!(Arith::over(5u32, 0), 5);
/// assert_eq!(Arith::root(9.0f64), 3.0);
/// assert_eq!(Arith::fused(0.1f64, 10.0, -1.0), 5.551115123125783e-17);
/// ```
pub trait Arith: Sample {
    /// `a + b`.
    fn plus(a: Self, b: Self) -> Self;
    /// `a - b`.
    fn minus(a: Self, b: Self) -> Self;
    /// `a * b`.
    fn times(a: Self, b: Self) -> Self;
    /// `a / b`.
    fn over(a: Self, b: Self) -> Self;
    /// `-a`.
    fn negated(a: Self) -> Self;
    /// `|a|`.
    fn absolute(a: Self) -> Self;
    /// Whether the type has a square root (floats).
    const HAS_ROOT: bool;
    /// `sqrt(a)`; integers have none and return `a` (see [`unary`]).
    fn root(a: Self) -> Self;
    /// `a * b + c` rounded once, as a fused multiply-add computes it.
    fn fused(a: Self, b: Self, c: Self) -> Self;
    /// The index `i` as this type (modulo 2^32 for integers).
    fn index(i: usize) -> Self;
}

macro_rules! int_arith {
    ($t:ty, $abs:expr) => {
        impl Arith for $t {
            fn plus(a: Self, b: Self) -> Self {
                a.wrapping_add(b)
            }
            fn minus(a: Self, b: Self) -> Self {
                a.wrapping_sub(b)
            }
            fn times(a: Self, b: Self) -> Self {
                a.wrapping_mul(b)
            }
            fn over(a: Self, b: Self) -> Self {
                // `checked_div` is None exactly for b == 0 and MIN / -1:
                // both give the dividend.
                match a.checked_div(b) {
                    Some(q) => q,
                    None => a,
                }
            }
            fn negated(a: Self) -> Self {
                a.wrapping_neg()
            }
            const HAS_ROOT: bool = false;
            fn root(a: Self) -> Self {
                a
            }
            fn fused(a: Self, b: Self, c: Self) -> Self {
                a.wrapping_mul(b).wrapping_add(c)
            }
            fn index(i: usize) -> Self {
                i as $t
            }
            fn absolute(a: Self) -> Self {
                $abs(a)
            }
        }
    };
}

int_arith!(i32, i32::wrapping_abs);
// `abs` of an unsigned value is the value.
int_arith!(u32, |a: u32| a);

macro_rules! float_arith {
    ($t:ty, $fused:expr) => {
        impl Arith for $t {
            fn plus(a: Self, b: Self) -> Self {
                a + b
            }
            fn minus(a: Self, b: Self) -> Self {
                a - b
            }
            fn times(a: Self, b: Self) -> Self {
                a * b
            }
            fn over(a: Self, b: Self) -> Self {
                a / b
            }
            fn negated(a: Self) -> Self {
                -a
            }
            fn absolute(a: Self) -> Self {
                a.abs()
            }
            const HAS_ROOT: bool = true;
            fn root(a: Self) -> Self {
                a.sqrt()
            }
            fn fused(a: Self, b: Self, c: Self) -> Self {
                $fused(a, b, c)
            }
            fn index(i: usize) -> Self {
                i as $t
            }
        }
    };
}

// The product of two f32 is exact in f64, so one f64 addition rounds the
// fused result; its second rounding, to f32, is off by at most half an ulp
// of f32 in a tie, inside every tolerance used with it.
float_arith!(f32, |a: f32, b: f32, c: f32| (a as f64 * b as f64 + c as f64) as f32);
float_arith!(f64, f64::mul_add);

/// The 16-bit floats: each operation computed in f64 (exact for a sum,
/// difference or product of two of them, correctly rounded for a quotient
/// or root) and rounded once to the type, which is the correctly rounded
/// result: f64 carries more than twice their significand bits plus two.
macro_rules! half_arith {
    ($t:ty) => {
        impl Arith for $t {
            fn plus(a: Self, b: Self) -> Self {
                <$t>::from_f64(a.to_f64() + b.to_f64())
            }
            fn minus(a: Self, b: Self) -> Self {
                <$t>::from_f64(a.to_f64() - b.to_f64())
            }
            fn times(a: Self, b: Self) -> Self {
                <$t>::from_f64(a.to_f64() * b.to_f64())
            }
            fn over(a: Self, b: Self) -> Self {
                <$t>::from_f64(a.to_f64() / b.to_f64())
            }
            fn negated(a: Self) -> Self {
                <$t>::from_bits(a.to_bits() ^ 0x8000)
            }
            fn absolute(a: Self) -> Self {
                <$t>::from_bits(a.to_bits() & 0x7fff)
            }
            const HAS_ROOT: bool = true;
            fn root(a: Self) -> Self {
                <$t>::from_f64(a.to_f64().sqrt())
            }
            fn fused(a: Self, b: Self, c: Self) -> Self {
                <$t>::from_f64(a.to_f64().mul_add(b.to_f64(), c.to_f64()))
            }
            fn index(i: usize) -> Self {
                <$t>::from_f64(i as f64)
            }
        }
    };
}
half_arith!(half::f16);
half_arith!(half::bf16);

/// The reference of a unary operation; `None` where `T` does not have it
/// (`Sqrt` on integers), and the API must refuse it.
pub fn unary<T: Arith>(op: MapOp) -> Option<fn(T) -> T> {
    match op {
        MapOp::Square => Some(|x| T::times(x, x)),
        MapOp::Abs => Some(T::absolute),
        MapOp::Negate => Some(T::negated),
        MapOp::Sqrt => T::HAS_ROOT.then_some(T::root as fn(T) -> T),
    }
}

/// The reference of a binary operation.
pub fn binary<T: Arith>(op: BinaryOp, a: T, b: T) -> T {
    match op {
        BinaryOp::Add => T::plus(a, b),
        BinaryOp::Sub => T::minus(a, b),
        BinaryOp::Mul => T::times(a, b),
        BinaryOp::Div => T::over(a, b),
    }
}
