//! Image filters: gray conversion, blurs and convolution (see [`kiln_kernels::image`]).

use kiln_core::{BackendKind, Result};

use super::{dispatch, on, on_mut};
use crate::runtime::{Stream, View, ViewMut};
use crate::runtime::{backend_list, describe, mismatch};

pub use kiln_kernels::image::{Blur, Border, Filter, MAX_FILTER_SIDE, Pixel, PixelFormat, border_index};

kiln_kernels::entry_points!(crate::kernels::forward::forward, image);

/// The weights of a [`DeviceFilter`] on each backend, and the bridge from
/// a backend type to its arm.
macro_rules! weights {
    (() $($(#[$attr:meta])* $variant:ident($backend:path),)*) => {
        /// A typed `kiln_kernels::image::DeviceFilter`, one arm per backend.
        enum Weights {
            $( $(#[$attr])* $variant(kiln_kernels::image::DeviceFilter<$backend>), )*
        }

        /// A backend's arm of [`Weights`].
        trait WeightsOf: kiln_core::Backend {
            fn wrap(filter: kiln_kernels::image::DeviceFilter<Self>) -> Weights;
            fn pick(weights: &Weights) -> Option<&kiln_kernels::image::DeviceFilter<Self>>;
        }

        $(
            $(#[$attr])*
            impl WeightsOf for $backend {
                fn wrap(filter: kiln_kernels::image::DeviceFilter<Self>) -> Weights {
                    Weights::$variant(filter)
                }
                fn pick(weights: &Weights) -> Option<&kiln_kernels::image::DeviceFilter<Self>> {
                    #[allow(unreachable_patterns)]
                    match weights {
                        Weights::$variant(filter) => Some(filter),
                        _ => None,
                    }
                }
            }
        )*
    };
}
backend_list!(weights!());

/// A [`Filter`] with its weights on a device, made once by [`upload`] and
/// used by any number of [`convolve`] calls on that device.
pub struct DeviceFilter {
    inner: Weights,
    filter: Filter,
    kind: BackendKind,
    device: String,
}

impl DeviceFilter {
    /// The filter.
    pub fn filter(&self) -> &Filter {
        &self.filter
    }
}

impl std::fmt::Debug for DeviceFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceFilter({}x{} on {})", self.filter.width(), self.filter.height(), self.device)
    }
}

/// `filter`'s weights uploaded on `stream`, ready for [`convolve`].
pub fn upload(stream: &Stream, filter: &Filter) -> Result<DeviceFilter> {
    dispatch!(stream, Stream, s => Ok(DeviceFilter {
        inner: <B as WeightsOf>::wrap(filter.upload(s)?),
        filter: filter.clone(),
        kind: <B as kiln_core::Backend>::KIND,
        device: describe(s.device()),
    }))
}

/// `output` = `input` (`width x height` pixels) convolved with `filter`,
/// edges handled by `border`.
///
/// # Examples
/// ```
/// use kiln::kernels::image::{convolve, upload, Border, Filter};
/// # fn main() -> kiln::Result<()> {
/// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
/// let s = dev.stream();
/// let f = upload(&s, &Filter::box_blur(3)?)?;
/// let img = s.upload(&[9.0f32; 16])?;
/// let mut out = s.alloc::<f32>(16)?;
/// convolve(&s, &img, 4, 4, &f, Border::Clamp, &mut out)?;
/// assert!(out.to_vec()?.iter().all(|&v| (v - 9.0).abs() < 1e-5));
/// # Ok(()) }
/// ```
#[allow(clippy::too_many_arguments)]
pub fn convolve<P: Pixel>(
    stream: &Stream,
    input: &impl View<P>,
    width: usize,
    height: usize,
    filter: &DeviceFilter,
    border: Border,
    output: &mut impl ViewMut<P>,
) -> Result<()> {
    let (input, output) = (input.view(), output.view_mut());
    dispatch!(stream, Stream, s => {
        let Some(typed) = <B as WeightsOf>::pick(&filter.inner) else {
            return Err(mismatch(
                "convolve: filter",
                describe(s.device()),
                format!("{} ({})", filter.device, filter.kind),
            ));
        };
        kiln_kernels::image::convolve(
            s,
            &on("convolve: input", s, input)?,
            width,
            height,
            typed,
            border,
            &mut on_mut("convolve: output", s, output)?,
        )
    })
}
