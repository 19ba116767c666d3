//! `argmin` and `argmax`, of every element or along one axis: the extreme
//! value by [`Fold`]'s reduction, then the first position holding it by a
//! second reduction (a `min` of positions) over the same stored values.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use kiln_core::{Args, Backend, DType, Element, Error, Result};

use super::fuse::{Plan, name};
use super::lazy::ArrayExpr;
use super::reduce::{Lanes, count};
use super::{Array, Fold};
use crate::expr::{Expr, index, select, var};
use crate::user::{Reduction, ReductionKernel};

/// The second pass: per lane of `cols`, the first position whose value
/// equals the lane's extreme (`kx_m`), 0 where none does (a lane of NaN).
fn kernel<B: Backend, T: Element>(plan: &Plan<'_, B>) -> Result<ReductionKernel> {
    static KERNELS: OnceLock<Mutex<HashMap<String, ReductionKernel>>> = OnceLock::new();
    let key = format!("arg {} {} {}", T::DTYPE, plan.needs_count(), plan.key());
    crate::memo::cached(KERNELS.get_or_init(Default::default), key.clone(), || {
        let none = || Expr::constant(u32::MAX);
        let cols = || var("kx_cols");
        let def = plan.declare(Reduction::new(name("kiln_array_arg", &key), DType::U32), plan.needs_count());
        let hit = plan.body.clone().eq(var("kx_m").at(index() / cols()));
        def.raw("kx_m", T::DTYPE)
            .scalar("kx_cols", DType::U32)
            .map(select(hit, index() % cols(), none()))
            .reduce(var("a").min(var("b")))
            .identity(none())
            .post(DType::U32, select(var("a").eq(none()), Expr::constant(0u32), var("a")))
            .build()
    })
}

impl<B: Backend, T: Element> ArrayExpr<B, T> {
    /// Positions of the extreme along `axes` (all, or one), as `u32`.
    fn arg(&self, fold: Fold, axis: Option<usize>) -> Result<Array<B, u32>> {
        let what = || format!("array arg{}", if fold == Fold::Max { "max" } else { "min" });
        // Both passes read the same stored values: an expression is
        // computed once first (a second computation could round apart).
        let values = match self.as_array() {
            Some(a) => a.clone(),
            None => self.eval()?,
        };
        let shape = values.shape();
        let axes: Vec<usize> = match axis {
            None => (0..shape.len()).collect(),
            Some(a) => vec![a],
        };
        let lanes = Lanes::of(shape, &axes, &what())?;
        if lanes.cols == 0 {
            return Err(Error::invalid(what(), format!("shape {shape:?} has no elements to choose from")));
        }
        let cols32 = u32::try_from(lanes.cols).map_err(|_| {
            Error::invalid(what(), format!("{} positions are past the u32 positions it gives", lanes.cols))
        })?;
        let extreme = values.expr().fold_axes(fold, &axes)?;
        let stream = values.stream().clone();
        let mut out = stream.alloc::<u32>(lanes.rows)?;
        if lanes.rows > 0 {
            let expr = values.expr();
            let plan = Plan::new(&expr.term, expr.shape()?, Some(&lanes.perm))?;
            let count = count(&plan, lanes.rows * lanes.cols)?;
            let args = plan.args(Args::new(), count.as_ref())?.arg(extreme.buffer()).scalar(cols32);
            kernel::<B, T>(&plan)?.reduce_axis(&stream, args, lanes.rows, lanes.cols, 1, &mut out)?;
        }
        Array::from_buffer(out, &lanes.shape)
    }

    /// The row-major position of the largest value (the first, where it
    /// repeats; NaN passed over as by [`Fold::Max`], 0 where every value is
    /// NaN); `Err` for no elements. Blocks until the position is on the host.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// use ndarray::array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let a = Array::from_ndarray(&s, &array![[3.0f32, 9.0, 9.0], [f32::NAN, -1.0, 4.0]])?;
    /// assert_eq!(a.argmax()?, 1);
    /// assert_eq!((-&a).argmax()?, 4); // of an expression
    /// assert_eq!(a.argmin_axis(1)?.to_vec()?, [0, 1]);
    /// assert_eq!(a.argmax_axis(0)?.to_vec()?, [0, 0, 0]);
    /// # Ok(()) }
    /// ```
    pub fn argmax(&self) -> Result<usize> {
        Ok(self.arg(Fold::Max, None)?.to_vec()?[0] as usize)
    }

    /// The row-major position of the smallest value (as [`argmax`](Self::argmax)).
    pub fn argmin(&self) -> Result<usize> {
        Ok(self.arg(Fold::Min, None)?.to_vec()?[0] as usize)
    }

    /// The position along `axis` of the largest value of each lane, an
    /// array of the other axes' shape (as [`argmax`](Self::argmax)).
    pub fn argmax_axis(&self, axis: usize) -> Result<Array<B, u32>> {
        self.arg(Fold::Max, Some(axis))
    }

    /// The position along `axis` of the smallest value of each lane.
    pub fn argmin_axis(&self, axis: usize) -> Result<Array<B, u32>> {
        self.arg(Fold::Min, Some(axis))
    }
}

impl<B: Backend, T: Element> Array<B, T> {
    /// See [`ArrayExpr::argmax`].
    pub fn argmax(&self) -> Result<usize> {
        self.expr().argmax()
    }

    /// See [`ArrayExpr::argmin`].
    pub fn argmin(&self) -> Result<usize> {
        self.expr().argmin()
    }

    /// See [`ArrayExpr::argmax_axis`].
    pub fn argmax_axis(&self, axis: usize) -> Result<Array<B, u32>> {
        self.expr().argmax_axis(axis)
    }

    /// See [`ArrayExpr::argmin_axis`].
    pub fn argmin_axis(&self, axis: usize) -> Result<Array<B, u32>> {
        self.expr().argmin_axis(axis)
    }
}
