//! Reductions of array expressions, over every element or along axes: the
//! expression is the reduction's map, so its producer runs in the same
//! pass (one kernel for the whole array, kiln's reduction plans).

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use kiln_core::{Args, Backend, DType, Element, Error, Result};

use super::Array;
use super::fuse::{Plan, name};
use super::lazy::ArrayExpr;
use crate::expr::{Expr, Ty, len, var};
use crate::user::{Reduction, ReductionKernel};
use crate::widen::is_half;

/// How a reduction combines elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Fold {
    /// The sum (0 for no elements).
    Sum,
    /// The product (1 for no elements).
    Prod,
    /// The smallest value, NaN ignored (an `Err` for no elements).
    Min,
    /// The largest value, NaN ignored (an `Err` for no elements).
    Max,
    /// The sum divided by the count (floats; NaN for no elements).
    Mean,
}

/// `T`'s largest (`high`) or smallest value: infinities for floats.
fn extreme<T: Element>(high: bool) -> Option<T> {
    let bits: u64 = match (T::DTYPE, high) {
        (DType::F32, true) => u64::from(f32::INFINITY.to_bits()),
        (DType::F32, false) => u64::from(f32::NEG_INFINITY.to_bits()),
        (DType::F64, true) => f64::INFINITY.to_bits(),
        (DType::F64, false) => f64::NEG_INFINITY.to_bits(),
        (DType::I32, true) => i32::MAX as u32 as u64,
        (DType::I32, false) => i32::MIN as u32 as u64,
        (DType::U32, true) => u64::from(u32::MAX),
        (DType::I64, true) => i64::MAX as u64,
        (DType::I64, false) => i64::MIN as u64,
        (DType::U64, true) => u64::MAX,
        (DType::U32 | DType::U64, false) => 0,
        _ => return None,
    };
    bytemuck::try_pod_read_unaligned(&bits.to_le_bytes()[..size_of::<T>()]).ok()
}

impl Fold {
    fn parts<T: Element>(self) -> Result<(Expr, Expr)> {
        let a = || var("a");
        let bad = || Error::invalid(format!("array {self:?}"), format!("kiln has no {self:?} of {}", T::DTYPE));
        Ok(match self {
            Fold::Sum | Fold::Mean => (a() + var("b"), Expr::from(0)),
            Fold::Prod => (a() * var("b"), Expr::from(1)),
            Fold::Min => (a().min(var("b")), Expr::constant(extreme::<T>(true).ok_or_else(bad)?)),
            Fold::Max => (a().max(var("b")), Expr::constant(extreme::<T>(false).ok_or_else(bad)?)),
        })
    }

    fn check<T: Element>(self, n: usize) -> Result<()> {
        let what = || format!("array {self:?}");
        if self == Fold::Mean && !T::DTYPE.is_float() {
            return Err(Error::invalid(what(), format!("the mean of {} is not an {}", T::DTYPE, T::DTYPE)));
        }
        if n == 0 && matches!(self, Fold::Min | Fold::Max) {
            return Err(Error::invalid(what(), "an empty array has no smallest or largest value"));
        }
        Ok(())
    }
}

/// The reduction whose map is `plan`'s body.
fn kernel<B: Backend, T: Element>(plan: &Plan<'_, B>, fold: Fold) -> Result<ReductionKernel> {
    static KERNELS: OnceLock<Mutex<HashMap<String, ReductionKernel>>> = OnceLock::new();
    // The identity is a constant of T: one kernel per dtype.
    let key = format!("{fold:?} {} {} {}", T::DTYPE, plan.needs_count(), plan.key());
    // The 16-bit floats accumulate in f32 and round once, in the post-map.
    let half = is_half(T::DTYPE);
    let (combine, identity) = if half { fold.parts::<f32>()? } else { fold.parts::<T>()? };
    crate::memo::cached(KERNELS.get_or_init(Default::default), key.clone(), || {
        let t = Ty::from(T::DTYPE);
        let acc = if half { Ty::from(DType::F32) } else { t.clone() };
        let def = plan.declare(Reduction::new(name("kiln_array_fold", &key), acc.clone()), plan.needs_count());
        let body = if half { plan.body.clone().cast(acc.clone()) } else { plan.body.clone() };
        let def = def.map(body).reduce(combine).identity(identity);
        let def = match fold {
            Fold::Mean if half => def.post(t.clone(), (var("a") / len().cast(acc)).cast(t)),
            Fold::Mean => def.post(t.clone(), var("a") / len().cast(t)),
            _ if half => def.post(t.clone(), var("a").cast(t)),
            _ => def,
        };
        def.build()
    })
}

