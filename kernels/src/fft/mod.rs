//! fft: discrete Fourier transforms of complex and real data, 1-D to n-D,
//! batched along any axes, with NumPy's normalisations ([`FftNorm`]) and
//! output shapes (`rfft` keeps the `n / 2 + 1` non-negative frequencies).
//!
//! - [`fft`] and [`ifft`]: complex to complex, forward and inverse, along
//!   the axes of an [`FftShape`] (NumPy's `fft`, `fft2`, `fftn` and their
//!   inverses).
//! - [`rfft`] and [`irfft`]: real to complex and back (NumPy's `rfft`,
//!   `rfftn`, `irfft`, `irfftn`), the real axis the last of the axes.
//!
//! Every length works: lengths made of small primes take the fast radix
//! paths, the others Bluestein's (chirp-z) algorithm on every backend.
//! Data are `f32` and `f64` (complex: `Complex<f32>`, `Complex<f64>`,
//! NumPy's `complex64` and `complex128`; f64 where the device computes in
//! it).
//!
//! Each backend computes the transforms its own way:
//! - **CUDA**: cuFFT ([`RawDevice::vendor_fft`]), loaded at run time as
//!   cuBLAS is, on kiln's streams, its work area from kiln's pool; a
//!   transform over the trailing axes of a dense array is one cuFFT plan,
//!   the others one plan per axis. cuFFT does not scale: a normalisation
//!   other than 1 is one more pass over the output.
//! - **wgpu**: kiln's own Stockham kernels, generated per length.
//! - **CPU**: rustfft's and realfft's plans, the batch in parallel.
//!
//! Plans are made at the first transform of a shape, kept for the process
//! (CPU, wgpu kernels) or the device (cuFFT), and shared by every stream:
//! scratch is taken per call from the calling stream's pool, so no two
//! streams in flight share it.
//!
//! [`RawDevice::vendor_fft`]: kiln_core::RawDevice::vendor_fft

mod cpu;
mod pass;
mod plan;
mod shape;
mod vendor;
mod wgsl;

use kiln_core::{
    Backend, BufferView, BufferViewMut, DType, Element, Error, FftKind, Language, RawDevice, Result, Stream, View,
    ViewMut,
};

pub use kiln_core::Complex;
pub use pass::FftDirection;
pub(crate) use pass::{AxisPass, BatchDim};
use plan::{Slot, Step};
pub(crate) use shape::dense_strides;
pub use shape::{FftNorm, FftShape};

mod sealed {
    /// Keeps [`FftFloat`](super::FftFloat) to `f32` and `f64`, and holds
    /// the CPU's planners for each.
    pub trait Sealed: rustfft::FftNum + realfft::FftNum {
        fn planners() -> &'static super::cpu::Planners<Self>;
    }

    impl Sealed for f32 {
        fn planners() -> &'static super::cpu::Planners<f32> {
            static P: std::sync::OnceLock<super::cpu::Planners<f32>> = std::sync::OnceLock::new();
            P.get_or_init(super::cpu::Planners::new)
        }
    }

    impl Sealed for f64 {
        fn planners() -> &'static super::cpu::Planners<f64> {
            static P: std::sync::OnceLock<super::cpu::Planners<f64>> = std::sync::OnceLock::new();
            P.get_or_init(super::cpu::Planners::new)
        }
    }
}

/// The real types whose data kiln transforms: `f32` (complex `c64`) and
/// `f64` (complex `c128`, where the device computes in f64).
pub trait FftFloat: kiln_core::ComplexPart + sealed::Sealed {
    /// `v` rounded to this type.
    fn from_wide(v: f64) -> Self;
    /// This value as `f64` (exact).
    fn to_wide(self) -> f64;
}

impl FftFloat for f32 {
    fn from_wide(v: f64) -> Self {
        v as f32
    }
    fn to_wide(self) -> f64 {
        f64::from(self)
    }
}

impl FftFloat for f64 {
    fn from_wide(v: f64) -> Self {
        v
    }
    fn to_wide(self) -> f64 {
        self
    }
}

