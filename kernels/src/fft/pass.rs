//! One step of a transform: 1-D transforms along one axis of a strided
//! batch, the form every backend's path computes ([`AxisPass`]).

pub use kiln_core::FftDirection;
use kiln_core::FftKind;

/// One of (at most) two batch dimensions of an [`AxisPass`]: how many
/// transforms along it, and the distance between consecutive ones on the
/// input and on the output side (in elements of each side's type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct BatchDim {
    /// How many transforms along this dimension (at least 1).
    pub count: usize,
    /// Distance between consecutive transforms' first input elements.
    pub input: usize,
    /// Distance between consecutive transforms' first output elements.
    pub output: usize,
}

impl BatchDim {
    /// A dimension of one transform (nothing to step over).
    pub(crate) const ONE: BatchDim = BatchDim { count: 1, input: 0, output: 0 };
}

/// 1-D transforms of length `n` along one axis, for every index of two
/// batch dimensions: transform `(b0, b1)` reads element `j` (`j < n_in`) at
/// input offset `b0 * batch[0].input + b1 * batch[1].input + j * input_stride`
/// and writes element `k` (`k < n_out`) at output offset
/// `b0 * batch[0].output + b1 * batch[1].output + k * output_stride`, offsets
/// counted in elements of each side's type from the start of its view, and
/// multiplied by `scale` as it is written.
///
/// `n` is the transform's length: for [`FftKind::C2C`] both sides hold `n`
/// complex elements; for [`FftKind::R2C`] the input holds `n` reals and the
/// output `n / 2 + 1` complex; for [`FftKind::C2R`] the input holds
/// `n / 2 + 1` complex (the imaginary parts of element 0, and of element
/// `n / 2` for even `n`, are ignored, as NumPy and cuFFT ignore them) and
/// the output `n` reals. R2C is forward, C2R inverse.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct AxisPass {
    /// Which side is real.
    pub kind: FftKind,
    /// The sign of the exponent (forward: `exp(-2 pi i jk / n)`).
    pub direction: FftDirection,
    /// The transform's length (at least 1).
    pub n: usize,
    /// Distance between consecutive input elements of one transform.
    pub input_stride: usize,
    /// Distance between consecutive output elements of one transform.
    pub output_stride: usize,
    /// The batch: `batch[0].count * batch[1].count` transforms.
    pub batch: [BatchDim; 2],
    /// The factor every output element is multiplied by (1 for none).
    pub scale: f64,
}

impl AxisPass {
    /// How many elements the input and output side of one transform hold.
    pub(crate) fn lengths(&self) -> (usize, usize) {
        let half = self.n / 2 + 1;
        match self.kind {
            FftKind::C2C => (self.n, self.n),
            FftKind::R2C => (self.n, half),
            FftKind::C2R => (half, self.n),
        }
    }

    /// How many transforms.
    pub(crate) fn transforms(&self) -> usize {
        self.batch[0].count * self.batch[1].count
    }

    /// One past the largest input and output offsets the pass touches; the
    /// views must hold at least that many elements. `None` on overflow.
    pub(crate) fn spans(&self) -> Option<(usize, usize)> {
        let (n_in, n_out) = self.lengths();
        let span = |len: usize, stride: usize, dist: [usize; 2]| -> Option<usize> {
            let mut last = (len - 1).checked_mul(stride)?;
            for (d, b) in dist.iter().zip(&self.batch) {
                last = last.checked_add((b.count - 1).checked_mul(*d)?)?;
            }
            last.checked_add(1)
        };
        if self.n == 0 || self.transforms() == 0 {
            return Some((0, 0));
        }
        Some((
            span(n_in, self.input_stride, [self.batch[0].input, self.batch[1].input])?,
            span(n_out, self.output_stride, [self.batch[0].output, self.batch[1].output])?,
        ))
    }
}
