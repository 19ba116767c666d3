//! A vendor library's FFT (cuFFT on CUDA), offered by a backend as an
//! optional capability of its device: [`RawDevice::vendor_fft`] says
//! whether there is one and in which precisions, and [`RawDevice::fft`]
//! enqueues one [`FftCall`]. Backends without one keep the trait's defaults
//! ("not offered"). kiln-kernels' `fft` module is the safe, checked entry
//! point users call; it computes the transforms itself where no vendor FFT
//! is offered.
//!
//! A call is laid out as cuFFT's and FFTW's "advanced" interface lays out a
//! batch of transforms: `batch` transforms of rank 1 to 3, the element at
//! index `(x0, .., x{r-1})` of transform `b` at
//! `b * dist + ((x0 * embed[1] + x1) * embed[2] + x2) * stride`, counted in
//! elements of the side's type (complex, or real for the real side of a
//! real transform).
//!
//! [`RawDevice::vendor_fft`]: crate::RawDevice::vendor_fft
//! [`RawDevice::fft`]: crate::RawDevice::fft

use std::fmt;

use crate::{Backend, DType, Error, GemmOperand, Result};

/// What a backend's vendor FFT is and which precisions it transforms.
///
/// # Examples
/// ```
/// use kiln_core::{DType, VendorFft};
/// let fft = VendorFft { name: "demo", precisions: &[DType::F32] };
/// assert!(fft.supports(DType::F32));
/// assert!(!fft.supports(DType::F64));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VendorFft {
    /// The library's name, for messages and reports ("cuFFT").
    pub name: &'static str,
    /// The real types whose transforms it computes (`f32` for complex
    /// `c64` and real `f32` data).
    pub precisions: &'static [DType],
}

impl VendorFft {
    /// Whether it transforms data of real type `precision`.
    pub fn supports(&self, precision: DType) -> bool {
        self.precisions.contains(&precision)
    }
}

/// The kind of a transform: which side is real.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FftKind {
    /// Complex to complex, forward (`exp(-2 pi i jk/n)`) or inverse (`exp(+..)`).
    C2C,
    /// Real input to its `n/2 + 1` non-negative frequencies (forward).
    R2C,
    /// `n/2 + 1` non-negative frequencies to `n` real values (inverse).
    C2R,
}

/// The sign of a transform's exponent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FftDirection {
    /// `X[k] = sum_j x[j] exp(-2 pi i jk / n)`.
    Forward,
    /// `x[j] = sum_k X[k] exp(+2 pi i jk / n)`, not scaled.
    Inverse,
}

impl FftDirection {
    /// The direction's name ("forward").
    pub const fn name(self) -> &'static str {
        match self {
            FftDirection::Forward => "forward",
            FftDirection::Inverse => "inverse",
        }
    }
}

/// How one side (input or output) of an [`FftCall`] lies in its buffer, in
/// elements of that side's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FftSide {
    /// The distance between consecutive elements of the innermost dimension.
    pub stride: usize,
    /// The distance between the first elements of consecutive transforms.
    pub dist: usize,
    /// The storage dimensions the transform's indices are laid out in: the
    /// first `rank` entries are used, and each (but the first) is at least
    /// the transform's length along that dimension.
    pub embed: [usize; 3],
}

impl FftSide {
    /// The number of elements from the first element of the first transform
    /// to one past the last element of the last, for `batch` transforms of
    /// `dims` on this side; `None` on overflow.
    pub fn span(&self, dims: &[usize], batch: usize) -> Option<usize> {
        if batch == 0 || dims.contains(&0) {
            return Some(0);
        }
        let mut last = 0usize;
        let mut scale = self.stride;
        for (axis, &n) in dims.iter().enumerate().rev() {
            last = last.checked_add((n - 1).checked_mul(scale)?)?;
            scale = scale.checked_mul(self.embed[axis])?;
        }
        last.checked_add((batch - 1).checked_mul(self.dist)?)?.checked_add(1)
    }
}

/// The shape of one vendor FFT call: `batch` transforms of `dims` (rank 1
/// to 3, the real lengths of a real transform), each side laid out as its
/// [`FftSide`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FftLayout {
    /// The kind of transform.
    pub kind: FftKind,
    /// The real type of the data (`f32` or `f64`).
    pub precision: DType,
    /// The transform's rank: 1, 2 or 3.
    pub rank: usize,
    /// The lengths of the transform along each of its `rank` dimensions.
    pub dims: [usize; 3],
    /// How many transforms.
    pub batch: usize,
    /// The input's layout.
    pub input: FftSide,
    /// The output's layout.
    pub output: FftSide,
}

impl FftLayout {
    /// The transform's lengths.
    pub fn dims(&self) -> &[usize] {
        &self.dims[..self.rank.min(3)]
    }

    /// The dimensions of the input's and output's data: a real transform's
    /// complex side has `n/2 + 1` elements along its last dimension.
    pub fn side_dims(&self) -> ([usize; 3], [usize; 3]) {
        let full = self.dims;
        let mut half = full;
        if let Some(last) = half.get_mut(self.rank.saturating_sub(1)) {
            *last = *last / 2 + 1;
        }
        match self.kind {
            FftKind::C2C => (full, full),
            FftKind::R2C => (full, half),
            FftKind::C2R => (half, full),
        }
    }

    /// The input's and output's element types.
    pub fn dtypes(&self) -> (DType, DType) {
        let complex = if self.precision == DType::F64 { DType::C128 } else { DType::C64 };
        match self.kind {
            FftKind::C2C => (complex, complex),
            FftKind::R2C => (self.precision, complex),
            FftKind::C2R => (complex, self.precision),
        }
    }