/// The forward transform of complex `x` into `y` along `shape`'s axes,
/// normalised as `norm` says; `x` and `y` hold `shape.len()` elements
/// each, dense and row-major (NumPy's `fft`, `fft2`, `fftn`).
///
/// # Examples
/// ```
/// use kiln_core::{Complex32, Device};
/// use kiln_cpu::Cpu;
/// use kiln_kernels::fft::{fft, FftNorm, FftShape};
/// # fn main() -> kiln_core::Result<()> {
/// let s = Device::<Cpu>::open(0)?.stream();
/// let x = s.upload(&[1.0, 2.0, 3.0, 4.0].map(|v| Complex32::new(v, 0.0)))?;
/// let mut y = s.alloc::<Complex32>(4)?;
/// fft(&s, &x, &mut y, FftShape::new(&[4]), FftNorm::Backward)?;
/// let want = [(10.0, 0.0), (-2.0, 2.0), (-2.0, 0.0), (-2.0, -2.0)];
/// for (got, (re, im)) in y.to_vec()?.into_iter().zip(want) {
///     assert!((got.re - re).abs() < 1e-5 && (got.im - im).abs() < 1e-5);
/// }
/// # Ok(()) }
/// ```
pub fn fft<B: Backend, T: FftFloat>(
    stream: &Stream<B>,
    x: &impl View<B, Complex<T>>,
    y: &mut impl ViewMut<B, Complex<T>>,
    shape: FftShape,
    norm: FftNorm,
) -> Result<()> {
    let strides = shape::dense_strides(shape.shape());
    transform::<B, T, _, _>(stream, FftKind::C2C, FftDirection::Forward, x.view(), y.view_mut(), &shape, &strides, norm)
}

/// The inverse transform of complex `x` into `y` along `shape`'s axes,
/// normalised as `norm` says (NumPy's `ifft`, `ifft2`, `ifftn`): with the
/// default [`FftNorm::Backward`], `ifft(fft(x)) == x` up to rounding.
pub fn ifft<B: Backend, T: FftFloat>(
    stream: &Stream<B>,
    x: &impl View<B, Complex<T>>,
    y: &mut impl ViewMut<B, Complex<T>>,
    shape: FftShape,
    norm: FftNorm,
) -> Result<()> {
    let strides = shape::dense_strides(shape.shape());
    transform::<B, T, _, _>(stream, FftKind::C2C, FftDirection::Inverse, x.view(), y.view_mut(), &shape, &strides, norm)
}

/// The forward transform of real `x` (`shape.len()` elements) into its
/// non-negative frequencies `y` (`shape.half_shape()`: `n / 2 + 1` along
/// the last of the axes), as NumPy's `rfft` and `rfftn`.
///
/// # Examples
/// ```
/// use kiln_core::{Complex32, Device};
/// use kiln_cpu::Cpu;
/// use kiln_kernels::fft::{rfft, FftNorm, FftShape};
/// # fn main() -> kiln_core::Result<()> {
/// let s = Device::<Cpu>::open(0)?.stream();
/// let x = s.upload(&[1.0f32, 2.0, 3.0, 4.0])?;
/// let mut y = s.alloc::<Complex32>(3)?;
/// rfft(&s, &x, &mut y, FftShape::new(&[4]), FftNorm::Backward)?;
/// assert_eq!(y.to_vec()?, [Complex32::new(10.0, 0.0), Complex32::new(-2.0, 2.0), Complex32::new(-2.0, 0.0)]);
/// # Ok(()) }
/// ```
pub fn rfft<B: Backend, T: FftFloat>(
    stream: &Stream<B>,
    x: &impl View<B, T>,
    y: &mut impl ViewMut<B, Complex<T>>,
    shape: FftShape,
    norm: FftNorm,
) -> Result<()> {
    let strides = shape::dense_strides(shape.shape());
    transform::<B, T, _, _>(stream, FftKind::R2C, FftDirection::Forward, x.view(), y.view_mut(), &shape, &strides, norm)
}

