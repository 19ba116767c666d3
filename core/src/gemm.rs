//! A vendor library's matrix product (cuBLAS on CUDA), offered by a backend
//! as an optional capability of its device: [`RawDevice::vendor_gemm`] says
//! whether there is one and which dtypes it multiplies, and
//! [`RawDevice::gemm`] enqueues one [`Gemm`]. Backends without one keep the
//! trait's defaults ("not offered"). kiln-kernels' `matmul` is the safe,
//! checked entry point users call (its `Vendor` strategy).
//!
//! [`RawDevice::vendor_gemm`]: crate::RawDevice::vendor_gemm
//! [`RawDevice::gemm`]: crate::RawDevice::gemm

use crate::{Backend, DType, Error, MatmulShape, Precision, RawBuffer, Result};

/// What a backend's vendor GEMM is and which products it computes.
///
/// # Examples
/// ```
/// use kiln_core::{DType, VendorGemm};
/// use kiln_core::Precision;
/// let blas = VendorGemm {
///     name: "demo",
///     products: &[(DType::F32, DType::F32), (DType::F16, DType::F32)],
///     faster: &[Precision::Tf32],
///     scaled: &[(DType::F8E4M3, DType::F8E4M3, DType::BF16)],
/// };
/// assert!(blas.supports(DType::F16, DType::F32));
/// assert!(blas.supports_scaled(DType::F8E4M3, DType::F8E4M3, DType::BF16));
/// assert!(!blas.supports_scaled(DType::F8E5M2, DType::F8E5M2, DType::BF16));
/// assert!(!blas.supports(DType::I32, DType::I32));
/// assert!(blas.speeds_up(DType::F32, Precision::Tf32));
/// assert!(!blas.speeds_up(DType::F32, Precision::Bf16)); // computed exactly
/// assert!(!blas.speeds_up(DType::F64, Precision::Tf32)); // f64 is always exact
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VendorGemm {
    /// The library's name, for messages and reports ("cuBLAS").
    pub name: &'static str,
    /// The (input, output) dtype pairs it multiplies: `a` and `b` of the
    /// first, `c` of the second.
    pub products: &'static [(DType, DType)],
    /// The [`Precision`] modes other than `Exact` it has a faster path for
    /// (on `f32` inputs, the only ones a mode changes); it computes products
    /// asked for in any other mode exactly.
    pub faster: &'static [Precision],
    /// The scaled products it computes ([`GemmScales`]: 8-bit floats times
    /// a scale each), as (a, b, c) dtypes.
    pub scaled: &'static [(DType, DType, DType)],
}

impl VendorGemm {
    /// Whether it computes the scaled product of `a` matrices by `b`
    /// matrices into a `c` matrix.
    pub fn supports_scaled(&self, a: DType, b: DType, c: DType) -> bool {
        self.scaled.contains(&(a, b, c))
    }

    /// Whether it multiplies `input` matrices into an `output` matrix.
    pub fn supports(&self, input: DType, output: DType) -> bool {
        self.products.contains(&(input, output))
    }

    /// Whether a product of `input` matrices in mode `precision` takes a
    /// faster, less exact path than [`Precision::Exact`].
    pub fn speeds_up(&self, input: DType, precision: Precision) -> bool {
        input == DType::F32 && precision != Precision::Exact && self.faster.contains(&precision)
    }
}

/// One operand of a [`Gemm`]: a backend buffer and the byte offset of the
/// first matrix's first element in it; the call's [`MatmulShape`] says how
/// its matrices lie from there.
pub struct GemmOperand<'a, B: Backend> {
    /// The buffer holding the matrix.
    pub buffer: &'a B::Buffer,
    /// Byte offset of element (0, 0) of the first matrix.
    pub offset: usize,
}

impl<B: Backend> Clone for GemmOperand<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: Backend> Copy for GemmOperand<'_, B> {}

impl<B: Backend> std::fmt::Debug for GemmOperand<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?} + {} bytes", self.buffer, self.offset)
    }
}

