//! Fourier transforms of arrays (NumPy's `numpy.fft`): complex and real
//! transforms along any axes of any layout, the sample frequencies, and
//! the shifts that centre the zero frequency.
//!
//! An array whose strides fold into two batch dimensions per transformed
//! axis (every dense array, and views such as a column or a slice with a
//! step) is transformed where it lies; any other is copied to row-major
//! order first. Results are new row-major arrays.

use std::sync::OnceLock;

use kiln_core::{Args, Backend, Complex, Element, Error, FftDirection, FftKind, Parts, Result, Stream};

use super::Array;
use crate::expr::{Expr, Ty, index, var};
use crate::fft::{FftFloat, FftNorm, FftShape, transform};
use crate::user::{Elementwise, ElementwiseKernel};

/// The most dimensions [`Array::fftshift`] rolls at once.
const MAX_ROLL_DIMS: usize = 8;

impl<B: Backend, T: FftFloat> Array<B, Complex<T>> {
    /// The forward transform along `axis` (NumPy's `fft(a, axis=axis)`).
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{Complex32, Device};
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// use kiln_kernels::fft::FftNorm;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let x = Array::from_vec(&s, &[2, 2], &[1.0, 2.0, 3.0, 4.0].map(|v| Complex32::new(v, 0.0)))?;
    /// let cols = x.fft(0, FftNorm::Backward)?; // down each column
    /// assert_eq!(cols.to_vec()?, [4.0, 6.0, -2.0, -2.0].map(|v| Complex32::new(v, 0.0)));
    /// # Ok(()) }
    /// ```
    pub fn fft(&self, axis: usize, norm: FftNorm) -> Result<Self> {
        self.fftn(&[axis], norm)
    }

    /// The inverse transform along `axis` (NumPy's `ifft`).
    pub fn ifft(&self, axis: usize, norm: FftNorm) -> Result<Self> {
        self.ifftn(&[axis], norm)
    }

    /// The forward transform over the last two axes (NumPy's `fft2`).
    pub fn fft2(&self, norm: FftNorm) -> Result<Self> {
        self.fftn(&last_axes(self.ndim(), 2, "Array::fft2")?, norm)
    }

    /// The inverse transform over the last two axes (NumPy's `ifft2`).
    pub fn ifft2(&self, norm: FftNorm) -> Result<Self> {
        self.ifftn(&last_axes(self.ndim(), 2, "Array::ifft2")?, norm)
    }

    /// The forward transform over `axes` (NumPy's `fftn`).
    pub fn fftn(&self, axes: &[usize], norm: FftNorm) -> Result<Self> {
        self.transformed::<Complex<T>, T>(FftKind::C2C, FftDirection::Forward, self.shape(), axes, norm)
    }

    /// The inverse transform over `axes` (NumPy's `ifftn`).
    pub fn ifftn(&self, axes: &[usize], norm: FftNorm) -> Result<Self> {
        self.transformed::<Complex<T>, T>(FftKind::C2C, FftDirection::Inverse, self.shape(), axes, norm)
    }

    /// The real signal whose non-negative frequencies along `axis` these
    /// are, `n` points long there (NumPy's `irfft(a, n, axis)`; NumPy's
    /// default `n` is `2 * (m - 1)` for `m` frequencies). `Err` unless
    /// `n / 2 + 1` is the array's length along `axis`.
    pub fn irfft(&self, n: usize, axis: usize, norm: FftNorm) -> Result<Array<B, T>> {
        self.irfftn(&[axis], n, norm)
    }

    /// The real signal of these non-negative frequencies over `axes`, `n`
    /// points along the last of them (NumPy's `irfftn` with `s` this shape
    /// and `n` last).
    pub fn irfftn(&self, axes: &[usize], n: usize, norm: FftNorm) -> Result<Array<B, T>> {
        let what = "Array::irfftn";
        let &last = axes.last().ok_or_else(|| Error::invalid(what, "no axis to transform"))?;
        let have = *self.shape().get(last).ok_or_else(|| {
            Error::invalid(what, format!("axis {last} is out of range for {} dimensions", self.ndim()))
        })?;
        if n == 0 || n / 2 + 1 != have {
            return Err(Error::invalid(
                what,
                format!("{n} points along axis {last} need {} frequencies; it has {have}", n / 2 + 1),
            ));
        }
        let mut real = self.shape().to_vec();
        real[last] = n;
        self.transformed::<T, T>(FftKind::C2R, FftDirection::Inverse, &real, axes, norm)
    }
}

