//! The reference for float sums and how far a kernel's sum may be from it,
//! shared by reduce, dot and scan.

use crate::Sample;

/// Neumaier's compensated f64 sum: the reference for float sums, within
/// about one f64 rounding of the exact sum at the sizes the suite uses.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Compensated {
    sum: f64,
    error: f64,
}

impl Compensated {
    pub(super) fn add(&mut self, v: f64) {
        let t = self.sum + v;
        self.error += if self.sum.abs() >= v.abs() { (self.sum - t) + v } else { (v - t) + self.sum };
        self.sum = t;
    }

    pub(super) fn value(&self) -> f64 {
        if self.sum.is_finite() { self.sum + self.error } else { self.sum }
    }
}

/// How far a float sum of `n` terms whose magnitudes add to `magnitude` may
/// be from the exact one: a tree of partial sums loses at most one rounding
/// of the magnitude per level (in the accumulator's precision: `f32` for
/// the 16-bit floats), and the result one more rounding to `T` (relative,
/// or half the spacing of `T`'s subnormals near zero).
pub(super) fn sum_bound<T: Sample>(n: usize, magnitude: f64, value: f64) -> f64 {
    let tree = T::accumulator_epsilon() * (4.0 * ((n + 1) as f64).log2() + 2.0) * magnitude;
    tree + T::epsilon() * (value.abs() + T::min_normal())
}
