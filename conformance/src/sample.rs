//! Element types as the suite sees them: adversarial random values, poison,
//! and the few numeric facts the comparer needs.

use kiln_core::Element;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The random generator of every case: seeded, portable, fast.
pub type CaseRng = ChaCha8Rng;

/// An element type the suite can generate, poison and compare.
///
/// Implemented for `u8`, `i32`, `u32`, `f32` and `f64`.
///
/// # Examples
/// ```
/// use kiln_conformance::Sample;
/// use rand::SeedableRng;
///
/// let mut rng = kiln_conformance::CaseRng::seed_from_u64(7);
/// let xs: Vec<f32> = (0..1000).map(|_| f32::random(&mut rng)).collect();
/// assert!(xs.iter().any(|x| x.is_nan()));          // adversarial values appear
/// assert!(xs.iter().any(|x| x.is_subnormal()));
/// assert!(!f32::poison(2.0).same_as(2.0));          // poison differs from the expected value
/// ```
pub trait Sample: Element {
    /// Whether the type is floating point (compared with a tolerance) or not (compared exactly).
    const IS_FLOAT: bool;

    /// A random value from an adversarial mix: mostly ordinary values of
    /// mixed magnitude, often the type's edge cases (0, -1, MIN, MAX; for
    /// floats NaN, +-inf, -0.0, subnormals and the normal extremes).
    fn random(rng: &mut CaseRng) -> Self;

    /// A random finite value of moderate magnitude, for scalar parameters
    /// (a fill value aside) whose edge cases would make every output alike.
    fn random_moderate(rng: &mut CaseRng) -> Self;

    /// A random scalar parameter (a start, a step, a factor): any value for
    /// integers, so results wrap; a moderate one for floats, since an
    /// infinite or NaN parameter would make every output alike.
    fn random_scalar(rng: &mut CaseRng) -> Self {
        if Self::IS_FLOAT { Self::random_moderate(rng) } else { Self::random(rng) }
    }

    /// A value that the comparer never accepts in place of `expected`:
    /// written to outputs before a run, so an element the kernel failed to
    /// write is caught whatever the correct result is.
    fn poison(expected: Self) -> Self;

    /// Whether the bytes of `self` and `other` are identical.
    fn same_as(self, other: Self) -> bool {
        bytemuck::bytes_of(&self) == bytemuck::bytes_of(&other)
    }

    /// Whether this is a NaN (never, for integers).
    fn is_nan_value(self) -> bool {
        false
    }

    /// The value as an f64 (exact for every implementing type).
    fn to_f64(self) -> f64;

    /// Machine epsilon as an f64 (0 for integers).
    fn epsilon() -> f64 {
        0.0
    }

    /// The smallest positive normal value as an f64 (0 for integers).
    fn min_normal() -> f64 {
        0.0
    }

    /// The value with a subnormal flushed to a zero of the same sign (the
    /// identity for integers and for normal floats).
    fn flush_subnormal(self) -> Self {
        self
    }

    /// A result as a backend that flushes subnormals may give it: flushed
    /// like [`flush_subnormal`](Self::flush_subnormal), and for `bf16`,
    /// which kiln computes in f32 and rounds once, also where it is the
    /// smallest normal: an f32 result just below it flushes to zero before
    /// the rounding that would carry it up (f32 and bf16 share the exponent
    /// range).
    fn flush_result(self) -> Self {
        self.flush_subnormal()
    }

    /// The epsilon of the type kiln's reductions and scans accumulate this
    /// one in: `f32`'s for the 16-bit floats, which are summed in `f32` and
    /// rounded once at the end; the type's own for the others.
    fn accumulator_epsilon() -> f64 {
        Self::epsilon()
    }
}

macro_rules! int_sample {
    ($t:ty, $specials:expr, $small:expr) => {
        impl Sample for $t {
            const IS_FLOAT: bool = false;

            fn random(rng: &mut CaseRng) -> Self {
                const SPECIALS: &[$t] = &$specials;
                match rng.random_range(0..100u32) {
                    0..10 => SPECIALS[rng.random_range(0..SPECIALS.len())],
                    10..50 => rng.random_range($small),
                    _ => rng.random(),
                }
            }

            fn random_moderate(rng: &mut CaseRng) -> Self {
                rng.random_range($small)
            }

            fn poison(expected: Self) -> Self {
                // Differs from `expected` in every bit.
                !expected
            }

            fn to_f64(self) -> f64 {
                self as f64
            }
        }
    };
}

int_sample!(u8, [0, 1, 2, 127, 128, 254, 255], 0..=255);
int_sample!(i32, [0, 1, -1, 2, -2, i32::MIN, i32::MIN + 1, i32::MAX], -1000..=1000);
int_sample!(u32, [0, 1, 2, u32::MAX, u32::MAX - 1, 1 << 31, (1 << 31) - 1], 0..=2000);

