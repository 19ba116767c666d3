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

use std::sync::Arc;

use kiln_core::{
    Args, Backend, BackendKind, Buffer, DType, Element, Error, LaunchConfig, Program, Result, Stream, View, ViewMut,
};

use crate::launch::{cuda_source, program};

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

    const fn code(self) -> u32 {
        self as u32
    }

    const fn from_code(code: u32) -> Border {
        match code {
            0 => Border::Clamp,
            1 => Border::Zero,
            _ => Border::Reflect,
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

/// A convolution filter: `width x height` weights (row-major, odd sides up
/// to [`MAX_FILTER_SIDE`]) and a divisor; the result at a pixel is
/// `sum(weight * pixel) / divisor`.
///
/// # Examples
/// ```
/// use kiln_kernels::image::Filter;
/// let sharpen = Filter::new(3, 3, vec![0.0, -1.0, 0.0, -1.0, 5.0, -1.0, 0.0, -1.0, 0.0], 1.0)?;
/// assert_eq!((sharpen.width(), sharpen.height()), (3, 3));
/// assert!(Filter::new(2, 3, vec![1.0; 6], 1.0).is_err());          // even side
/// assert!(Filter::new(3, 1, vec![1.0, 2.0, 1.0], 0.0).is_err());   // zero divisor
/// # Ok::<(), kiln_core::Error>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    width: usize,
    height: usize,
    weights: Vec<f32>,
    divisor: f32,
}

impl Filter {
    /// A filter of `width x height` `weights` and a `divisor`; `Err` unless
    /// both sides are odd and at most [`MAX_FILTER_SIDE`], there are
    /// `width * height` weights, and weights and divisor are finite (the
    /// divisor non-zero).
    pub fn new(width: usize, height: usize, weights: Vec<f32>, divisor: f32) -> Result<Filter> {
        let what = format!("Filter::new({width} x {height})");
        for side in [width, height] {
            check_side(side, &what)?;
        }
        if weights.len() != width * height {
            return Err(Error::LengthMismatch {
                what: format!("{what}: weights"),
                expected: width * height,
                actual: weights.len(),
            });
        }
        if let Some(i) = weights.iter().position(|w| !w.is_finite()) {
            return Err(Error::invalid(what, format!("weight {i} is {}, not finite", weights[i])));
        }
        if !divisor.is_finite() || divisor == 0.0 {
            return Err(Error::invalid(what, format!("the divisor must be finite and non-zero (got {divisor})")));
        }
        Ok(Filter { width, height, weights, divisor })
    }

    /// The `side x side` mean (weights 1, divisor `side^2`); `Err` unless
    /// `side` is odd and at most [`MAX_FILTER_SIDE`].
    ///
    /// # Examples
    /// ```
    /// use kiln_kernels::image::Filter;
    /// assert_eq!(Filter::box_blur(3)?.divisor(), 9.0);
    /// assert!(Filter::box_blur(4).is_err());
    /// # Ok::<(), kiln_core::Error>(())
    /// ```
    pub fn box_blur(side: usize) -> Result<Filter> {
        check_side(side, &format!("Filter::box_blur({side})"))?;
        Ok(Filter::box_of(side))
    }

    /// The `side x side` binomial approximation of a Gaussian (the outer
    /// product of row `side - 1` of Pascal's triangle with itself, divisor
    /// `4^(side - 1)`); `Err` unless `side` is odd and at most [`MAX_FILTER_SIDE`].
    ///
    /// # Examples
    /// ```
    /// use kiln_kernels::image::Filter;
    /// let f = Filter::gaussian(3)?;
    /// assert_eq!(f.weights(), &[1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0]);
    /// assert_eq!(f.divisor(), 16.0);
    /// assert!(Filter::gaussian(17).is_err());
    /// # Ok::<(), kiln_core::Error>(())
    /// ```
    pub fn gaussian(side: usize) -> Result<Filter> {
        check_side(side, &format!("Filter::gaussian({side})"))?;
        Ok(Filter::binomial(side))
    }

    /// The mean filter of a side already checked.
    fn box_of(side: usize) -> Filter {
        Filter { width: side, height: side, weights: vec![1.0; side * side], divisor: (side * side) as f32 }
    }

    /// The binomial filter of a side already checked.
    fn binomial(side: usize) -> Filter {
        let mut row = vec![1.0f32];
        for _ in 1..side {
            let mut next = vec![1.0f32; row.len() + 1];
            for i in 1..row.len() {
                next[i] = row[i - 1] + row[i];
            }
            row = next;
        }
        let weights = row.iter().flat_map(|a| row.iter().map(move |b| a * b)).collect();
        Filter { width: side, height: side, weights, divisor: 4f32.powi(side as i32 - 1) }
    }

    /// Columns of the filter.
    pub fn width(&self) -> usize {
        self.width
    }

    /// Rows of the filter.
    pub fn height(&self) -> usize {
        self.height
    }

    /// The weights, row-major.
    pub fn weights(&self) -> &[f32] {
        &self.weights
    }

    /// The divisor.
    pub fn divisor(&self) -> f32 {
        self.divisor
    }

    /// The filter's weights uploaded on `stream`, ready for [`convolve`].
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_kernels::image::Filter;
    /// let dev = Device::<kiln_cpu::Cpu>::open(0).unwrap();
    /// let f = Filter::gaussian(5).unwrap().upload(&dev.stream()).unwrap();
    /// assert_eq!(f.filter().width(), 5);
    /// ```
    pub fn upload<B: Backend>(&self, stream: &Stream<B>) -> Result<DeviceFilter<B>> {
        Ok(DeviceFilter { filter: self.clone(), weights: stream.upload(&self.weights)? })
    }
}

/// `Err` unless `side` is a valid filter side: odd, at most [`MAX_FILTER_SIDE`].
fn check_side(side: usize, what: &str) -> Result<()> {
    if side % 2 == 1 && side <= MAX_FILTER_SIDE {
        Ok(())
    } else {
        Err(Error::invalid(what, format!("filter sides must be odd and at most {MAX_FILTER_SIDE} (got {side})")))
    }
}

/// A [`Filter`] with its weights on a device, made once by
/// [`Filter::upload`] and used by any number of [`convolve`] calls.
#[derive(Debug)]
pub struct DeviceFilter<B: Backend> {
    filter: Filter,
    weights: Buffer<B, f32>,
}

impl<B: Backend> DeviceFilter<B> {
    /// The filter.
    pub fn filter(&self) -> &Filter {
        &self.filter
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

/// On WGSL every index must fit in u32 (and a u8 image is indexed by byte).
fn check_wgsl<B: Backend>(count: usize, what: &str) -> Result<()> {
    if B::KIND == BackendKind::Wgpu && count > u32::MAX as usize {
        return Err(Error::unsupported(B::KIND, what, format!("{count} elements exceed WGSL's u32 indices")));
    }
    Ok(())
}

/// Blocks of `tile` covering `n`, capped at `max`.
fn blocks(n: usize, tile: usize, max: u32) -> u32 {
    u32::try_from(n.div_ceil(tile)).unwrap_or(u32::MAX).min(max)
}

/// Threads per block of the 1D kernels (gray, WGSL's convolution).
const BLOCK: u32 = 256;

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
    check_wgsl::<B>(bytes, &what)?;
    let ch = format.channels();
    let name = format!("kiln_gray_{}", format.name());
    let prog = program(&name, || {
        let host = match format {
            PixelFormat::Rgb => cpu::gray::<3>,
            PixelFormat::Rgba => cpu::gray::<4>,
        };
        Program::new(&name)
            .cuda(cuda_source(DType::U8, include_str!("kernel.cu")))
            .wgsl(include_str!("gray.wgsl"))
            .host(host)
            .define("KERNEL", &name)
            .define("GRAY", 1)
            .define("CHANNELS", ch)
    });
    let kernel = stream.device().kernel(&prog)?;
    let max = stream.device().info().limits.max_grid[0];
    // Pixels per thread: WGSL writes whole words; CUDA takes 16 (or 4) pixels
    // per thread where both views start 16- (or 4-) byte aligned, as CUDA
    // allocations themselves are.
    let (in_off, out_off) = (input.view().offset(), output.view().offset());
    let per_thread = match B::KIND {
        BackendKind::Wgpu => 4,
        _ if in_off % 16 == 0 && out_off % 16 == 0 => 16,
        _ if in_off % 4 == 0 && out_off % 4 == 0 => 4,
        _ => 1,
    };
    let config = LaunchConfig::new(blocks(n.div_ceil(per_thread), BLOCK as usize, max), BLOCK);
    let args = Args::new().arg(input.view()).arg(output.view_mut());
    let args = if B::KIND == BackendKind::Wgpu { args.arg(n as u32) } else { args.arg(n as u64) };
    // SAFETY: the kernel reads input[0..n channels) and writes output[0..n)
    // (on WGSL whole words, keeping the bytes past the end), lengths checked above.
    unsafe { stream.launch(&kernel, config, args) }
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
    check_wgsl::<B>(n, &what)?;
    let prog = conv_program::<P>(f.width, f.height);
    let kernel = stream.device().kernel(&prog)?;
    let max = stream.device().info().limits.max_grid;
    let config = match B::KIND {
        BackendKind::Cuda => LaunchConfig::new((blocks(width, 128, max[0]), blocks(height, 32, max[1])), (32, 8)),
        _ => {
            let per_unit = if P::DTYPE == DType::U8 { 4 } else { 1 };
            LaunchConfig::new(blocks(n.div_ceil(per_unit), BLOCK as usize, max[0]), BLOCK)
        }
    };
    let args = Args::new().arg(input.view()).arg(&filter.weights).arg(output.view_mut());
    let args = if B::KIND == BackendKind::Wgpu {
        args.arg(width as u32).arg(height as u32)
    } else {
        args.arg(width as u64).arg(height as u64)
    };
    let args = args.arg(f.width as u32).arg(f.height as u32).arg(border.code()).arg(f.divisor);
    // SAFETY: the kernel reads input[0..n) and the filter's width x height
    // weights and writes output[0..n) (on WGSL whole words, keeping the bytes
    // past the end), with n = width x height, lengths checked above; the
    // program was compiled for this filter's sides.
    unsafe { stream.launch(&kernel, config, args) }
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

fn conv_program<P: Pixel>(fw: usize, fh: usize) -> Arc<Program> {
    let name = format!("kiln_convolve_{fw}x{fh}_{}", P::DTYPE);
    program(&name, || {
        let u8_pixels = P::DTYPE == DType::U8;
        let (pix, per_unit, load, pack) = if u8_pixels {
            (
                "u32",
                "4u",
                "f32((src[i / 4u] >> ((i % 4u) * 8u)) & 255u)",
                "var w = old; for (var e = 0u; e < count; e += 1u) { \
                 w = (w & ~(255u << (8u * e))) | (round_u8(vals[e]) << (8u * e)); } return w;",
            )
        } else {
            ("f32", "1u", "src[i]", "return vals[0];")
        };
        Program::new(&name)
            .cuda(cuda_source(P::DTYPE, include_str!("kernel.cu")))
            .wgsl(include_str!("kernel.wgsl"))
            .host(cpu::convolve::<P>)
            .define("KERNEL", &name)
            .define("GRAY", 0)
            .define("FW", fw)
            .define("FH", fh)
            .define("PIXEL_U8", u8::from(u8_pixels))
            .define("PIX", pix)
            .define("PER_UNIT", per_unit)
            .define("PIXEL_LOAD", load)
            .define("PACK_BODY", pack)
    })
}
