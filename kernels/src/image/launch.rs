//! The image kernels' launches, with their SAFETY notes. The callers have
//! checked every length and the pixel count against the device's indices.

use kiln_core::{Args, Backend, Result, Stream, View, ViewMut};

use super::filter::DeviceFilter;
use super::plan::{conv_config, gray_config, wgsl_tiled};
use super::program::{conv_program, gray_program};
use super::{Border, Pixel, PixelFormat};
use crate::code::Code;
use crate::launch::index_width;

/// Gray of the `n` pixels of `input` (n x channels bytes) into `output` (n bytes).
pub(super) fn gray<B: Backend>(
    stream: &Stream<B>,
    format: PixelFormat,
    input: &impl View<B, u8>,
    n: usize,
    output: &mut impl ViewMut<B, u8>,
) -> Result<()> {
    let prog = gray_program(format);
    let kernel = stream.device().kernel(&prog)?;
    let config = gray_config(stream.device(), n, input.view().offset(), output.view().offset());
    let args = Args::new().arg(input.view()).arg(output.view_mut());
    let args = args.length(index_width(stream), n, prog.name())?;
    // SAFETY: the kernel reads input[0..n channels) and writes output[0..n)
    // (on WGSL whole words, keeping the bytes past the end), lengths checked
    // by the caller.
    unsafe { stream.launch(&kernel, config, args) }
}

/// The convolution of the `width` x `height` image `input` into `output`.
pub(super) fn convolve<B: Backend, P: Pixel>(
    stream: &Stream<B>,
    input: &impl View<B, P>,
    width: usize,
    height: usize,
    filter: &DeviceFilter<B>,
    border: Border,
    output: &mut impl ViewMut<B, P>,
) -> Result<()> {
    let f = &filter.filter;
    let tiled = wgsl_tiled(stream.device(), f.width, f.height, P::DTYPE);
    let prog = conv_program::<P>(f.width, f.height, tiled);
    let kernel = stream.device().kernel(&prog)?;
    let config = conv_config(stream.device(), width, height, P::DTYPE, tiled);
    let index = index_width(stream);
    let args = Args::new().arg(input.view()).arg(&filter.weights).arg(output.view_mut());
    let args = args.length(index, width, prog.name())?.length(index, height, prog.name())?;
    let args = args.arg(f.width as u32).arg(f.height as u32).arg(border.code()).arg(f.divisor);
    // SAFETY: the kernel reads input[0..n) and the filter's width x height
    // weights and writes output[0..n) (on WGSL whole words, keeping the bytes
    // past the end), with n = width x height, lengths checked by the caller;
    // the program was compiled for this filter's sides.
    unsafe { stream.launch(&kernel, config, args) }
}
