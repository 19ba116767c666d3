//! Folds along one axis of a row-major 2D array (NumPy's `x.sum(axis=0)`).
//!
//! Axis 1 (one result per row): one warp per row, its lanes striding the
//! row. Axis 0 (one result per column): blocks of 32 columns x 8 row
//! stripes, each warp reading 32 adjacent columns of a row; tall arrays are
//! cut into chunks of rows along the grid's y so they fill the device, and
//! the chunks' results (a shorter array) are folded again until one row is
//! left. One row or one column is a whole-array fold or a copy.

use std::sync::Arc;

use kiln_core::{
    Args, Backend, Buffer, BufferView, BufferViewMut, Device, Error, Language, LaunchConfig, Program, Result, Stream,
    View, ViewMut,
};

use super::{ReduceOp, check_empty, check_reducible, cpu, fold_into, half, reduce_cuda, wgsl_is_nan};
use crate::Number;
use crate::code::Code;
use crate::launch::{Access, BLOCK, index_width, program, wgsl_source};
use crate::widen::{check_widened, is_half};

/// Rows a chunk holds at least, so each thread folds several before its block writes.
const MIN_ROWS_PER_CHUNK: usize = 64;
/// Blocks (column tiles x row chunks) an axis-0 pass aims for, per compute unit.
const BLOCKS_PER_UNIT: usize = 8;

fn axis_program<T: Number>(op: ReduceOp, axis: usize) -> Arc<Program> {
    let kind = if axis == 1 { "rows" } else { "cols" };
    let name = format!("kiln_reduce_{kind}_{op}_{}", T::DTYPE);
    program(&name, || {
        let body = format!("{}{}", wgsl_is_nan(T::DTYPE), include_str!("axis.wgsl"));
        let host: kiln_core::HostFn = match (op, axis) {
            (ReduceOp::Sum, 1) => cpu::fold_rows::<T, 0>,
            (ReduceOp::Product, 1) => cpu::fold_rows::<T, 1>,
            (ReduceOp::Min, 1) => cpu::fold_rows::<T, 2>,
            (ReduceOp::Max, 1) => cpu::fold_rows::<T, 3>,
            (ReduceOp::Sum, _) => cpu::fold_cols::<T, 0>,
            (ReduceOp::Product, _) => cpu::fold_cols::<T, 1>,
            (ReduceOp::Min, _) => cpu::fold_cols::<T, 2>,
            (ReduceOp::Max, _) => cpu::fold_cols::<T, 3>,
        };
        Program::new(&name)
            .cuda(reduce_cuda(T::DTYPE))
            .wgsl(wgsl_source(T::DTYPE, &[("src", Access::Read), ("dst", Access::ReadWrite)], &body))
            .host(host)
            .define("KERNEL", &name)
            .define(if axis == 1 { "fold_rows" } else { "fold_cols" }, &name)
            .define("MODE", if axis == 1 { 4 } else { 5 })
            .define("OP", op.code())
            .define("FOLD", op.wgsl())
    })
}

