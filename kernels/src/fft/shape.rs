//! What a transform covers: an n-d array's shape and the axes transformed
//! ([`FftShape`]), and NumPy's normalisations ([`FftNorm`]).

use kiln_core::{Error, Result};

/// Which direction is scaled, and by what, as NumPy's `norm` argument says.
///
/// With `n` the product of the transformed lengths: `Backward` (NumPy's
/// default) leaves the forward transform unscaled and scales the inverse by
/// `1/n`; `Ortho` scales both by `1/sqrt(n)`; `Forward` scales the forward
/// transform by `1/n` and leaves the inverse unscaled.
///
/// # Examples
/// ```
/// use kiln_kernels::fft::{FftDirection, FftNorm};
/// assert_eq!(FftNorm::Backward.scale(8, FftDirection::Inverse), 0.125);
/// assert_eq!(FftNorm::Backward.scale(8, FftDirection::Forward), 1.0);
/// assert_eq!(FftNorm::Ortho.scale(4, FftDirection::Forward), 0.5);
/// assert_eq!(FftNorm::parse("forward"), Some(FftNorm::Forward));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum FftNorm {
    /// Forward unscaled, inverse scaled by `1/n` (NumPy's default).
    #[default]
    Backward,
    /// Both scaled by `1/sqrt(n)`: the transforms are unitary.
    Ortho,
    /// Forward scaled by `1/n`, inverse unscaled.
    Forward,
}

impl FftNorm {
    /// NumPy's name ("backward", "ortho", "forward").
    pub const fn name(self) -> &'static str {
        match self {
            FftNorm::Backward => "backward",
            FftNorm::Ortho => "ortho",
            FftNorm::Forward => "forward",
        }
    }

    /// The normalisation NumPy calls `name`.
    pub fn parse(name: &str) -> Option<FftNorm> {
        [FftNorm::Backward, FftNorm::Ortho, FftNorm::Forward].into_iter().find(|n| n.name() == name)
    }

    /// The factor a transform in `direction` over `n` points in all
    /// (the product of the transformed lengths) is multiplied by.
    pub fn scale(self, n: usize, direction: super::FftDirection) -> f64 {
        use super::FftDirection::{Forward, Inverse};
        let n = n as f64;
        match (self, direction) {
            (FftNorm::Ortho, _) => 1.0 / n.sqrt(),
            (FftNorm::Backward, Inverse) | (FftNorm::Forward, Forward) => 1.0 / n,
            (FftNorm::Backward, Forward) | (FftNorm::Forward, Inverse) => 1.0,
        }
    }
}

/// The transforms of one call: an n-d array of `shape`, stored row-major
/// and dense, transformed along `axes` (by default the last one, as NumPy's
/// `fft` does; [`all_axes`](Self::all_axes) for `fftn`).
///
/// For real transforms the shape is the real array's (the input of
/// `rfft`, the output of `irfft`); the complex side has `n / 2 + 1`
/// elements along the last of the axes ([`half_shape`](Self::half_shape)).
///
/// # Examples
/// ```
/// use kiln_kernels::fft::FftShape;
/// let rows = FftShape::new(&[64, 1000]); // 64 transforms of 1000 points
/// assert_eq!(rows.axes(), &[1]);
/// let image = FftShape::new(&[3, 256, 256]).along(&[1, 2]); // three 2-D transforms
/// assert_eq!(image.half_shape(), vec![3, 256, 129]);
/// assert_eq!(FftShape::new(&[4, 4, 4]).all_axes().axes(), &[0, 1, 2]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FftShape {
    shape: Vec<usize>,
    axes: Vec<usize>,
}

impl FftShape {
    /// Transforms along the last axis of an array of `shape` (none for a
    /// shape of no axes, which [`check`](Self::check) refuses).
    pub fn new(shape: &[usize]) -> Self {
        FftShape { shape: shape.to_vec(), axes: shape.len().checked_sub(1).into_iter().collect() }
    }

    /// Transforms along `axes` instead, in NumPy's order (for real
    /// transforms, the last of them is the real one).
    pub fn along(mut self, axes: &[usize]) -> Self {
        self.axes = axes.to_vec();
        self
    }

    /// Transforms along every axis (`fftn`).
    pub fn all_axes(mut self) -> Self {
        self.axes = (0..self.shape.len()).collect();
        self
    }

    /// The array's shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The transformed axes.
    pub fn axes(&self) -> &[usize] {
        &self.axes
    }

    /// How many elements the array has.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the array has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The shape of the complex side of a real transform: `n / 2 + 1`
    /// along the last of the axes.
    pub fn half_shape(&self) -> Vec<usize> {
        let mut half = self.shape.clone();
        if let Some(&last) = self.axes.last()
            && let Some(n) = half.get_mut(last)
        {
            *n = *n / 2 + 1;
        }
        half
    }

    /// The number of points of one transform: the product of the
    /// transformed lengths.
    pub fn points(&self) -> usize {
        self.axes.iter().filter_map(|&a| self.shape.get(a)).product()
    }

    /// `Err(InvalidArgument)` naming what is wrong, for `what`: no axis,
    /// an axis out of range or repeated, a transformed length of zero, or
    /// an element count that overflows.
    pub fn check(&self, what: &str) -> Result<()> {
        let ndim = self.shape.len();
        if self.axes.is_empty() {
            return Err(Error::invalid(what, format!("no axis to transform (shape {:?})", self.shape)));
        }
        for (i, &a) in self.axes.iter().enumerate() {
            if a >= ndim {
                return Err(Error::invalid(what, format!("axis {a} is out of range for {ndim} dimensions")));
            }
            if self.axes[..i].contains(&a) {
                return Err(Error::invalid(what, format!("axis {a} is repeated in {:?}", self.axes)));
            }
            if self.shape[a] == 0 {
                return Err(Error::invalid(
                    what,
                    format!("axis {a} has length 0; a transform needs at least one point"),
                ));
            }
        }
        self.shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .ok_or_else(|| Error::invalid(what, format!("shape {:?} overflows the address space", self.shape)))?;
        Ok(())
    }
}

/// The strides of a dense row-major array of `shape`, in elements.
pub(crate) fn dense_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(shape[i + 1]);
    }
    strides
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_shapes_are_refused_naming_the_axis() {
        let msg = |s: FftShape| s.check("fft").unwrap_err().to_string();
        assert!(msg(FftShape::new(&[4, 0])).contains("axis 1 has length 0"));
        assert!(msg(FftShape::new(&[4, 4]).along(&[2])).contains("axis 2 is out of range"));
        assert!(msg(FftShape::new(&[4, 4]).along(&[1, 1])).contains("repeated"));
        assert!(msg(FftShape::new(&[])).contains("no axis"));
        assert!(FftShape::new(&[0, 4]).check("fft").is_ok());
    }

    #[test]
    fn dense_strides_are_row_major() {
        assert_eq!(dense_strides(&[2, 3, 4]), vec![12, 4, 1]);
        assert_eq!(dense_strides(&[5]), vec![1]);
    }
}
