//! The one data-movement kernel the factorisations need beside the vendor
//! routines: a masked, strided copy of a batch of matrices. It moves
//! matrices between NumPy's row-major order and LAPACK's column-major one,
//! takes a triangle (zeros elsewhere), cuts a block out of a larger
//! matrix, reads a diagonal, and writes identities.

use std::sync::OnceLock;

use kiln_core::{Args, Backend, BufferView, BufferViewMut, Error, Result, Stream};

use super::{LinalgFloat, MatrixShape};
use crate::expr::{Expr, Ty, index, select, var};
use crate::user::{Elementwise, ElementwiseKernel};

/// Where a [`copy`] reads element `(b, i, j)` of its output: at
/// `b * batch + i * row + j * col` of the source, where the [`Mask`] keeps
/// the element (it writes 0 elsewhere).
#[derive(Debug, Clone, Copy)]
pub(super) struct Strides {
    pub(super) batch: usize,
    pub(super) row: usize,
    pub(super) col: usize,
}

impl Strides {
    /// The source is row-major of the output's shape (a plain copy).
    pub(super) fn row_major(shape: MatrixShape) -> Self {
        Strides { batch: shape.matrix_len(), row: shape.cols, col: 1 }
    }

    /// The source is column-major of the output's shape, matrices of
    /// `batch` elements apart (a transpose of each matrix).
    pub(super) fn col_major(rows: usize, batch: usize) -> Self {
        Strides { batch, row: 1, col: rows }
    }
}

/// Which elements a [`copy`] keeps: `lo <= j - i <= hi`, `i < rows`,
/// `j < cols`; the others are 0.
#[derive(Debug, Clone, Copy)]
pub(super) struct Mask {
    pub(super) lo: i64,
    pub(super) hi: i64,
    pub(super) rows: usize,
    pub(super) cols: usize,
}

impl Mask {
    /// Every element.
    pub(super) const ALL: Mask = Mask { lo: i32::MIN as i64, hi: i32::MAX as i64, rows: usize::MAX, cols: usize::MAX };
    /// On and above the diagonal.
    pub(super) const UPPER: Mask = Mask { lo: 0, ..Mask::ALL };
    /// On and below the diagonal.
    pub(super) const LOWER: Mask = Mask { hi: 0, ..Mask::ALL };
}

fn kernel() -> Result<&'static ElementwiseKernel> {
    static K: OnceLock<Result<ElementwiseKernel>> = OnceLock::new();
    K.get_or_init(build).as_ref().map_err(Clone::clone)
}

fn build() -> Result<ElementwiseKernel> {
    let t = Ty::param("T");
    let i32t = kiln_core::DType::I32;
    let u32t = kiln_core::DType::U32;
    let mut def = Elementwise::new("kiln_linalg_masked_copy").raw("src", t.clone()).output("dst", t.clone());
    for (name, ty) in [
        ("rows", u32t),
        ("cols", u32t),
        ("sb", i32t),
        ("si", i32t),
        ("sj", i32t),
        ("lo", i32t),
        ("hi", i32t),
        ("ilim", u32t),
        ("jlim", u32t),
    ] {
        def = def.scalar(name, ty);
    }
    let j: Expr = index() % var("cols");
    let i: Expr = (index() / var("cols")) % var("rows");
    let b: Expr = index() / (var("cols") * var("rows"));
    let at = b.cast(i32t) * var("sb") + i.clone().cast(i32t) * var("si") + j.clone().cast(i32t) * var("sj");
    let d: Expr = j.clone().cast(i32t) - i.clone().cast(i32t);
    let zero = Expr::constant(0i32).cast(t);
    let keep = select(
        d.clone().ge(var("lo")),
        select(d.le(var("hi")), select(i.lt(var("ilim")), j.lt(var("jlim")).cast(i32t), 0), 0),
        0,
    );
    def.set("dst", select(keep.eq(1), var("src").at(at), zero)).build()
}

/// A limit of the kernel's 32-bit indices.
fn narrow<N: TryFrom<usize>>(v: usize, name: &str) -> Result<N> {
    N::try_from(v).map_err(|_| {
        Error::invalid("linalg masked copy", format!("{name} = {v} is past the 32-bit indices of the kernel"))
    })
}