/// The real signal `y` (`shape.len()` elements) whose non-negative
/// frequencies are `x` (`shape.half_shape()`), as NumPy's `irfft` and
/// `irfftn` with `s` the shape: `irfft(rfft(x)) == x` up to rounding. The
/// imaginary parts of the zero frequency (and, for even lengths, of the
/// last) are ignored.
pub fn irfft<B: Backend, T: FftFloat>(
    stream: &Stream<B>,
    x: &impl View<B, Complex<T>>,
    y: &mut impl ViewMut<B, T>,
    shape: FftShape,
    norm: FftNorm,
) -> Result<()> {
    let strides = shape::dense_strides(&shape.half_shape());
    transform::<B, T, _, _>(stream, FftKind::C2R, FftDirection::Inverse, x.view(), y.view_mut(), &shape, &strides, norm)
}

/// How a backend computes transforms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Path {
    /// rustfft on the host.
    Host,
    /// The device's vendor FFT.
    Vendor,
    /// kiln's WGSL kernels.
    Wgsl,
}

/// The path `stream`'s device computes transforms of `T` on, or
/// `Unsupported` saying what is missing.
fn path<B: Backend, T: FftFloat>(stream: &Stream<B>, what: &str) -> Result<Path> {
    crate::launch::check_dtype(stream, T::DTYPE, what)?;
    let device = stream.device();
    match B::LANGUAGE {
        Language::Host => Ok(Path::Host),
        Language::Wgsl => Ok(Path::Wgsl),
        _ => match device.raw().vendor_fft() {
            Some(v) if v.supports(T::DTYPE) => Ok(Path::Vendor),
            Some(v) => Err(Error::unsupported(B::KIND, what, format!("{} has no {} transforms", v.name, T::DTYPE))),
            None => Err(Error::unsupported(
                B::KIND,
                what,
                format!("{} offers no FFT library (cuFFT, libcufft.so, could not be loaded)", device.name()),
            )),
        },
    }
}

