//! image: RGB and RGBA to gray, and small 2D convolutions with border modes
//! (box and Gaussian blurs, or any filter of odd sides up to
//! [`MAX_FILTER_SIDE`]), on u8 and f32 images of any size.
//!
//! Images are row-major, `width` pixels per row, one value per pixel (gray)
//! or `channels` interleaved bytes per pixel (RGB, RGBA). A convolution
//! computes `sum(weight * pixel) / divisor` over the filter's window, summed
//! in f32 in the filter's raster order; u8 results are rounded half up and
//! clamped to [0, 255]. With integer weights (every built-in blur) the sums
//! are exact, so u8 results are identical on every backend.

mod cpu;
mod filter;
#[cfg(target_arch = "x86_64")]
mod gray_x86;
mod launch;
mod plan;
mod program;

use kiln_core::{Backend, Element, Error, Result, Stream, View, ViewMut};

use crate::launch::index_width;
pub use filter::{DeviceFilter, Filter};

/// Largest filter side [`Filter::new`] accepts.
pub const MAX_FILTER_SIDE: usize = 15;

/// The interleaved byte layout of a color image.
///
/// # Examples
/// ```
/// use kiln_kernels::image::PixelFormat;
/// assert_eq!(PixelFormat::Rgba.channels(), 4);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PixelFormat {
    /// 3 bytes per pixel: red, green, blue.
    Rgb,
    /// 4 bytes per pixel: red, green, blue, alpha (alpha is ignored).
    Rgba,
}

impl PixelFormat {
    /// Bytes per pixel.
    pub const fn channels(self) -> usize {
        match self {
            PixelFormat::Rgb => 3,
            PixelFormat::Rgba => 4,
        }
    }

    /// Lower-case name ("rgb").
    pub const fn name(self) -> &'static str {
        match self {
            PixelFormat::Rgb => "rgb",
            PixelFormat::Rgba => "rgba",
        }
    }
}

/// What a filter sees outside the image.
///
/// # Examples
/// ```
/// use kiln_kernels::image::Border;
/// assert_eq!(Border::default(), Border::Clamp);
/// assert_eq!(Border::Reflect.to_string(), "reflect");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Border {
    /// The nearest edge pixel (`a a | a b c | c c`).
    #[default]
    Clamp,
    /// Zero (`0 0 | a b c | 0 0`).
    Zero,
    /// The image mirrored about its edge, edge pixel included
    /// (`b a | a b c | c b`, SciPy's "reflect"); periodic, so any filter
    /// works on any image, even one narrower than the filter.
    Reflect,
}

crate::code::codes!(Border, "border", "border mode");

impl Border {
    /// Every border mode.
    pub const ALL: [Border; 3] = [Border::Clamp, Border::Zero, Border::Reflect];

    /// Lower-case name ("clamp").
    pub const fn name(self) -> &'static str {
        match self {
            Border::Clamp => "clamp",
            Border::Zero => "zero",
            Border::Reflect => "reflect",
        }
    }
}

impl std::fmt::Display for Border {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The source index of coordinate `i` on an axis of `n` pixels under
/// `border`, or `None` for a pixel that reads as zero.
///
/// # Examples
/// ```
/// use kiln_kernels::image::{border_index, Border};
/// assert_eq!(border_index(-2, 5, Border::Clamp), Some(0));
/// assert_eq!(border_index(5, 5, Border::Zero), None);
/// assert_eq!(border_index(-1, 5, Border::Reflect), Some(0));
/// assert_eq!(border_index(-2, 5, Border::Reflect), Some(1));
/// assert_eq!(border_index(3, 1, Border::Reflect), Some(0));
/// ```
pub fn border_index(i: i64, n: i64, border: Border) -> Option<usize> {
    if (0..n).contains(&i) {
        return Some(i as usize);
    }
    match border {
        Border::Clamp => Some(if i < 0 { 0 } else { (n - 1) as usize }),
        Border::Zero => None,
        Border::Reflect => {
            let period = 2 * n;
            let r = i.rem_euclid(period);
            Some(if r < n { r } else { period - 1 - r } as usize)
        }
    }
}

/// The built-in blurs.
///
/// # Examples
/// ```
/// use kiln_kernels::image::Blur;
/// let f = Blur::Gaussian5.filter();
/// assert_eq!((f.width(), f.divisor()), (5, 256.0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Blur {
    /// 3 x 3 mean.
    Box3,
    /// 5 x 5 mean.
    Box5,
    /// 3 x 3 Gaussian (binomial `[1 2 1]` outer product, / 16).
    Gaussian3,
    /// 5 x 5 Gaussian (binomial `[1 4 6 4 1]` outer product, / 256).
    Gaussian5,
}

