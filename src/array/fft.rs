//! Fourier transforms of an [`Array`] on the run-time tier (NumPy's
//! `numpy.fft`); each forwards to the typed array on its backend (see
//! [`kiln_kernels::array::Array::fft`]).

use kiln_core::{Complex, Element, Result};
use kiln_kernels::fft::{FftFloat, FftNorm};

use super::{Array, wrapped};
use crate::runtime::{Stream, Tier, dispatch};

impl<T: FftFloat> Array<Complex<T>> {
    /// The forward transform along `axis` (NumPy's `fft(a, axis=axis)`).
    ///
    /// # Examples
    /// ```
    /// use kiln::Complex32;
    /// use kiln::kernels::fft::FftNorm;
    /// # fn main() -> kiln::Result<()> {
    /// let s = kiln::Device::open(kiln::BackendKind::Cpu, 0)?.stream();
    /// let x = kiln::Array::from_vec(&s, &[4], &[1.0, 1.0, 1.0, 1.0].map(|v| Complex32::new(v, 0.0)))?;
    /// let f = x.fft(0, FftNorm::Backward)?;
    /// assert_eq!(f.to_vec()?[0], Complex32::new(4.0, 0.0));
    /// assert_eq!(f.ifft(0, FftNorm::Backward)?.to_vec()?, x.to_vec()?);
    /// # Ok(()) }
    /// ```
    pub fn fft(&self, axis: usize, norm: FftNorm) -> Result<Self> {
        wrapped!(self, a => a.fft(axis, norm))
    }

    /// The inverse transform along `axis` (NumPy's `ifft`).
    pub fn ifft(&self, axis: usize, norm: FftNorm) -> Result<Self> {
        wrapped!(self, a => a.ifft(axis, norm))
    }

    /// The forward transform over the last two axes (NumPy's `fft2`).
    pub fn fft2(&self, norm: FftNorm) -> Result<Self> {
        wrapped!(self, a => a.fft2(norm))
    }

    /// The inverse transform over the last two axes (NumPy's `ifft2`).
    pub fn ifft2(&self, norm: FftNorm) -> Result<Self> {
        wrapped!(self, a => a.ifft2(norm))
    }

    /// The forward transform over `axes` (NumPy's `fftn`).
    pub fn fftn(&self, axes: &[usize], norm: FftNorm) -> Result<Self> {
        wrapped!(self, a => a.fftn(axes, norm))
    }

    /// The inverse transform over `axes` (NumPy's `ifftn`).
    pub fn ifftn(&self, axes: &[usize], norm: FftNorm) -> Result<Self> {
        wrapped!(self, a => a.ifftn(axes, norm))
    }

    /// The real signal, `n` points along `axis`, of these non-negative
    /// frequencies (NumPy's `irfft(a, n, axis)`).
    pub fn irfft(&self, n: usize, axis: usize, norm: FftNorm) -> Result<Array<T>> {
        wrapped!(self, a => a.irfft(n, axis, norm))
    }

    /// The real signal of these non-negative frequencies over `axes`, `n`
    /// points along the last of them (NumPy's `irfftn`).
    pub fn irfftn(&self, axes: &[usize], n: usize, norm: FftNorm) -> Result<Array<T>> {
        wrapped!(self, a => a.irfftn(axes, n, norm))
    }
}

impl<T: FftFloat> Array<T> {
    /// The non-negative frequencies of this real array along `axis`
    /// (NumPy's `rfft`: `n / 2 + 1` of them).
    pub fn rfft(&self, axis: usize, norm: FftNorm) -> Result<Array<Complex<T>>> {
        wrapped!(self, a => a.rfft(axis, norm))
    }

    /// The non-negative frequencies over `axes`, the last the real one
    /// (NumPy's `rfftn`).
    pub fn rfftn(&self, axes: &[usize], norm: FftNorm) -> Result<Array<Complex<T>>> {
        wrapped!(self, a => a.rfftn(axes, norm))
    }

    /// The sample frequencies of an `n`-point transform with spacing `d`
    /// (NumPy's `fftfreq`).
    pub fn fftfreq(stream: &Stream, n: usize, d: f64) -> Result<Self> {
        dispatch!(stream, Stream, s => kiln_kernels::array::Array::<B, T>::fftfreq(s, n, d).map(B::wrap_array))
    }

    /// The non-negative sample frequencies of an `n`-point real transform
    /// with spacing `d` (NumPy's `rfftfreq`).
    pub fn rfftfreq(stream: &Stream, n: usize, d: f64) -> Result<Self> {
        dispatch!(stream, Stream, s => kiln_kernels::array::Array::<B, T>::rfftfreq(s, n, d).map(B::wrap_array))
    }
}

impl<T: Element> Array<T> {
    /// The array with the zero frequency moved to the centre along `axes`
    /// (NumPy's `fftshift`).
    pub fn fftshift(&self, axes: &[usize]) -> Result<Self> {
        wrapped!(self, a => a.fftshift(axes))
    }

    /// The inverse of [`fftshift`](Self::fftshift) (NumPy's `ifftshift`).
    pub fn ifftshift(&self, axes: &[usize]) -> Result<Self> {
        wrapped!(self, a => a.ifftshift(axes))
    }
}