/// `kind`'s transform of `x` (laid out with `strides` over its shape) into
/// the dense `y`, along `shape`'s axes, normalised as `norm` says.
#[allow(clippy::too_many_arguments, reason = "the transform and both sides' layouts")]
pub(crate) fn transform<B: Backend, T: FftFloat, I: Element, O: Element>(
    stream: &Stream<B>,
    kind: FftKind,
    direction: FftDirection,
    x: BufferView<'_, B, I>,
    mut y: BufferViewMut<'_, B, O>,
    shape: &FftShape,
    strides: &[usize],
    norm: FftNorm,
) -> Result<()> {
    let name = match (kind, direction) {
        (FftKind::C2C, FftDirection::Forward) => "fft",
        (FftKind::C2C, FftDirection::Inverse) => "ifft",
        (FftKind::R2C, _) => "rfft",
        (FftKind::C2R, _) => "irfft",
    };
    let what = format!("{name} of shape {:?} along axes {:?} on {}", shape.shape(), shape.axes(), T::DTYPE);
    shape.check(&what)?;
    let (in_shape, out_shape) = match kind {
        FftKind::C2C => (shape.shape().to_vec(), shape.shape().to_vec()),
        FftKind::R2C => (shape.shape().to_vec(), shape.half_shape()),
        FftKind::C2R => (shape.half_shape(), shape.shape().to_vec()),
    };
    let dense = shape::dense_strides(&in_shape);
    if strides.len() != in_shape.len() {
        return Err(Error::invalid(&what, format!("{} strides for {} dimensions", strides.len(), in_shape.len())));
    }
    // An axis of one index may have any stride (a view's is often 0): give
    // it the dense one, so that layouts and vendor calls see a valid step.
    let strides: Vec<usize> =
        strides.iter().zip(&in_shape).zip(&dense).map(|((&s, &n), &d)| if n == 1 { d } else { s }).collect();
    let strides = strides.as_slice();
    let in_span = in_shape
        .iter()
        .zip(strides)
        .try_fold(1usize, |acc, (&n, &s)| if n == 0 { Some(0) } else { acc.checked_add((n - 1).checked_mul(s)?) });
    let in_span = if in_shape.contains(&0) { Some(0) } else { in_span };
    let Some(in_span) = in_span else {
        return Err(Error::invalid(&what, "the input's strides overflow"));
    };
    let out_len: usize = out_shape.iter().product();
    if strides == dense.as_slice() && x.len() != in_span {
        return Err(Error::LengthMismatch { what: format!("{what}: input x"), expected: in_span, actual: x.len() });
    }
    if x.len() < in_span {
        return Err(Error::invalid(&what, format!("the input holds {} elements; its strides span {in_span}", x.len())));
    }
    if y.len() != out_len {
        return Err(Error::LengthMismatch { what: format!("{what}: output y"), expected: out_len, actual: y.len() });
    }
    let path = path::<B, T>(stream, &what)?;
    if out_len == 0 {
        return Ok(());
    }
    let scale = norm.scale(shape.points(), direction);
    if path == Path::Vendor
        && let Some(layout) = plan::whole(kind, T::DTYPE, shape, strides == dense.as_slice())
    {
        if kind == FftKind::C2R {
            // cuFFT's complex-to-real transforms overwrite their input.
            let mut copy = stream.alloc::<I>(x.len())?;
            copy.copy_from(&x)?;
            stream.vendor_fft(&copy, &mut y, &layout, direction)?;
        } else {
            stream.vendor_fft(&x, &mut y, &layout, direction)?;
        }
        return vendor::scale::<B, T, O>(stream, &mut y, scale);
    }
    let Some(steps) = plan::steps(kind, direction, shape, strides, scale) else {
        return Err(Error::invalid(&what, "the input's strides do not fold into two batch dimensions per axis"));
    };
    run_steps::<B, T, I, O>(stream, path, x, y, &steps, &what, scale)
}

/// Run `steps` from `x` to `y` through as many scratch arrays as they use.
fn run_steps<B: Backend, T: FftFloat, I: Element, O: Element>(
    stream: &Stream<B>,
    path: Path,
    x: BufferView<'_, B, I>,
    mut y: BufferViewMut<'_, B, O>,
    steps: &[Step],
    what: &str,
    scale: f64,
) -> Result<()> {
    let complex_len = steps
        .iter()
        .filter(|s| matches!(s.to, Slot::Scratch(_)))
        .map(|s| s.pass.spans().map_or(0, |(_, out)| out))
        .max()
        .unwrap_or(0);
    let scratch_count = steps.iter().filter_map(|s| if let Slot::Scratch(i) = s.to { Some(i + 1) } else { None }).max();
    let mut scratch: Vec<kiln_core::Buffer<B, Complex<T>>> = Vec::new();
    for _ in 0..scratch_count.unwrap_or(0) {
        scratch.push(stream.alloc::<Complex<T>>(complex_len)?);
    }
    // A complex-to-real vendor pass overwrites its input: read a copy of x.
    let mut x_copy = None;
    if path == Path::Vendor && steps.len() == 1 && steps[0].pass.kind == FftKind::C2R {
        let mut copy = stream.alloc::<I>(x.len())?;
        copy.copy_from(&x)?;
        x_copy = Some(copy);
    }
    for step in steps {
        let src: Source<'_, B, I> = match step.from {
            Slot::Input => Source::Input(x_copy.as_ref().map_or(x, |c| c.view())),
            Slot::Output => Source::Output,
            Slot::Scratch(i) => Source::Scratch(i),
        };
        run_step::<B, T, I, O>(stream, path, src, &mut y, &mut scratch, step, what)?;
    }
    if path == Path::Vendor {
        vendor::scale::<B, T, O>(stream, &mut y, scale)?;
    }
    Ok(())
}

