//! Copying any layout into row-major order: one generated elementwise
//! kernel per number of dimensions, reading the source at the buffer index
//! each output element's position gives; a transposed matrix goes to kiln's
//! tiled transpose, a contiguous run to a copy.

use std::sync::OnceLock;

use kiln_core::{Args, Backend, Buffer, Element, Error, Parts, Result, Stream};

use super::layout::Layout;
use crate::expr::{Expr, Ty, index, var};
use crate::transpose::transpose;
use crate::user::{Elementwise, ElementwiseKernel};

/// The most dimensions a gather takes after merging; more is an `Err`.
pub const MAX_DIMS: usize = 8;

/// The gather of `d + 1` dimensions: `dst[i] = src[o + sum_k ((i / w_k) % n_k) * s_k]`
/// with the offset `o`, extents `n_k`, strides `s_k` (i32) and the
/// elements `w_k` each step of axis `k` spans as scalars.
fn kernel(dims: usize) -> Result<&'static ElementwiseKernel> {
    static KERNELS: OnceLock<Vec<Result<ElementwiseKernel>>> = OnceLock::new();
    let all = KERNELS.get_or_init(|| (1..=MAX_DIMS).map(build).collect());
    match all.get(dims.wrapping_sub(1)) {
        Some(Ok(k)) => Ok(k),
        Some(Err(e)) => Err(e.clone()),
        None => Err(Error::invalid(
            "array copy",
            format!("{dims} dimensions after merging, past the {MAX_DIMS} kiln takes"),
        )),
    }
}

fn build(dims: usize) -> Result<ElementwiseKernel> {
    let t = Ty::param("T");
    let mut def = Elementwise::new(format!("kiln_array_gather_{dims}")).raw("src", t.clone()).output("dst", t);
    def = def.scalar("o", kiln_core::DType::I32);
    let mut at = var("o");
    for k in 0..dims {
        def = def
            .scalar(&format!("n{k}"), kiln_core::DType::U32)
            .scalar(&format!("s{k}"), kiln_core::DType::I32)
            .scalar(&format!("w{k}"), kiln_core::DType::U32);
        let i: Expr = (index() / var(&format!("w{k}"))) % var(&format!("n{k}"));
        at = at + i.cast(kiln_core::DType::I32) * var(&format!("s{k}"));
    }
    def.set("dst", var("src").at(at)).build()
}

/// `src`'s elements at `layout`, in row-major order, into a new buffer.
pub(crate) fn gather<B: Backend, T: Element>(
    stream: &Stream<B>,
    src: &Buffer<B, T>,
    layout: &Layout,
) -> Result<Buffer<B, T>> {
    let n = layout.len();
    let mut dst = stream.alloc::<T>(n)?;
    if n == 0 {
        return Ok(dst);
    }
    // Complex elements move as their two parts (user kernels take reals).
    let flat = if T::DTYPE.is_complex() { layout.parts()?.collapsed() } else { layout.collapsed() };
    let (lo, hi) = flat.span()?;
    let parts = if T::DTYPE.is_complex() { 2 } else { 1 };
    if hi > src.len() * parts {
        return Err(Error::invalid(
            "array copy",
            format!("the layout reaches element {hi} of a buffer of {}", src.len()),
        ));
    }
    if flat.shape().len() == 1 && flat.strides()[0] == 1 {
        dst.copy_from(&src.slice(lo / parts..hi.div_ceil(parts))?)?;
        return Ok(dst);
    }
    if let ([rows, cols], [1, pitch]) = (flat.shape(), flat.strides())
        && *pitch == *rows as isize
        && parts == 1
    {
        // The transpose of a row-major `cols` x `rows` matrix: kiln's tiled transpose.
        transpose(stream, &src.slice(lo..hi)?, *cols, *rows, &mut dst)?;
        return Ok(dst);
    }
    let limit =
        |what: String| Error::invalid("array copy", format!("{what} is past the 32-bit indices of a strided copy"));
    let o = i32::try_from(flat.offset()).map_err(|_| limit(format!("offset {}", flat.offset())))?;
    if i32::try_from(hi).is_err() {
        return Err(limit(format!("buffer index {hi}")));
    }
    let dims = flat.ndim();
    let k = kernel(dims)?;
    let mut args = Args::new().arg(Parts::new(src.view())).arg(Parts::new(dst.view_mut())).scalar(o);
    let mut w = n * parts;
    for (&extent, &stride) in flat.shape().iter().zip(flat.strides()) {
        w /= extent;
        let s = i32::try_from(stride).map_err(|_| limit(format!("stride {stride}")))?;
        let extent32 = u32::try_from(extent).map_err(|_| limit(format!("extent {extent}")))?;
        let w32 = u32::try_from(w).map_err(|_| limit(format!("a step of {w} elements along an axis")))?;
        args = args.scalar(extent32).scalar(s).scalar(w32);
    }
    k.launch(stream, args)?;
    Ok(dst)
}
