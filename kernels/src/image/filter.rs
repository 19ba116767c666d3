//! Convolution filters: their weights on the host, and on a device.

use kiln_core::{Backend, Buffer, Error, Result, Stream};

use super::MAX_FILTER_SIDE;

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
    pub(super) width: usize,
    pub(super) height: usize,
    weights: Vec<f32>,
    pub(super) divisor: f32,
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
    pub(super) fn box_of(side: usize) -> Filter {
        Filter { width: side, height: side, weights: vec![1.0; side * side], divisor: (side * side) as f32 }
    }

    /// The binomial filter of a side already checked.
    pub(super) fn binomial(side: usize) -> Filter {
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

    /// The filter's weights uploaded on `stream`, ready for [`convolve`](super::convolve).
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
/// [`Filter::upload`] and used by any number of [`convolve`](super::convolve) calls.
#[derive(Debug)]
pub struct DeviceFilter<B: Backend> {
    pub(super) filter: Filter,
    pub(super) weights: Buffer<B, f32>,
}

impl<B: Backend> DeviceFilter<B> {
    /// The filter.
    pub fn filter(&self) -> &Filter {
        &self.filter
    }
}
