//! A vendor library's matrix product (cuBLAS on CUDA), offered by a backend
//! as an optional capability of its device: [`RawDevice::vendor_gemm`] says
//! whether there is one and which dtypes it multiplies, and
//! [`RawDevice::gemm`] enqueues one [`Gemm`]. Backends without one keep the
//! trait's defaults ("not offered"). kiln-kernels' `matmul` is the safe,
//! checked entry point users call (its `Vendor` strategy).
//!
//! [`RawDevice::vendor_gemm`]: crate::RawDevice::vendor_gemm
//! [`RawDevice::gemm`]: crate::RawDevice::gemm

use crate::{Backend, DType, Error, RawBuffer, Result};

/// What a backend's vendor GEMM is and which products it computes.
///
/// # Examples
/// ```
/// use kiln_core::{DType, VendorGemm};
/// let blas = VendorGemm { name: "demo", products: &[(DType::F32, DType::F32), (DType::F16, DType::F32)] };
/// assert!(blas.supports(DType::F16, DType::F32));
/// assert!(!blas.supports(DType::I32, DType::I32));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VendorGemm {
    /// The library's name, for messages and reports ("cuBLAS").
    pub name: &'static str,
    /// The (input, output) dtype pairs it multiplies: `a` and `b` of the
    /// first, `c` of the second.
    pub products: &'static [(DType, DType)],
}

impl VendorGemm {
    /// Whether it multiplies `input` matrices into an `output` matrix.
    pub fn supports(&self, input: DType, output: DType) -> bool {
        self.products.contains(&(input, output))
    }
}

/// One operand of a [`Gemm`]: a backend buffer and the byte offset of the
/// matrix's first element in it. The matrix is dense and row-major.
pub struct GemmOperand<'a, B: Backend> {
    /// The buffer holding the matrix.
    pub buffer: &'a B::Buffer,
    /// Byte offset of element (0, 0).
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

/// One row-major product `c (m x n) = a (m x k) . b (k x n)`, as a backend's
/// [`RawDevice::gemm`](crate::RawDevice::gemm) takes it: `c` is overwritten
/// (no `alpha`, no `beta`), and every matrix is dense (its leading dimension
/// is its column count).
///
/// # Examples
/// The CPU backend offers no vendor GEMM, so the call is refused:
/// ```
/// use kiln_core::{DType, Device, Error, Gemm, GemmOperand, RawDevice};
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
///     m: 1,
///     n: 1,
///     k: 2,
///     input: DType::F32,
///     output: DType::F32,
/// };
/// call.check()?;
/// // SAFETY: the buffers are the device's and `check` passed; nothing else uses them.
/// let refused = unsafe { dev.raw().gemm(dev.stream().raw(), &call) };
/// assert!(matches!(refused, Err(Error::Unsupported { .. })));
/// # Ok(()) }
/// ```
pub struct Gemm<'a, B: Backend> {
    /// The left factor, `m x k` of `input`.
    pub a: GemmOperand<'a, B>,
    /// The right factor, `k x n` of `input`.
    pub b: GemmOperand<'a, B>,
    /// The product, `m x n` of `output` (written).
    pub c: GemmOperand<'a, B>,
    /// Rows of `a` and `c`.
    pub m: usize,
    /// Columns of `b` and `c`.
    pub n: usize,
    /// Columns of `a`, rows of `b`.
    pub k: usize,
    /// Element type of `a` and `b`.
    pub input: DType,
    /// Element type of `c` (the accumulator: f32 for f16 and bf16 inputs).
    pub output: DType,
}

impl<B: Backend> Clone for Gemm<'_, B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: Backend> Copy for Gemm<'_, B> {}

impl<B: Backend> std::fmt::Debug for Gemm<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}: a = {:?}, b = {:?}, c = {:?}", self.a, self.b, self.c)
    }
}

impl<B: Backend> std::fmt::Display for Gemm<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Gemm { m, n, k, input, output, .. } = *self;
        write!(f, "GEMM ({m} x {k}) . ({k} x {n}) of {input} into {output}")
    }
}

impl<B: Backend> Gemm<'_, B> {
    /// The byte ranges of `a`, `b` and `c` in their buffers, as `start..end`;
    /// `None` when one overflows `usize`.
    pub fn byte_ranges(&self) -> Option<[std::ops::Range<usize>; 3]> {
        let range = |op: &GemmOperand<'_, B>, rows: usize, cols: usize, dtype: DType| {
            let bytes = rows.checked_mul(cols)?.checked_mul(dtype.size())?;
            Some(op.offset..op.offset.checked_add(bytes)?)
        };
        Some([
            range(&self.a, self.m, self.k, self.input)?,
            range(&self.b, self.k, self.n, self.input)?,
            range(&self.c, self.m, self.n, self.output)?,
        ])
    }

    /// `Ok` when the call is well formed: `m`, `n` and `k` are at least 1,
    /// each matrix lies inside its buffer, and `c` overlaps neither `a` nor
    /// `b`. What it cannot check (which device the buffers belong to, what
    /// else uses them) is in [`RawDevice::gemm`](crate::RawDevice::gemm)'s `# Safety`.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{DType, Device, Gemm, GemmOperand};
    /// use kiln_cpu::Cpu;
    /// let dev = Device::<Cpu>::open(0).unwrap();
    /// let x = dev.alloc::<f32>(4).unwrap();
    /// let op = |offset| GemmOperand::<Cpu> { buffer: x.raw(), offset };
    /// let call = Gemm { a: op(0), b: op(4), c: op(8), m: 1, n: 1, k: 1, input: DType::F32, output: DType::F32 };
    /// assert!(call.check().is_ok());
    /// assert!(Gemm { c: op(4), ..call }.check().is_err()); // c on top of b
    /// assert!(Gemm { k: 4, ..call }.check().is_err()); // a and b run past the buffer
    /// ```
    pub fn check(&self) -> Result<()> {
        let what = self.to_string();
        if self.m == 0 || self.n == 0 || self.k == 0 {
            return Err(Error::invalid(what, "m, n and k must be at least 1"));
        }
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
        Ok(())
    }
}