impl<B: Backend, T: FftFloat> Array<B, T> {
    /// The non-negative frequencies of this real array along `axis`
    /// (NumPy's `rfft(a, axis=axis)`: `n / 2 + 1` of them there).
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{Complex32, Device};
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// use kiln_kernels::fft::FftNorm;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let x = Array::from_vec(&s, &[4], &[1.0f32, 0.0, -1.0, 0.0])?;
    /// let f = x.rfft(0, FftNorm::Backward)?;
    /// assert_eq!(f.shape(), &[3]);
    /// assert_eq!(f.to_vec()?, [Complex32::new(0.0, 0.0), Complex32::new(2.0, 0.0), Complex32::new(0.0, 0.0)]);
    /// assert_eq!(f.irfft(4, 0, FftNorm::Backward)?.to_vec()?, [1.0, 0.0, -1.0, 0.0]);
    /// # Ok(()) }
    /// ```
    pub fn rfft(&self, axis: usize, norm: FftNorm) -> Result<Array<B, Complex<T>>> {
        self.rfftn(&[axis], norm)
    }

    /// The non-negative frequencies over `axes`, the last of them the real
    /// one (NumPy's `rfftn`).
    pub fn rfftn(&self, axes: &[usize], norm: FftNorm) -> Result<Array<B, Complex<T>>> {
        self.transformed::<Complex<T>, T>(FftKind::R2C, FftDirection::Forward, self.shape(), axes, norm)
    }

    /// The sample frequencies of an `n`-point transform with sample spacing
    /// `d` (NumPy's `fftfreq`): `[0, 1, .., (n-1)/2, -(n/2), .., -1] / (d n)`.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// assert_eq!(Array::<_, f32>::fftfreq(&s, 5, 0.1)?.to_vec()?, [0.0, 2.0, 4.0, -4.0, -2.0]);
    /// assert_eq!(Array::<_, f64>::rfftfreq(&s, 4, 1.0)?.to_vec()?, [0.0, 0.25, 0.5]);
    /// # Ok(()) }
    /// ```
    pub fn fftfreq(stream: &Stream<B>, n: usize, d: f64) -> Result<Self> {
        let scale = 1.0 / (d * n as f64);
        let v: Vec<T> = (0..n)
            .map(|i| {
                let k = if i < n.div_ceil(2) { i as f64 } else { i as f64 - n as f64 };
                T::from_wide(k * scale)
            })
            .collect();
        Array::from_vec(stream, &[n], &v)
    }

    /// The non-negative sample frequencies of an `n`-point real transform
    /// with spacing `d` (NumPy's `rfftfreq`): `[0, 1, .., n/2] / (d n)`.
    pub fn rfftfreq(stream: &Stream<B>, n: usize, d: f64) -> Result<Self> {
        let scale = 1.0 / (d * n as f64);
        let v: Vec<T> = (0..n / 2 + 1).map(|i| T::from_wide(i as f64 * scale)).collect();
        Array::from_vec(stream, &[n / 2 + 1], &v)
    }
}

impl<B: Backend, T: Element> Array<B, T> {
    /// The transform `kind` of this array into a new one, `shape` the real
    /// shape of a real transform (this array's for the others).
    fn transformed<O: Element, F: FftFloat>(
        &self,
        kind: FftKind,
        direction: FftDirection,
        shape: &[usize],
        axes: &[usize],
        norm: FftNorm,
    ) -> Result<Array<B, O>> {
        let spec = FftShape::new(shape).along(axes);
        spec.check(&format!("Array fft of shape {:?} along {axes:?}", self.shape()))?;
        let out_shape = if kind == FftKind::R2C { spec.half_shape() } else { shape.to_vec() };
        let stream = self.stream();
        let mut out = stream.alloc::<O>(out_shape.iter().product())?;
        // Transformed where it lies when its strides allow, else from a row-major copy.
        // A broadcast axis (stride 0, more than one index) is copied out too.
        let strides: Option<Vec<usize>> = self
            .strides()
            .iter()
            .zip(self.shape())
            .map(|(&s, &n)| usize::try_from(s).ok().filter(|&s| s > 0 || n <= 1))
            .collect();
        let (lo, hi) = self.layout().span()?;
        if let Some(strides) = strides
            && lo == self.layout().offset()
        {
            let x = self.buffer().slice(lo..hi)?;
            let done = transform::<B, F, T, O>(stream, kind, direction, x, out.view_mut(), &spec, &strides, norm);
            match done {
                Err(Error::InvalidArgument { reason, .. }) if reason.contains("do not fold") => {}
                other => return other.and_then(|()| Array::from_buffer(out, &out_shape)),
            }
        }
        let dense = self.to_contiguous()?;
        let strides = crate::fft::dense_strides(dense.shape());
        transform::<B, F, T, O>(stream, kind, direction, dense.buffer().view(), out.view_mut(), &spec, &strides, norm)?;
        Array::from_buffer(out, &out_shape)
    }

    /// The array with the zero frequency moved to the centre along `axes`
    /// (NumPy's `fftshift`): each rolled by half its length, rounded down.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let f = Array::<_, f32>::fftfreq(&s, 5, 1.0)?;
    /// let shifted = f.fftshift(&[0])?;
    /// assert_eq!(shifted.to_vec()?, [-0.4, -0.2, 0.0, 0.2, 0.4]);
    /// assert_eq!(shifted.ifftshift(&[0])?.to_vec()?, f.to_vec()?);
    /// # Ok(()) }
    /// ```
    pub fn fftshift(&self, axes: &[usize]) -> Result<Self> {
        self.rolled(axes, |n| n / 2, "Array::fftshift")
    }