    /// The elements the input and output span; `None` on overflow.
    pub fn spans(&self) -> Option<(usize, usize)> {
        let (din, dout) = self.side_dims();
        let rank = self.rank.min(3);
        Some((self.input.span(&din[..rank], self.batch)?, self.output.span(&dout[..rank], self.batch)?))
    }

    /// `Err(InvalidArgument)` unless the layout is well formed: rank 1 to 3,
    /// every length and the batch at least 1, `f32` or `f64`, strides at
    /// least 1 and each embedding dimension (but the first) at least the
    /// side's length along it.
    pub fn check(&self) -> Result<()> {
        let what = || format!("vendor fft {self}");
        if !(1..=3).contains(&self.rank) {
            return Err(Error::invalid(what(), format!("rank {} is not 1, 2 or 3", self.rank)));
        }
        if !matches!(self.precision, DType::F32 | DType::F64) {
            return Err(Error::invalid(what(), format!("precision {} is not f32 or f64", self.precision)));
        }
        if self.dims().contains(&0) || self.batch == 0 {
            return Err(Error::invalid(what(), "a length or the batch is zero"));
        }
        let (din, dout) = self.side_dims();
        for (name, side, dims) in [("input", &self.input, din), ("output", &self.output, dout)] {
            if side.stride == 0 {
                return Err(Error::invalid(what(), format!("the {name}'s stride is zero")));
            }
            for (axis, (&embed, &len)) in side.embed.iter().zip(&dims).enumerate().take(self.rank).skip(1) {
                if embed < len {
                    return Err(Error::invalid(
                        what(),
                        format!("the {name}'s embedding {embed} is shorter than its length {len} along axis {axis}"),
                    ));
                }
            }
        }
        self.spans().ok_or_else(|| Error::invalid(what(), "the layout overflows the address space"))?;
        Ok(())
    }
}

impl fmt::Display for FftLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dims: Vec<String> = self.dims().iter().map(ToString::to_string).collect();
        write!(f, "{:?} {} of {} x {}", self.kind, self.precision, self.batch, dims.join("x"))
    }
}

/// One vendor FFT: `layout`'s transforms of `input` into `output`, in
/// `direction` (a real-to-complex transform is forward, complex-to-real
/// inverse), not scaled.
pub struct FftCall<'a, B: Backend> {
    /// Where the input's first element is.
    pub input: GemmOperand<'a, B>,
    /// Where the output's first element is.
    pub output: GemmOperand<'a, B>,
    /// The transforms and their layouts.
    pub layout: FftLayout,
    /// The direction of a complex-to-complex transform.
    pub direction: FftDirection,
    /// Scratch memory for the library, at least
    /// [`RawDevice::fft_work_size`](crate::RawDevice::fft_work_size) bytes
    /// from its offset; `None` where that size is 0.
    pub work: Option<GemmOperand<'a, B>>,
}

impl<B: Backend> FftCall<'_, B> {
    /// `Err(InvalidArgument)` unless the layout is well formed
    /// ([`FftLayout::check`]) and the direction agrees with the kind.
    pub fn check(&self) -> Result<()> {
        self.layout.check()?;
        let wanted = match self.layout.kind {
            FftKind::C2C => self.direction,
            FftKind::R2C => FftDirection::Forward,
            FftKind::C2R => FftDirection::Inverse,
        };
        if wanted != self.direction {
            return Err(Error::invalid(
                format!("vendor fft {}", self.layout),
                format!("a {:?} transform is {}, not {}", self.layout.kind, wanted.name(), self.direction.name()),
            ));
        }
        Ok(())
    }
}

impl<B: Backend> fmt::Display for FftCall<'_, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} fft {}", self.direction.name(), self.layout)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(kind: FftKind, dims: &[usize], batch: usize) -> FftLayout {
        let mut d = [1; 3];
        d[..dims.len()].copy_from_slice(dims);
        let side = FftSide { stride: 1, dist: dims.iter().product(), embed: d };
        FftLayout { kind, precision: DType::F32, rank: dims.len(), dims: d, batch, input: side, output: side }
    }

    #[test]
    fn spans_count_the_last_element_of_the_last_transform() {
        let l = layout(FftKind::C2C, &[4, 8], 3);
        assert_eq!(l.spans(), Some((96, 96)));
        let strided = FftSide { stride: 2, dist: 1, embed: [5, 1, 1] };
        assert_eq!(strided.span(&[5], 2), Some(2 * 4 + 1 + 1));
        let mut r = layout(FftKind::R2C, &[8], 2);
        r.output = FftSide { stride: 1, dist: 5, embed: [5, 1, 1] };
        assert_eq!(r.side_dims().1[0], 5);
        assert_eq!(r.spans(), Some((16, 10)));
        assert_eq!(r.dtypes(), (DType::F32, DType::C64));
    }

    #[test]
    fn malformed_layouts_are_refused_with_what_is_wrong() {
        let mut l = layout(FftKind::C2C, &[4, 8], 1);
        assert!(l.check().is_ok());
        l.input.embed[1] = 7;
        assert!(l.check().unwrap_err().to_string().contains("shorter than its length 8"));
        let mut z = layout(FftKind::C2C, &[4], 1);
        z.batch = 0;
        assert!(z.check().unwrap_err().to_string().contains("zero"));
        let mut p = layout(FftKind::C2C, &[4], 1);
        p.precision = DType::F16;
        assert!(p.check().unwrap_err().to_string().contains("f16"));
        let mut big = layout(FftKind::C2C, &[4], 2);
        big.input.dist = usize::MAX;
        assert!(big.check().unwrap_err().to_string().contains("overflows"));
    }
}
