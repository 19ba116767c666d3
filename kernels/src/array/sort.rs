//! Sorting an array along an axis (NumPy's `sort(a, axis)`): each lane
//! along the axis sorted on its own with kiln's radix sort.
//!
//! The axis is moved last and the array copied into row-major order, so the
//! lanes are rows. A few rows are sorted one after another; many short rows
//! are sorted together by two stable sorts: the positions of all the keys by
//! key, then those positions by the row they come from, which leaves each
//! row's positions in key order; one gather writes the keys there.

use std::sync::OnceLock;

use kiln_core::{Args, Backend, Buffer, BufferView, DType, Error, Result, Stream};

use super::Array;
use crate::expr::{Ty, var};
use crate::sort::{SortKey, SortOrder, argsort, sort_into, sort_pairs};
use crate::user::{Elementwise, ElementwiseKernel};

/// Up to this many rows are sorted one after another; more are sorted
/// together (two sorts of every key, whatever the number of rows).
const FEW_ROWS: usize = 16;

impl<B: Backend, T: SortKey> Array<B, T> {
    /// The elements sorted along the last axis (NumPy's `sort` with its
    /// default axis; a 1-d array is sorted whole), in a new array of this
    /// shape: kiln's radix sort, stable, `-0.0` before `0.0`, NaN last
    /// ascending.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// use kiln_kernels::sort::SortOrder;
    /// use ndarray::{array, s};
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let a = Array::from_vec(&s, &[5], &[3.0f32, f32::NAN, -1.0, 2.0, -0.5])?;
    /// assert_eq!(a.slice(s![..;2])?.sort(SortOrder::Descending)?.to_vec()?, [3.0, -0.5, -1.0]);
    /// let m = Array::from_ndarray(&s, &array![[3, 1, 2], [0, -5, 9]])?;
    /// assert_eq!(m.sort(SortOrder::Ascending)?.to_ndarray()?, array![[1, 2, 3], [-5, 0, 9]].into_dyn());
    /// # Ok(()) }
    /// ```
    pub fn sort(&self, order: SortOrder) -> Result<Array<B, T>> {
        match self.ndim() {
            0 => self.to_contiguous(),
            d => self.sort_axis(d - 1, order),
        }
    }

    /// The elements sorted along `axis`, each lane on its own (NumPy's
    /// `sort(a, axis)`), in a new array of this shape; the order within a
    /// lane is [`sort`](Self::sort)'s. `Err` naming the axis for one the
    /// array does not have.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// use kiln_kernels::sort::SortOrder;
    /// use ndarray::array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let m = Array::from_ndarray(&s, &array![[3u32, 1, 2], [0, 5, 1]])?;
    /// assert_eq!(m.sort_axis(0, SortOrder::Ascending)?.to_ndarray()?, array![[0u32, 1, 1], [3, 5, 2]].into_dyn());
    /// assert_eq!(m.sort_axis(1, SortOrder::Descending)?.to_ndarray()?, array![[3u32, 2, 1], [5, 1, 0]].into_dyn());
    /// assert!(m.sort_axis(2, SortOrder::Ascending).is_err()); // a 2-d array
    /// # Ok(()) }
    /// ```
    pub fn sort_axis(&self, axis: usize, order: SortOrder) -> Result<Array<B, T>> {
        let nd = self.ndim();
        if axis >= nd {
            return Err(Error::invalid(
                "Array::sort_axis",
                format!("axis {axis} is out of range for an array of shape {:?}", self.shape()),
            ));
        }
        let mut axes: Vec<usize> = (0..nd).filter(|&a| a != axis).collect();
        axes.push(axis);
        let moved = self.permuted_axes(&axes)?;
        let x = moved.row_major()?;
        let (n, width) = (self.len(), self.shape()[axis]);
        let mut out = self.stream().alloc::<T>(n)?;
        if n > 0 {
            let rows = n / width;
            let keys = x.elements()?;
            if rows <= FEW_ROWS {
                for r in 0..rows {
                    let at = r * width..(r + 1) * width;
                    sort_into(self.stream(), &keys.slice(at.clone())?, &mut out.slice_mut(at)?, order)?;
                }
            } else {
                sort_rows(self.stream(), &keys, width, &mut out, order)?;
            }
        }
        let mut back = vec![0; nd];
        for (i, &a) in axes.iter().enumerate() {
            back[a] = i;
        }
        Array::from_buffer(out, moved.shape())?.permuted_axes(&back)
    }
}

/// `out` = each row of `width` keys of `keys` sorted: the positions sorted
/// by key, then (stably) by row, then the keys gathered at them.
fn sort_rows<B: Backend, T: SortKey>(
    stream: &Stream<B>,
    keys: &BufferView<'_, B, T>,
    width: usize,
    out: &mut Buffer<B, T>,
    order: SortOrder,
) -> Result<()> {
    let n = keys.len();
    let width = u32::try_from(width)
        .map_err(|_| Error::invalid("Array::sort_axis", format!("rows of {width} keys are past u32 positions")))?;
    let mut at = stream.alloc::<u32>(n)?;
    argsort(stream, keys, &mut at, order)?;
    let mut rows = stream.alloc::<u32>(n)?;
    kernel(&ROW_OF, row_of)?.launch(stream, Args::new().arg(&at).arg(&mut rows).scalar(width))?;
    sort_pairs(stream, &mut rows, &mut at, SortOrder::Ascending)?;
    kernel(&TAKE, take)?.launch(stream, Args::new().arg(*keys).arg(&at).arg(out))
}

static ROW_OF: OnceLock<Result<ElementwiseKernel>> = OnceLock::new();
static TAKE: OnceLock<Result<ElementwiseKernel>> = OnceLock::new();

fn kernel(
    cell: &'static OnceLock<Result<ElementwiseKernel>>,
    build: fn() -> Result<ElementwiseKernel>,
) -> Result<&'static ElementwiseKernel> {
    cell.get_or_init(build).as_ref().map_err(Clone::clone)
}

/// `row[i] = at[i] / width`: the row a position lies in.
fn row_of() -> Result<ElementwiseKernel> {
    Elementwise::new("kiln_array_row_of")
        .input("at", DType::U32)
        .output("row", DType::U32)
        .scalar("width", DType::U32)
        .set("row", var("at") / var("width"))
        .build()
}

/// `dst[i] = src[at[i]]`.
fn take() -> Result<ElementwiseKernel> {
    let t = Ty::param("T");
    Elementwise::new("kiln_array_take")
        .raw("src", t.clone())
        .input("at", DType::U32)
        .output("dst", t)
        .set("dst", var("src").at(var("at")))
        .build()
}