macro_rules! float_sample {
    ($t:ty, $bits:ty, $mantissa_bits:expr) => {
        impl Sample for $t {
            const IS_FLOAT: bool = true;

            fn random(rng: &mut CaseRng) -> Self {
                const SPECIALS: [$t; 12] = [
                    <$t>::NAN,
                    <$t>::INFINITY,
                    <$t>::NEG_INFINITY,
                    0.0,
                    -0.0,
                    1.0,
                    -1.0,
                    <$t>::MIN_POSITIVE,
                    -<$t>::MIN_POSITIVE,
                    <$t>::MAX,
                    <$t>::MIN,
                    <$t>::EPSILON,
                ];
                match rng.random_range(0..100u32) {
                    0..6 => SPECIALS[rng.random_range(0..SPECIALS.len())],
                    6..9 => {
                        // A subnormal: zero exponent, non-zero mantissa, either sign.
                        let mantissa: $bits = rng.random_range(1..(1 as $bits) << $mantissa_bits);
                        let sign: $bits = if rng.random() { 1 << (<$bits>::BITS - 1) } else { 0 };
                        <$t>::from_bits(sign | mantissa)
                    }
                    // Small integers: exact results, cancellation (x - x), exact squares.
                    9..30 => rng.random_range(-16..=16i32) as $t,
                    _ => Self::random_moderate(rng),
                }
            }

            fn random_moderate(rng: &mut CaseRng) -> Self {
                // A random mantissa in [1, 2) scaled by 2^-24..2^24, either sign:
                // mixed magnitudes, so sums round and products span a wide range.
                let m: $t = rng.random_range(1.0..2.0);
                let e = rng.random_range(-24..=24i32);
                let v = m * (2.0 as $t).powi(e);
                if rng.random() { v } else { -v }
            }

            fn poison(expected: Self) -> Self {
                // NaN is accepted only where NaN is expected, so it poisons
                // every other result; where NaN is expected, a finite value does.
                if expected.is_nan() { -1.25e-3 } else { <$t>::from_bits(<$t>::NAN.to_bits() | 0x5a5) }
            }

            fn is_nan_value(self) -> bool {
                self.is_nan()
            }

            fn to_f64(self) -> f64 {
                self as f64
            }

            fn epsilon() -> f64 {
                <$t>::EPSILON as f64
            }

            fn min_normal() -> f64 {
                <$t>::MIN_POSITIVE as f64
            }

            fn flush_subnormal(self) -> Self {
                if self.is_subnormal() { <$t>::copysign(0.0, self) } else { self }
            }
        }
    };
}

float_sample!(f32, u32, 23);
float_sample!(f64, u64, 52);

macro_rules! half_sample {
    ($t:ty, $mantissa_bits:expr, $moderate_exponents:expr, $f32_range:expr) => {
        impl Sample for $t {
            const IS_FLOAT: bool = true;

            fn random(rng: &mut CaseRng) -> Self {
                const SPECIALS: [$t; 12] = [
                    <$t>::NAN,
                    <$t>::INFINITY,
                    <$t>::NEG_INFINITY,
                    <$t>::ZERO,
                    <$t>::NEG_ZERO,
                    <$t>::ONE,
                    <$t>::NEG_ONE,
                    <$t>::MIN_POSITIVE,
                    <$t>::from_bits(<$t>::MIN_POSITIVE.to_bits() | 0x8000),
                    <$t>::MAX,
                    <$t>::MIN,
                    <$t>::EPSILON,
                ];
                match rng.random_range(0..100u32) {
                    0..6 => SPECIALS[rng.random_range(0..SPECIALS.len())],
                    6..9 => {
                        // A subnormal: zero exponent, non-zero mantissa, either sign.
                        let mantissa: u16 = rng.random_range(1..1u16 << $mantissa_bits);
                        let sign: u16 = if rng.random() { 0x8000 } else { 0 };
                        <$t>::from_bits(sign | mantissa)
                    }
                    // Small integers: exact results, cancellation (x - x), exact squares.
                    9..30 => <$t>::from_f32(rng.random_range(-16..=16i32) as f32),
                    _ => Self::random_moderate(rng),
                }
            }

            fn random_moderate(rng: &mut CaseRng) -> Self {
                // A mantissa in [1, 2) scaled by a power of two in the
                // type's comfortable range, either sign: sums of a million
                // of them stay far from the largest finite value.
                let m: f32 = rng.random_range(1.0..2.0);
                let v = m * 2f32.powi(rng.random_range($moderate_exponents));
                <$t>::from_f32(if rng.random() { v } else { -v })
            }

            fn poison(expected: Self) -> Self {
                // A NaN where a number is expected, a finite value where NaN is.
                if expected.is_nan() { <$t>::from_f32(-1.25e-3) } else { <$t>::from_bits(<$t>::NAN.to_bits() | 0x5) }
            }

            fn is_nan_value(self) -> bool {
                self.is_nan()
            }

            fn to_f64(self) -> f64 {
                self.to_f64()
            }

            fn epsilon() -> f64 {
                <$t>::EPSILON.to_f64()
            }

            fn min_normal() -> f64 {
                <$t>::MIN_POSITIVE.to_f64()
            }

            fn flush_subnormal(self) -> Self {
                if self.is_normal() || self.is_nan() || self.is_infinite() || self.to_bits() & 0x7fff == 0 {
                    self
                } else {
                    <$t>::from_bits(self.to_bits() & 0x8000)
                }
            }

            fn flush_result(self) -> Self {
                if $f32_range && self.to_bits() & 0x7fff == <$t>::MIN_POSITIVE.to_bits() {
                    <$t>::from_bits(self.to_bits() & 0x8000)
                } else {
                    self.flush_subnormal()
                }
            }

            fn accumulator_epsilon() -> f64 {
                f32::EPSILON as f64
            }
        }
    };
}

// f16 tops out at 65504: moderate values below 32 keep million-element
// sums (a random walk of about a thousand times the typical value) finite.
half_sample!(half::f16, 10, -8..=4i32, false);
// bf16 has f32's range and 8 significant bits.
half_sample!(half::bf16, 7, -24..=24i32, true);

/// `n` random values of `T` from `rng`.
pub fn random_vec<T: Sample>(rng: &mut CaseRng, n: usize) -> Vec<T> {
    (0..n).map(|_| T::random(rng)).collect()
}

/// The poison for each expected value.
pub fn poison_for<T: Sample>(expected: &[T]) -> Vec<T> {
    expected.iter().map(|&e| T::poison(e)).collect()
}