/// Fold the row-major `rows` x `cols` array `x` along `axis` by `op`, on
/// `stream`, into `out`: axis 0 gives `cols` results (one per column), axis
/// 1 gives `rows` results (one per row). Returns at once.
///
/// `x.len()` must be `rows * cols` and `out.len()` the number of results.
/// Folding an empty axis gives the identity for sum and product and is
/// `Err(InvalidArgument)` for min and max. Semantics as for
/// [`reduce`](super::reduce) (wrapping integers, NaN propagation).
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::reduce::{reduce_axis, ReduceOp};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[1i32, 2, 3,
///                    4, 5, 6])?;               // 2 rows x 3 columns
/// let mut per_column = s.alloc::<i32>(3)?;
/// reduce_axis(&s, ReduceOp::Sum, &x, 2, 3, 0, &mut per_column)?;
/// assert_eq!(per_column.to_vec()?, vec![5, 7, 9]);
/// let mut per_row = s.alloc::<i32>(2)?;
/// reduce_axis(&s, ReduceOp::Max, &x, 2, 3, 1, &mut per_row)?;
/// assert_eq!(per_row.to_vec()?, vec![3, 6]);
/// assert!(reduce_axis(&s, ReduceOp::Max, &x, 2, 3, 2, &mut per_row).is_err());
/// # Ok(()) }
/// ```
pub fn reduce_axis<B: Backend, T: Number>(
    stream: &Stream<B>,
    op: ReduceOp,
    x: &impl View<B, T>,
    rows: usize,
    cols: usize,
    axis: usize,
    out: &mut impl ViewMut<B, T>,
) -> Result<()> {
    let what = format!("reduce_axis {op} along axis {axis} of {rows} x {cols}");
    check_reducible::<B, T>(&what)?;
    if axis > 1 {
        return Err(Error::invalid(what, "a 2D array has axes 0 (down the columns) and 1 (along the rows)"));
    }
    let x = x.view();
    let total =
        rows.checked_mul(cols).ok_or_else(|| Error::invalid(&what, "rows x cols overflows the address space"))?;
    if x.len() != total {
        return Err(Error::LengthMismatch {
            what: format!("{what}: x (rows x cols)"),
            expected: total,
            actual: x.len(),
        });
    }
    let (results, folded) = if axis == 0 { (cols, rows) } else { (rows, cols) };
    let out_len = out.view().len();
    if out_len != results {
        return Err(Error::LengthMismatch { what: format!("{what}: output"), expected: results, actual: out_len });
    }
    if results == 0 {
        return Ok(());
    }
    check_empty(op, folded, &what)?;
    check_widened(stream, T::DTYPE, &what)?;
    match (folded, results) {
        (0, _) => stream.fill(out, op.identity::<T>()),
        (1, _) => stream.copy(&x, out),
        _ if is_half(T::DTYPE) => half::fold_axis(stream, op, x, (rows, cols, axis), out.view_mut()),
        (_, 1) => fold_into(stream, op, x, out.view_mut()),
        _ if axis == 1 => fold_rows(stream, op, x, rows, cols, out.view_mut()),
        _ => fold_cols(stream, op, x, rows, cols, out.view_mut()),
    }
}

fn fold_rows<B: Backend, T: Number>(
    stream: &Stream<B>,
    op: ReduceOp,
    x: BufferView<'_, B, T>,
    rows: usize,
    cols: usize,
    out: BufferViewMut<'_, B, T>,
) -> Result<()> {
    let kernel = stream.device().kernel(&axis_program::<T>(op, 1))?;
    let info = stream.device().info();
    // Rows a block folds: on CUDA one per warp (the device's warp width);
    // WGSL's workgroups are 8 rows of 32 invocations whatever the subgroup
    // size (axis.wgsl); the host fn ignores the grid.
    let lanes = if B::LANGUAGE == Language::Cuda { info.limits.warp_size.max(1) } else { 32 };
    let rows_per_block = (BLOCK / lanes).max(1) as usize;
    let max_grid = info.limits.max_grid[0] as usize;
    let blocks = rows.div_ceil(rows_per_block).clamp(1, max_grid);
    let args = Args::new().arg(x).arg(out).scalar(op.identity::<T>());
    let (width, name) = (index_width(stream), kernel.name());
    let args = args.length(width, rows, name)?.length(width, cols, name)?.length(width, 0, name)?;
    // SAFETY: the kernel reads x[0..rows * cols), x's length, and writes
    // out[0..rows), out's length (both checked by the caller).
    unsafe { stream.launch(&kernel, LaunchConfig::new(blocks as u32, BLOCK), args) }
}

/// Rows per chunk for an axis-0 pass over `rows` x `cols`: enough chunks
/// that column tiles x chunks fill the device, none under
/// [`MIN_ROWS_PER_CHUNK`] rows, at most 65535 (the grid's y limit). A host
/// fn folds every row in one launch.
fn rows_per_chunk<B: Backend>(device: &Device<B>, rows: usize, cols: usize) -> usize {
    if B::LANGUAGE.runs_whole_launch() {
        return rows.max(1);
    }
    let info = device.info();
    let target = (info.compute_units as usize).max(1) * BLOCKS_PER_UNIT;
    let most = rows.div_ceil(MIN_ROWS_PER_CHUNK).min(info.limits.max_grid[1] as usize).max(1);
    let chunks = target.div_ceil(cols.div_ceil(32)).clamp(1, most);
    rows.div_ceil(chunks).max(1)
}

fn fold_cols<B: Backend, T: Number>(
    stream: &Stream<B>,
    op: ReduceOp,
    x: BufferView<'_, B, T>,
    rows: usize,
    cols: usize,
    mut out: BufferViewMut<'_, B, T>,
) -> Result<()> {
    let kernel = stream.device().kernel(&axis_program::<T>(op, 0))?;
    let identity = op.identity::<T>();
    let max_grid = stream.device().info().limits.max_grid[0] as usize;
    let tiles = cols.div_ceil(32).clamp(1, max_grid) as u32;
    // Each pass folds chunks of rows into one row per chunk, until one is left.
    let mut partial: Option<Buffer<B, T>> = None;
    let mut rows = rows;
    loop {
        let per_chunk = rows_per_chunk(stream.device(), rows, cols);
        let chunks = rows.div_ceil(per_chunk);
        let src = partial.as_ref().map_or(x, |p| p.view());
        let mut next = if chunks > 1 { Some(stream.alloc::<T>(chunks * cols)?) } else { None };
        let dst = match next.as_mut() {
            Some(b) => b.view_mut(),
            None => out.view_mut(),
        };
        let name = kernel.name();
        let args = Args::new().arg(src).arg(dst).scalar(identity);
        let width = index_width(stream);
        let args = args.length(width, rows, name)?.length(width, cols, name)?.length(width, per_chunk, name)?;
        let config = LaunchConfig::new((tiles, chunks as u32), (32, 8));
        // SAFETY: the kernel reads src[0..rows * cols), src's length, and writes
        // dst[0..chunks * cols), dst's length (`cols` when one chunk is left).
        unsafe { stream.launch(&kernel, config, args)? };
        match next {
            Some(b) => {
                partial = Some(b);
                rows = chunks;
            }
            None => return Ok(()),
        }
    }
}