/// One call of a vendor GEMM, as a backend's
/// [`RawDevice::gemm`](crate::RawDevice::gemm) takes it: for each of
/// `shape.batch` products, `c = a . b` of row-major matrices laid out as
/// `shape` says (transposed operands, leading dimensions, batch strides),
/// in the arithmetic `shape.precision` allows. `c` is overwritten (no
/// `alpha`, no `beta`).
///
/// # Examples
/// The CPU backend offers no vendor GEMM, so the call is refused:
/// ```
/// use kiln_core::{DType, Device, Error, Gemm, GemmOperand, MatmulShape, RawDevice};
/// use kiln_cpu::Cpu;
///
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// assert!(dev.raw().vendor_gemm().is_none());
/// let (a, b) = (dev.upload(&[1.0f32, 2.0])?, dev.upload(&[3.0f32, 4.0])?);
/// let c = dev.alloc::<f32>(1)?;
/// let call = Gemm::<Cpu> {
///     a: GemmOperand { buffer: a.raw(), offset: 0 },
///     b: GemmOperand { buffer: b.raw(), offset: 0 },
///     c: GemmOperand { buffer: c.raw(), offset: 0 },
///     shape: MatmulShape::new(1, 1, 2),
///     input: DType::F32,
///     output: DType::F32,
///     scaled: None,
/// };
/// call.check()?;
/// // SAFETY: the buffers are the device's and `check` passed; nothing else uses them.
/// let refused = unsafe { dev.raw().gemm(dev.stream().raw(), &call) };
/// assert!(matches!(refused, Err(Error::Unsupported { .. })));
/// # Ok(()) }
/// ```
pub struct Gemm<'a, B: Backend> {
    /// The left factors, `m x k` of `input` each.
    pub a: GemmOperand<'a, B>,
    /// The right factors, `k x n` of `input` each.
    pub b: GemmOperand<'a, B>,
    /// The products, `m x n` of `output` each (written).
    pub c: GemmOperand<'a, B>,
    /// Sizes, layouts, batch and precision.
    pub shape: MatmulShape,
    /// Element type of `a`, and of `b` unless the product is scaled.
    pub input: DType,
    /// Element type of `c`.
    pub output: DType,
    /// For a scaled product (of 8-bit floats), `b`'s element type and the
    /// two scales: `c = scale_a scale_b (a . b)`; `None` for a plain one.
    pub scaled: Option<GemmScales<'a, B>>,
}

/// What makes a [`Gemm`] a scaled product, as the 8-bit float products
/// of cuBLASLt and `torch._scaled_mm` are: `c = scale_a scale_b (a . b)`,
/// with one `f32` scale per operand in device memory (per-tensor scaling).
pub struct GemmScales<'a, B: Backend> {
    /// Element type of `b` (which may differ from `a`'s: E4M3 by E5M2).
    pub input_b: DType,
    /// The `f32` that scales `a`.
    pub scale_a: GemmOperand<'a, B>,
    /// The `f32` that scales `b`.
    pub scale_b: GemmOperand<'a, B>,
}

impl<B: Backend> Clone for GemmScales<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: Backend> Copy for GemmScales<'_, B> {}

impl<B: Backend> std::fmt::Debug for GemmScales<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "b of {}, scale_a = {:?}, scale_b = {:?}", self.input_b, self.scale_a, self.scale_b)
    }
}

impl<B: Backend> Clone for Gemm<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: Backend> Copy for Gemm<'_, B> {}

impl<B: Backend> std::fmt::Debug for Gemm<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}: a = {:?}, b = {:?}, c = {:?}", self.a, self.b, self.c)?;
        match &self.scaled {
            Some(s) => write!(f, ", {s:?}"),
            None => Ok(()),
        }
    }
}

impl<B: Backend> std::fmt::Display for Gemm<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.scaled {
            Some(s) => write!(f, "scaled GEMM {} of {} by {} into {}", self.shape, self.input, s.input_b, self.output),
            None => write!(f, "GEMM {} of {} into {}", self.shape, self.input, self.output),
        }
    }
}