    /// The inverse of [`fftshift`](Self::fftshift) (NumPy's `ifftshift`):
    /// each axis rolled back by half its length, rounded up.
    pub fn ifftshift(&self, axes: &[usize]) -> Result<Self> {
        self.rolled(axes, |n| n.div_ceil(2), "Array::ifftshift")
    }

    /// A row-major copy with each of `axes` rolled forward by `by(n)`
    /// places (element `i` moves to `(i + by) % n`).
    fn rolled(&self, axes: &[usize], by: impl Fn(usize) -> usize, what: &str) -> Result<Self> {
        let ndim = self.ndim();
        for (i, &a) in axes.iter().enumerate() {
            if a >= ndim {
                return Err(Error::invalid(what, format!("axis {a} is out of range for {ndim} dimensions")));
            }
            if axes[..i].contains(&a) {
                return Err(Error::invalid(what, format!("axis {a} is repeated in {axes:?}")));
            }
        }
        let src = self.to_contiguous()?;
        if ndim == 0 || self.is_empty() || axes.is_empty() {
            return Ok(src);
        }
        if ndim >= MAX_ROLL_DIMS {
            return Err(Error::invalid(what, format!("{ndim} dimensions, past the {} it rolls", MAX_ROLL_DIMS - 1)));
        }
        let limit =
            |v: usize| u32::try_from(v).map_err(|_| Error::invalid(what, format!("{v} is past 32-bit indices")));
        // Complex elements move as their two parts (user kernels take
        // reals): one more axis, of the parts, never rolled.
        let parts = if T::DTYPE.is_complex() { 2 } else { 1 };
        limit(self.len().saturating_mul(parts))?;
        let stream = self.stream();
        let mut dst = stream.alloc::<T>(self.len())?;
        let mut args = Args::new().arg(Parts::new(src.buffer().view())).arg(Parts::new(dst.view_mut()));
        let mut w = self.len() * parts;
        let shape: Vec<usize> = self.shape().iter().copied().chain((parts == 2).then_some(2)).collect();
        for (axis, &n) in shape.iter().enumerate() {
            w /= n;
            // Output element c reads input element (c + n - shift) % n.
            let back = if axes.contains(&axis) && axis < ndim { (n - by(n) % n) % n } else { 0 };
            args = args.scalar(limit(n)?).scalar(limit(w)?).scalar(limit(back)?);
        }
        roll_kernel(shape.len())?.launch(stream, args)?;
        Array::from_buffer(dst, self.shape())
    }
}

/// The axes `ndim - k .. ndim`, or `Err` for an array of fewer than `k`.
fn last_axes(ndim: usize, k: usize, what: &str) -> Result<Vec<usize>> {
    if ndim < k {
        return Err(Error::invalid(what, format!("an array of {ndim} dimensions has no last {k} axes")));
    }
    Ok((ndim - k..ndim).collect())
}

/// The roll of a row-major array of `dims` dimensions: `dst[i] = src[j]`,
/// `j`'s coordinate along axis `k` being `(c_k + b_k) % n_k` for `i`'s
/// `c_k = (i / w_k) % n_k`, with the extents `n_k`, the elements `w_k` each
/// step of axis `k` spans and the offsets `b_k` as scalars.
fn roll_kernel(dims: usize) -> Result<&'static ElementwiseKernel> {
    static KERNELS: OnceLock<Vec<Result<ElementwiseKernel>>> = OnceLock::new();
    let all = KERNELS.get_or_init(|| (1..=MAX_ROLL_DIMS).map(build_roll).collect());
    match all.get(dims.wrapping_sub(1)) {
        Some(Ok(k)) => Ok(k),
        Some(Err(e)) => Err(e.clone()),
        None => Err(Error::invalid("array roll", format!("{dims} dimensions, past the {MAX_ROLL_DIMS} kiln rolls"))),
    }
}

fn build_roll(dims: usize) -> Result<ElementwiseKernel> {
    let t = Ty::param("T");
    let mut def = Elementwise::new(format!("kiln_array_roll_{dims}")).raw("src", t.clone()).output("dst", t);
    let mut at: Expr = Expr::from(0u32);
    for k in 0..dims {
        let (n, w, b) = (format!("n{k}"), format!("w{k}"), format!("b{k}"));
        def = def.scalar(&n, kiln_core::DType::U32).scalar(&w, kiln_core::DType::U32).scalar(&b, kiln_core::DType::U32);
        let c: Expr = (index() / var(&w)) % var(&n);
        at = at + ((c + var(&b)) % var(&n)) * var(&w);
    }
    def.set("dst", var("src").at(at)).build()
}