/// Where a step reads: the caller's input, the output, or a scratch array.
enum Source<'a, B: Backend, I: Element> {
    Input(BufferView<'a, B, I>),
    Output,
    Scratch(usize),
}

/// One step: its source and destination resolved to views (every step
/// reads and writes distinct arrays), its pass computed on `path`.
fn run_step<B: Backend, T: FftFloat, I: Element, O: Element>(
    stream: &Stream<B>,
    path: Path,
    src: Source<'_, B, I>,
    y: &mut BufferViewMut<'_, B, O>,
    scratch: &mut [kiln_core::Buffer<B, Complex<T>>],
    step: &Step,
    what: &str,
) -> Result<()> {
    let bad = || Error::invalid(what, "a step's source and destination are the same array");
    match (src, step.to) {
        (Source::Input(x), Slot::Output) => one_pass::<B, T, I, O>(stream, path, x, y.slice_mut(..)?, &step.pass),
        (Source::Input(x), Slot::Scratch(i)) => {
            one_pass::<B, T, I, Complex<T>>(stream, path, x, scratch[i].view_mut(), &step.pass)
        }
        (Source::Output, Slot::Scratch(i)) => {
            let y = View::view(&*y);
            one_pass::<B, T, O, Complex<T>>(stream, path, y, scratch[i].view_mut(), &step.pass)
        }
        (Source::Scratch(i), Slot::Output) => {
            one_pass::<B, T, Complex<T>, O>(stream, path, scratch[i].view(), y.slice_mut(..)?, &step.pass)
        }
        (Source::Scratch(i), Slot::Scratch(j)) if i != j => {
            let (lo, hi) = scratch.split_at_mut(i.max(j));
            let (s, d) = if i < j { (&lo[i], &mut hi[0]) } else { (&hi[0], &mut lo[j]) };
            one_pass::<B, T, Complex<T>, Complex<T>>(stream, path, s.view(), d.view_mut(), &step.pass)
        }
        _ => Err(bad()),
    }
}

/// One pass from `src` into `dst` on `path`; the element types are the
/// pass kind's (checked: anything else is an internal error, reported).
fn one_pass<B: Backend, T: FftFloat, I: Element, O: Element>(
    stream: &Stream<B>,
    path: Path,
    src: BufferView<'_, B, I>,
    dst: BufferViewMut<'_, B, O>,
    pass: &AxisPass,
) -> Result<()> {
    let complex = if T::DTYPE == DType::F64 { DType::C128 } else { DType::C64 };
    let want = match pass.kind {
        FftKind::C2C => (complex, complex),
        FftKind::R2C => (T::DTYPE, complex),
        FftKind::C2R => (complex, T::DTYPE),
    };
    let what = || format!("fft pass {:?} of length {}", pass.kind, pass.n);
    if (I::DTYPE, O::DTYPE) != want {
        return Err(Error::invalid(what(), format!("reads {} into {}; the pass wants {want:?}", I::DTYPE, O::DTYPE)));
    }
    let (span_in, span_out) = pass.spans().ok_or_else(|| Error::invalid(what(), "the layout overflows"))?;
    if src.len() < span_in || dst.len() < span_out {
        return Err(Error::invalid(
            what(),
            format!("views of {} and {} elements; it spans {span_in} and {span_out}", src.len(), dst.len()),
        ));
    }
    match path {
        Path::Host => {
            let prog = cpu::program::<T>(pass);
            let kernel = stream.device().kernel(&prog)?;
            let args = kiln_core::Args::new().arg(src).arg(dst);
            // SAFETY: the host program reads src and writes dst inside the
            // spans checked above (it checks them again), and writes each
            // output element from one task only (`cpu::disjoint`, checked).
            unsafe { stream.launch(&kernel, kiln_core::LaunchConfig::new(1u32, 1u32), args) }
        }
        Path::Vendor => vendor::pass::<B, T, I, O>(stream, src, dst, pass),
        Path::Wgsl => wgsl::pass::<B, T, I, O>(stream, src, dst, pass),
    }
}