impl<B: Backend> Gemm<'_, B> {
    /// Element type of `b`: `input` unless the product is scaled.
    pub fn input_b(&self) -> DType {
        self.scaled.as_ref().map_or(self.input, |s| s.input_b)
    }

    /// The byte ranges `a`, `b` and `c` span in their buffers, as
    /// `start..end`; `None` when one overflows `usize`.
    pub fn byte_ranges(&self) -> Option<[std::ops::Range<usize>; 3]> {
        let [a, b, c] = self.shape.spans()?;
        let range = |op: &GemmOperand<'_, B>, elements: usize, dtype: DType| {
            Some(op.offset..op.offset.checked_add(elements.checked_mul(dtype.size())?)?)
        };
        Some([range(&self.a, a, self.input)?, range(&self.b, b, self.input_b())?, range(&self.c, c, self.output)?])
    }

    /// `Ok` when the call is well formed: `m`, `n`, `k` and the batch are
    /// at least 1, the layouts are ([`MatmulShape::check_layouts`]), each
    /// operand lies inside its buffer, and `c`'s range overlaps neither
    /// `a`'s nor `b`'s (nor a scaled product's scales, each an aligned
    /// `f32` inside its buffer). What it cannot check (which device the buffers
    /// belong to, what else uses them) is in
    /// [`RawDevice::gemm`](crate::RawDevice::gemm)'s `# Safety`.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{DType, Device, Gemm, GemmOperand, MatmulShape};
    /// use kiln_cpu::Cpu;
    /// let dev = Device::<Cpu>::open(0).unwrap();
    /// let x = dev.alloc::<f32>(4).unwrap();
    /// let op = |offset| GemmOperand::<Cpu> { buffer: x.raw(), offset };
    /// let shape = MatmulShape::new(1, 1, 1);
    /// let call = Gemm { a: op(0), b: op(4), c: op(8), shape, input: DType::F32, output: DType::F32, scaled: None };
    /// assert!(call.check().is_ok());
    /// assert!(Gemm { c: op(4), ..call }.check().is_err()); // c on top of b
    /// assert!(Gemm { shape: MatmulShape::new(1, 1, 4), ..call }.check().is_err()); // past the buffer
    /// assert!(Gemm { shape: shape.batch(2), ..call }.check().is_err()); // c's matrices in one place
    /// ```
    pub fn check(&self) -> Result<()> {
        let what = self.to_string();
        let s = &self.shape;
        if s.m == 0 || s.n == 0 || s.k == 0 || s.batch == 0 {
            return Err(Error::invalid(what, "m, n, k and the batch must be at least 1"));
        }
        s.check_layouts().map_err(|reason| Error::invalid(what.clone(), reason))?;
        let ranges = self.byte_ranges().ok_or_else(|| Error::invalid(what.clone(), "overflows the address space"))?;
        let operands = [("a", &self.a), ("b", &self.b), ("c", &self.c)];
        for ((name, op), range) in operands.iter().zip(&ranges) {
            if range.end > op.buffer.len() {
                return Err(Error::invalid(
                    what,
                    format!("{name} takes bytes {range:?} of a buffer of {} bytes", op.buffer.len()),
                ));
            }
        }
        for ((name, op), range) in operands[..2].iter().zip(&ranges) {
            let same = std::ptr::eq(op.buffer, self.c.buffer);
            if same && range.start < ranges[2].end && ranges[2].start < range.end {
                return Err(Error::invalid(what, format!("c overlaps {name}")));
            }
        }
        if let Some(scales) = &self.scaled {
            for (name, op) in [("scale_a", &scales.scale_a), ("scale_b", &scales.scale_b)] {
                let range = op.offset..op.offset.saturating_add(4);
                if range.end > op.buffer.len() || !op.offset.is_multiple_of(4) {
                    return Err(Error::invalid(
                        what,
                        format!(
                            "{name} takes bytes {range:?} of a buffer of {} bytes (an aligned f32)",
                            op.buffer.len()
                        ),
                    ));
                }
                let same = std::ptr::eq(op.buffer, self.c.buffer);
                if same && range.start < ranges[2].end && ranges[2].start < range.end {
                    return Err(Error::invalid(what, format!("c overlaps {name}")));
                }
            }
        }
        Ok(())
    }
}