impl Blur {
    /// Every blur.
    pub const ALL: [Blur; 4] = [Blur::Box3, Blur::Box5, Blur::Gaussian3, Blur::Gaussian5];

    /// Lower-case name ("box3").
    pub const fn name(self) -> &'static str {
        match self {
            Blur::Box3 => "box3",
            Blur::Box5 => "box5",
            Blur::Gaussian3 => "gaussian3",
            Blur::Gaussian5 => "gaussian5",
        }
    }

    /// The blur as a filter.
    pub fn filter(self) -> Filter {
        match self {
            Blur::Box3 => Filter::box_of(3),
            Blur::Box5 => Filter::box_of(5),
            Blur::Gaussian3 => Filter::binomial(3),
            Blur::Gaussian5 => Filter::binomial(5),
        }
    }
}

impl std::fmt::Display for Blur {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A pixel type of the convolutions: `u8` and `f32`.
///
/// # Examples
/// ```
/// use kiln_kernels::image::Pixel;
/// assert_eq!(u8::from_f32(2.5), 3);      // rounded half up
/// assert_eq!(u8::from_f32(300.0), 255);  // clamped
/// assert_eq!(<f32 as Pixel>::from_f32(2.5), 2.5);
/// ```
pub trait Pixel: Element + sealed::Sealed {
    /// The pixel as f32.
    fn to_f32(self) -> f32;
    /// A result as a pixel: for u8, `floor(v + 0.5)` clamped to [0, 255].
    fn from_f32(v: f32) -> Self;
}

impl sealed::Sealed for u8 {}
impl Pixel for u8 {
    fn to_f32(self) -> f32 {
        self as f32
    }
    fn from_f32(v: f32) -> u8 {
        // `as` saturates (NaN to 0), matching the GPUs' fmin/fmax clamp.
        (v + 0.5).floor().clamp(0.0, 255.0) as u8
    }
}

impl sealed::Sealed for f32 {}
impl Pixel for f32 {
    fn to_f32(self) -> f32 {
        self
    }
    fn from_f32(v: f32) -> f32 {
        v
    }
}

/// `width * height`, or why it is not a valid image size.
fn pixels(width: usize, height: usize, what: &str) -> Result<usize> {
    width.checked_mul(height).ok_or_else(|| Error::invalid(what, "width x height overflows the address space"))
}

fn check_len(what: &str, name: &str, expected: usize, actual: usize) -> Result<()> {
    if expected == actual {
        Ok(())
    } else {
        Err(Error::LengthMismatch { what: format!("{what}: {name}"), expected, actual })
    }
}

/// `Err(Unsupported)` when the device's kernels cannot index `count`
/// elements (a u8 image is indexed by byte).
fn check_indices<B: Backend>(stream: &Stream<B>, count: usize, what: &str) -> Result<()> {
    index_width(stream).check::<B>(count as u64, what)
}

/// `output[p] = gray(input[p])` for each of the `width * height` pixels of
/// an RGB or RGBA `input`, on `stream`: `(299 r + 587 g + 114 b) / 1000`,
/// truncated (the seed's weights in exact integer arithmetic).
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_kernels::image::{gray, PixelFormat};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<kiln_cpu::Cpu>::open(0)?;
/// let s = dev.stream();
/// let rgb = s.upload(&[255u8, 255, 255, 255, 0, 0])?;   // white, red: 2 x 1
/// let mut g = s.alloc::<u8>(2)?;
/// gray(&s, PixelFormat::Rgb, &rgb, 2, 1, &mut g)?;
/// assert_eq!(g.to_vec()?, vec![255, 76]);
/// # Ok(()) }
/// ```
pub fn gray<B: Backend>(
    stream: &Stream<B>,
    format: PixelFormat,
    input: &impl View<B, u8>,
    width: usize,
    height: usize,
    output: &mut impl ViewMut<B, u8>,
) -> Result<()> {
    let what = format!("gray of a {width} x {height} {} image", format.name());
    let n = pixels(width, height, &what)?;
    let bytes = n
        .checked_mul(format.channels())
        .ok_or_else(|| Error::invalid(what.clone(), "the image overflows the address space"))?;
    check_len(&what, "input", bytes, input.view().len())?;
    check_len(&what, "output", n, output.view().len())?;
    if n == 0 {
        return Ok(());
    }
    check_indices(stream, bytes, &what)?;
    launch::gray(stream, format, input, n, output)
}

/// `output = input * filter` (a 2D convolution, `sum(weight * pixel) /
/// divisor` over the filter's window centred on each pixel) for a
/// `width x height` image, with `border` outside it, on `stream`.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_kernels::image::{convolve, Border, Filter};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<kiln_cpu::Cpu>::open(0)?;
/// let s = dev.stream();
/// let img = s.upload(&[0.0f32, 3.0, 6.0])?;                       // 3 x 1
/// let diff = Filter::new(3, 1, vec![-1.0, 0.0, 1.0], 2.0)?.upload(&s)?;
/// let mut out = s.alloc::<f32>(3)?;
/// convolve(&s, &img, 3, 1, &diff, Border::Clamp, &mut out)?;
/// assert_eq!(out.to_vec()?, vec![1.5, 3.0, 1.5]);
/// convolve(&s, &img, 3, 1, &diff, Border::Zero, &mut out)?;
/// assert_eq!(out.to_vec()?, vec![1.5, 3.0, -1.5]);
/// # Ok(()) }
/// ```
pub fn convolve<B: Backend, P: Pixel>(
    stream: &Stream<B>,
    input: &impl View<B, P>,
    width: usize,
    height: usize,
    filter: &DeviceFilter<B>,
    border: Border,
    output: &mut impl ViewMut<B, P>,
) -> Result<()> {
    let f = &filter.filter;
    let what = format!("{} x {} convolution ({border}) of a {width} x {height} {} image", f.width, f.height, P::DTYPE);
    let n = pixels(width, height, &what)?;
    check_len(&what, "input", n, input.view().len())?;
    check_len(&what, "output", n, output.view().len())?;
    if n == 0 {
        return Ok(());
    }
    check_indices(stream, n, &what)?;
    launch::convolve(stream, input, width, height, filter, border, output)
}

/// A built-in blur of a `width x height` image, on `stream`: [`convolve`]
/// with [`Blur::filter`], uploaded for this call (keep a [`DeviceFilter`]
/// to blur many images without the upload).
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_kernels::image::{blur, Blur, Border};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<kiln_cpu::Cpu>::open(0)?;
/// let s = dev.stream();
/// let img = s.upload(&[0u8, 0, 0, 0, 90, 0, 0, 0, 0])?;          // 3 x 3
/// let mut out = s.alloc::<u8>(9)?;
/// blur(&s, Blur::Box3, &img, 3, 3, Border::Zero, &mut out)?;
/// assert_eq!(out.to_vec()?, vec![10; 9]);
/// # Ok(()) }
/// ```
pub fn blur<B: Backend, P: Pixel>(
    stream: &Stream<B>,
    kind: Blur,
    input: &impl View<B, P>,
    width: usize,
    height: usize,
    border: Border,
    output: &mut impl ViewMut<B, P>,
) -> Result<()> {
    let filter = kind.filter().upload(stream)?;
    convolve(stream, input, width, height, &filter, border, output)
}
