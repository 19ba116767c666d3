//! The fold and dot launches, with their SAFETY notes.

use kiln_core::{Args, Backend, BufferView, BufferViewMut, Kernel, LaunchConfig, Result, Stream};

use super::ReduceOp;
use super::plan::{first_pass_blocks, partial_blocks};
use super::program::{dot_program, fold_program};
use crate::Number;
use crate::launch::{BLOCK, index_width};

/// One launch of a fold kernel: `blocks` partials of `x` into `out`.
fn launch_fold<B: Backend, T: Number>(
    stream: &Stream<B>,
    kernel: &Kernel<B>,
    x: BufferView<'_, B, T>,
    out: BufferViewMut<'_, B, T>,
    identity: T,
) -> Result<()> {
    let (n, blocks) = (x.len(), out.len());
    let args = Args::new().arg(x).arg(out).scalar(identity).length(index_width(stream), n, kernel.name())?;
    // SAFETY: the kernel reads x[0..n) and writes out[0..blocks), one
    // element per block of the grid, `blocks` being out's length.
    unsafe { stream.launch(kernel, LaunchConfig::new(blocks as u32, BLOCK), args) }
}

/// Fold `x` into `out[0]` (length 1): one pass into per-block partials, and
/// a one-block pass over those when there is more than one.
pub(crate) fn fold_into<B: Backend, T: Number>(
    stream: &Stream<B>,
    op: ReduceOp,
    x: BufferView<'_, B, T>,
    out: BufferViewMut<'_, B, T>,
) -> Result<()> {
    let identity = op.identity::<T>();
    let kernel = stream.device().kernel(&fold_program::<T>(op))?;
    match partial_blocks(stream.device(), x.len(), T::DTYPE) {
        1 => launch_fold(stream, &kernel, x, out, identity),
        blocks => {
            let mut partials = stream.alloc::<T>(blocks)?;
            launch_fold(stream, &kernel, x, partials.view_mut(), identity)?;
            launch_fold(stream, &kernel, partials.view(), out, identity)
        }
    }
}

/// `sum(x[i] * y[i])` into `out[0]` (length 1; `x` and `y` of one length,
/// at least 1): products into per-block partials, and a one-block sum over
/// those when there is more than one.
pub(super) fn dot_into<B: Backend, T: Number>(
    stream: &Stream<B>,
    x: BufferView<'_, B, T>,
    y: BufferView<'_, B, T>,
    out: BufferViewMut<'_, B, T>,
) -> Result<()> {
    let kernel = stream.device().kernel(&dot_program::<T>())?;
    let blocks = first_pass_blocks(stream.device(), x.len(), T::DTYPE);
    if blocks == 1 {
        return launch_dot(stream, &kernel, x, y, out);
    }
    let mut partials = stream.alloc::<T>(blocks)?;
    launch_dot(stream, &kernel, x, y, partials.view_mut())?;
    let sum = stream.device().kernel(&fold_program::<T>(ReduceOp::Sum))?;
    launch_fold(stream, &sum, partials.view(), out, T::from_index(0))
}

fn launch_dot<B: Backend, T: Number>(
    stream: &Stream<B>,
    kernel: &Kernel<B>,
    x: BufferView<'_, B, T>,
    y: BufferView<'_, B, T>,
    out: BufferViewMut<'_, B, T>,
) -> Result<()> {
    let (n, blocks) = (x.len(), out.len());
    let args = Args::new().arg(x).arg(y).arg(out).length(index_width(stream), n, kernel.name())?;
    // SAFETY: the kernel reads x[0..n) and y[0..n) (equal lengths, checked by
    // the caller) and writes out[0..blocks), one element per block.
    unsafe { stream.launch(kernel, LaunchConfig::new(blocks as u32, BLOCK), args) }
}