fn clamp(v: i64) -> i32 {
    v.clamp(i32::MIN as i64, i32::MAX as i64) as i32
}

/// `dst` (dense, `shape`) from `src` read at `strides`, masked by `mask`.
pub(super) fn copy<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    src: BufferView<'_, B, T>,
    dst: BufferViewMut<'_, B, T>,
    shape: MatrixShape,
    strides: Strides,
    mask: Mask,
) -> Result<()> {
    if shape.is_empty() {
        return Ok(());
    }
    if dst.len() < shape.len() {
        return Err(Error::invalid("linalg masked copy", format!("{} elements for {shape}", dst.len())));
    }
    narrow::<i32>(shape.len(), "the batch's elements")?;
    narrow::<i32>(src.len(), "the source's elements")?;
    let args = Args::new()
        .arg(src)
        .arg(dst)
        .scalar(narrow::<u32>(shape.rows, "rows")?)
        .scalar(narrow::<u32>(shape.cols, "cols")?)
        .scalar(narrow::<i32>(strides.batch, "the batch stride")?)
        .scalar(narrow::<i32>(strides.row, "the row stride")?)
        .scalar(narrow::<i32>(strides.col, "the column stride")?)
        .scalar(clamp(mask.lo))
        .scalar(clamp(mask.hi))
        .scalar(mask.rows.min(u32::MAX as usize) as u32)
        .scalar(mask.cols.min(u32::MAX as usize) as u32);
    kernel()?.launch(stream, args)
}

/// Identity matrices (their leading `shape.cols` columns) into `dst`,
/// made on the device (nothing uploaded).
pub(super) fn identity<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    mut dst: BufferViewMut<'_, B, T>,
    shape: MatrixShape,
) -> Result<()> {
    static K: OnceLock<Result<ElementwiseKernel>> = OnceLock::new();
    if shape.is_empty() {
        return Ok(());
    }
    if dst.len() < shape.len() {
        return Err(Error::invalid("linalg identity", format!("{} elements for {shape}", dst.len())));
    }
    let k = K
        .get_or_init(|| {
            let t = Ty::param("T");
            let u32t = kiln_core::DType::U32;
            let j: Expr = index() % var("cols");
            let i: Expr = (index() / var("cols")) % var("rows");
            let one = Expr::constant(1i32).cast(t.clone());
            let zero = Expr::constant(0i32).cast(t.clone());
            Elementwise::new("kiln_linalg_identity")
                .output("dst", t)
                .scalar("rows", u32t)
                .scalar("cols", u32t)
                .set("dst", select(i.eq(j), one, zero))
                .build()
        })
        .as_ref()
        .map_err(Clone::clone)?;
    let args = Args::new()
        .arg(dst.slice_mut(..shape.len())?)
        .scalar(narrow::<u32>(shape.rows, "rows")?)
        .scalar(narrow::<u32>(shape.cols, "cols")?);
    k.launch(stream, args)
}

/// `src`'s matrices transposed: `src` holds `shape.batch` matrices of
/// `shape.cols` x `shape.rows` (row-major), `dst` their transposes.
pub(super) fn transpose<B: Backend, T: LinalgFloat>(
    stream: &Stream<B>,
    src: BufferView<'_, B, T>,
    dst: BufferViewMut<'_, B, T>,
    shape: MatrixShape,
) -> Result<()> {
    copy(stream, src, dst, shape, Strides::col_major(shape.rows, shape.matrix_len()), Mask::ALL)
}

/// LAPACK's 1-based pivots, `src`, as 0-based ones into `dst`.
pub(super) fn zero_based<B: Backend>(
    stream: &Stream<B>,
    src: BufferView<'_, B, i32>,
    dst: BufferViewMut<'_, B, i32>,
) -> Result<()> {
    static K: OnceLock<Result<ElementwiseKernel>> = OnceLock::new();
    let k = K
        .get_or_init(|| {
            let i32t = kiln_core::DType::I32;
            Elementwise::new("kiln_linalg_zero_based").input("p", i32t).output("q", i32t).set("q", var("p") - 1).build()
        })
        .as_ref()
        .map_err(Clone::clone)?;
    k.launch(stream, Args::new().arg(src).arg(dst))
}