/// A reduction of some axes of a shape as rows of lanes: the kept axes
/// walked first, the reduced ones last (`perm`), one result per row.
pub(crate) struct Lanes {
    /// The axes in walking order: kept, then reduced.
    pub(crate) perm: Vec<usize>,
    /// The result's shape (the kept axes').
    pub(crate) shape: Vec<usize>,
    /// Results: the product of `shape`.
    pub(crate) rows: usize,
    /// Elements per lane: the product of the reduced extents.
    pub(crate) cols: usize,
}

impl Lanes {
    /// `full` reduced along `axes` (each once, any order); `Err` naming
    /// `what`, the axes and the shape for an axis out of range or repeated.
    pub(crate) fn of(full: &[usize], axes: &[usize], what: &str) -> Result<Lanes> {
        let mut seen = vec![false; full.len()];
        for &a in axes {
            if a >= full.len() || std::mem::replace(&mut seen[a], true) {
                return Err(Error::invalid(
                    format!("{what} along axes {axes:?} of shape {full:?}"),
                    format!("axis {a} is out of range or repeated"),
                ));
            }
        }
        let kept: Vec<usize> = (0..full.len()).filter(|&d| !seen[d]).collect();
        let shape: Vec<usize> = kept.iter().map(|&d| full[d]).collect();
        Ok(Lanes {
            perm: kept.iter().chain(axes).copied().collect(),
            rows: shape.iter().product(),
            cols: axes.iter().map(|&d| full[d]).product(),
            shape,
        })
    }
}

/// The zeroed element-count input of a plan that reads nothing in order.
pub(crate) fn count<B: Backend>(plan: &Plan<'_, B>, n: usize) -> Result<Option<kiln_core::Buffer<B, u32>>> {
    plan.needs_count().then(|| plan.stream().alloc_zeroed::<u32>(n)).transpose()
}

impl<B: Backend, T: Element> ArrayExpr<B, T> {
    /// Fold every element with `fold` and return the result; the expression
    /// is computed in the same pass. Blocks until the value is on the host.
    pub fn fold(&self, fold: Fold) -> Result<T> {
        let plan = Plan::new(&self.term, self.shape()?, None)?;
        let n: usize = plan.shape.iter().product();
        fold.check::<T>(n)?;
        let stream = plan.stream();
        let count = count(&plan, n)?;
        kernel::<B, T>(&plan, fold)?.reduce(&stream, plan.args(Args::new(), count.as_ref())?)
    }

    /// Fold along `axes` (each once, in any order), giving an array of the
    /// other axes' shape; the expression is computed in the same pass.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::{Array, Fold};
    /// use ndarray::array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let a = Array::from_ndarray(&s, &array![[1.0f64, 2.0, 3.0], [4.0, 5.0, 6.0]])?;
    /// // Column means of the squares: the squares are never stored.
    /// let m = (&a * &a).fold_axes(Fold::Mean, &[0])?;
    /// assert_eq!(m.to_vec()?, [8.5, 14.5, 22.5]);
    /// assert_eq!((&a - 3.5).fold_axes(Fold::Max, &[1])?.to_vec()?, [-0.5, 2.5]);
    /// # Ok(()) }
    /// ```
    pub fn fold_axes(&self, fold: Fold, axes: &[usize]) -> Result<Array<B, T>> {
        let lanes = Lanes::of(self.shape()?, axes, &format!("array {fold:?}"))?;
        fold.check::<T>(lanes.cols)?;
        let plan = Plan::new(&self.term, self.shape()?, Some(&lanes.perm))?;
        let stream = plan.stream();
        let mut out = stream.alloc::<T>(lanes.rows)?;
        if lanes.rows > 0 {
            let count = count(&plan, lanes.rows * lanes.cols)?;
            let args = plan.args(Args::new(), count.as_ref())?;
            kernel::<B, T>(&plan, fold)?.reduce_axis(&stream, args, lanes.rows, lanes.cols, 1, &mut out)?;
        }
        Array::from_buffer(out, &lanes.shape)
    }

    /// The sum of every element.
    pub fn sum(&self) -> Result<T> {
        self.fold(Fold::Sum)
    }

    /// The mean of every element (floats).
    pub fn mean(&self) -> Result<T> {
        self.fold(Fold::Mean)
    }

    /// The smallest element, NaN ignored.
    pub fn min(&self) -> Result<T> {
        self.fold(Fold::Min)
    }

    /// The largest element, NaN ignored.
    pub fn max(&self) -> Result<T> {
        self.fold(Fold::Max)
    }

    /// The product of every element.
    pub fn prod(&self) -> Result<T> {
        self.fold(Fold::Prod)
    }
}

impl<B: Backend, T: Element> Array<B, T> {
    /// Fold every element with `fold` (see [`ArrayExpr::fold`]).
    pub fn fold(&self, fold: Fold) -> Result<T> {
        self.expr().fold(fold)
    }

    /// Fold along `axes` (see [`ArrayExpr::fold_axes`]).
    pub fn fold_axes(&self, fold: Fold, axes: &[usize]) -> Result<Array<B, T>> {
        self.expr().fold_axes(fold, axes)
    }

    /// The sum of every element.
    pub fn sum(&self) -> Result<T> {
        self.expr().sum()
    }

    /// The mean of every element (floats).
    pub fn mean(&self) -> Result<T> {
        self.expr().mean()
    }

    /// The smallest element, NaN ignored.
    pub fn min(&self) -> Result<T> {
        self.expr().min()
    }

    /// The largest element, NaN ignored.
    pub fn max(&self) -> Result<T> {
        self.expr().max()
    }

    /// The product of every element.
    pub fn prod(&self) -> Result<T> {
        self.expr().prod()
    }
}

impl<B: Backend, T: crate::Number> ArrayExpr<B, T> {
    /// The variance of every element (floats): the mean of the squared
    /// distances from the mean, in two passes as NumPy's `var` (ddof 0).
    pub fn var(&self) -> Result<T> {
        let m = self.mean()?;
        let d = self.clone() - ArrayExpr::scalar(m);
        (d.clone() * d).mean()
    }

    /// The standard deviation of every element (floats): the root of [`var`](Self::var).
    pub fn std(&self) -> Result<T> {
        Ok(self.var()?.sqrt())
    }

    /// The variance along `axes` (floats), as NumPy's `var(axis=...)`: the
    /// means along `axes`, broadcast back, then the mean of the squared
    /// distances; two passes.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// use ndarray::array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let a = Array::from_ndarray(&s, &array![[1.0f64, 2.0], [3.0, 6.0]])?;
    /// assert_eq!(a.expr().var_axes(&[0])?.to_vec()?, [1.0, 4.0]);
    /// assert_eq!(a.expr().std_axes(&[1])?.to_vec()?, [0.5, 1.5]);
    /// assert_eq!(a.expr().var()?, 3.5);
    /// # Ok(()) }
    /// ```
    pub fn var_axes(&self, axes: &[usize]) -> Result<Array<B, T>> {
        let mut m = self.fold_axes(Fold::Mean, axes)?;
        let mut sorted = axes.to_vec();
        sorted.sort_unstable();
        for &a in &sorted {
            m = m.insert_axis(a)?;
        }
        let d = self.clone() - &m;
        (d.clone() * d).fold_axes(Fold::Mean, axes)
    }

    /// The standard deviation along `axes` (floats): the root of [`var_axes`](Self::var_axes).
    pub fn std_axes(&self, axes: &[usize]) -> Result<Array<B, T>> {
        self.var_axes(axes)?.sqrt().eval()
    }
}
