//! Array expressions, built lazily by operators and methods and run as one
//! generated elementwise kernel when [`eval`](ArrayExpr::eval)uated.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use kiln_core::{Args, Backend, Element, Error, Result};

use super::fuse::{Lower, Plan, Term, name};
use super::{Array, broadcast_shapes};
use crate::expr::{BinOp, Expr, UnOp};
use crate::user::{Elementwise, ElementwiseKernel};

/// An elementwise expression of arrays and scalars of `T`, not yet
/// computed: operators on arrays build one, [`eval`](Self::eval) runs it as
/// one generated kernel over the broadcast shape of its arrays (NumPy's
/// rules). Cheap to clone.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::array::{where_, Array};
/// use ndarray::array;
/// # fn main() -> kiln_core::Result<()> {
/// let s = Device::<Cpu>::open(0)?.stream();
/// let a = Array::from_ndarray(&s, &array![[1, 4], [9, 16]])?;
/// let row = Array::from_ndarray(&s, &array![10, 20])?;
/// let z = (&a * 2 + &row - 1).eval()?; // one kernel; row repeats down the rows
/// assert_eq!(z.to_ndarray()?, array![[11, 27], [27, 51]].into_dyn());
/// let capped = where_(a.gt(5), a.t() * 10, &a).eval()?;
/// assert_eq!(capped.to_ndarray()?, array![[1, 4], [40, 160]].into_dyn());
/// # Ok(()) }
/// ```
pub struct ArrayExpr<B: Backend, T: Element> {
    pub(crate) term: Arc<Term<B, T>>,
    pub(crate) shape: std::result::Result<Vec<usize>, Error>,
}

impl<B: Backend, T: Element> Clone for ArrayExpr<B, T> {
    fn clone(&self) -> Self {
        ArrayExpr { term: self.term.clone(), shape: self.shape.clone() }
    }
}

/// A comparison of two array expressions, for [`where_`].
pub struct Mask<B: Backend, T: Element> {
    op: BinOp,
    l: ArrayExpr<B, T>,
    r: ArrayExpr<B, T>,
}

impl<B: Backend, T: Element> Lower<B> for Mask<B, T> {
    fn lower<'a>(&'a self, plan: &mut Plan<'a, B>, full: &[usize], perm: Option<&[usize]>) -> Result<Expr> {
        let l = plan.term(&self.l.term, full, perm)?;
        Ok(l.binary(self.op, plan.term(&self.r.term, full, perm)?))
    }
}

/// The source of a [`cast`](ArrayExpr::cast).
pub(crate) struct CastOf<B: Backend, T: Element>(pub(crate) ArrayExpr<B, T>);

impl<B: Backend, T: Element> Lower<B> for CastOf<B, T> {
    fn lower<'a>(&'a self, plan: &mut Plan<'a, B>, full: &[usize], perm: Option<&[usize]>) -> Result<Expr> {
        plan.term(&self.0.term, full, perm)
    }
}

/// What can stand in an array expression: arrays, expressions, and scalars
/// of the element type.
pub trait IntoExpr<B: Backend, T: Element> {
    /// This value as an expression.
    fn into_expr(self) -> ArrayExpr<B, T>;
}

impl<B: Backend, T: Element> IntoExpr<B, T> for ArrayExpr<B, T> {
    fn into_expr(self) -> ArrayExpr<B, T> {
        self
    }
}

impl<B: Backend, T: Element> IntoExpr<B, T> for &ArrayExpr<B, T> {
    fn into_expr(self) -> ArrayExpr<B, T> {
        self.clone()
    }
}

impl<B: Backend, T: Element> IntoExpr<B, T> for &Array<B, T> {
    fn into_expr(self) -> ArrayExpr<B, T> {
        ArrayExpr { shape: Ok(self.shape().to_vec()), term: Arc::new(Term::Array(self.clone())) }
    }
}

impl<B: Backend, T: Element> IntoExpr<B, T> for Array<B, T> {
    fn into_expr(self) -> ArrayExpr<B, T> {
        (&self).into_expr()
    }
}

macro_rules! scalar_expr {
    ($($t:ty),*) => {$(
        impl<B: Backend> IntoExpr<B, $t> for $t {
            fn into_expr(self) -> ArrayExpr<B, $t> {
                ArrayExpr::scalar(self)
            }
        }
    )*};
}
scalar_expr!(i32, u32, i64, u64, f32, f64, kiln_core::f16, kiln_core::bf16);

fn joined<B: Backend, T: Element>(a: &ArrayExpr<B, T>, b: &ArrayExpr<B, T>) -> std::result::Result<Vec<usize>, Error> {
    broadcast_shapes(a.shape.as_ref().map_err(Clone::clone)?, b.shape.as_ref().map_err(Clone::clone)?)
}

/// `t` for backend `C`, where it holds no array.
fn rebind<B: Backend, C: Backend, T: Element>(t: &Term<B, T>) -> Option<Arc<Term<C, T>>> {
    Some(Arc::new(match t {
        Term::Array(_) => return None,
        Term::Scalar(v) => Term::Scalar(*v),
        Term::Un(op, a) => Term::Un(*op, rebind(a)?),
        Term::Bin(op, a, b) => Term::Bin(*op, rebind(a)?, rebind(b)?),
        // Their parts are of other element types, which this cannot name.
        Term::Where(..) | Term::Cast(_) => return None,
    }))
}

impl<B: Backend, T: Element> ArrayExpr<B, T> {
    /// A scalar as an expression (broadcast to every element), for code
    /// generic over the element type.
    pub fn scalar(value: T) -> Self {
        ArrayExpr { shape: Ok(Vec::new()), term: Arc::new(Term::Scalar(value)) }
    }

    /// An expression that fails with `error` when it is run or combined
    /// (how a caller that cannot return a `Result` hands an error on: the
    /// run-time tier's operators between arrays of two backends).
    pub fn failed(error: Error) -> Self {
        ArrayExpr { shape: Err(error), term: Arc::new(Term::Scalar(T::default())) }
    }

    /// `op` applied to each element: the operator and method forms
    /// (`-x`, [`sqrt`](Self::sqrt), ...) are this with their [`UnOp`].
    pub fn unary(self, op: UnOp) -> Self {
        ArrayExpr { shape: self.shape, term: Arc::new(Term::Un(op, self.term)) }
    }

    /// `op` between this and `other`, broadcast together: the operator and
    /// method forms (`x + y`, [`pow`](Self::pow), ...) are this with their
    /// [`BinOp`]. A comparison gives a mask, not a `T`: through `binary`
    /// it is an `Err` when the expression runs; use [`compare`](Self::compare).
    pub fn binary(self, op: BinOp, other: impl IntoExpr<B, T>) -> Self {
        let other = other.into_expr();
        ArrayExpr { shape: joined(&self, &other), term: Arc::new(Term::Bin(op, self.term, other.term)) }
    }

    /// The mask where `self op other` holds, for [`where_`]: the forms
    /// [`lt`](Self::lt), [`ge`](Self::ge), ... are this with their [`BinOp`].
    pub fn compare(self, op: BinOp, other: impl IntoExpr<B, T>) -> Mask<B, T> {
        Mask { op, l: self, r: other.into_expr() }
    }

    /// The same expression for backend `C`, where it holds scalars only
    /// (`None` where it reads an array, which belongs to `B`'s device, or
    /// holds a `where_` or a cast).
    ///
    /// # Examples
    /// ```
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::ArrayExpr;
    /// let two = ArrayExpr::<Cpu, f32>::scalar(1.0) + 1.0;
    /// assert!(two.rebind::<Cpu>().is_some());
    /// ```
    pub fn rebind<C: Backend>(&self) -> Option<ArrayExpr<C, T>> {
        Some(ArrayExpr { shape: self.shape.clone(), term: rebind(&self.term)? })
    }

    /// The array, where the expression is an array alone.
    pub(crate) fn as_array(&self) -> Option<&Array<B, T>> {
        match &*self.term {
            Term::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The value, where the expression is a scalar alone.
    pub(crate) fn as_scalar(&self) -> Option<T> {
        match *self.term {
            Term::Scalar(v) => Some(v),
            _ => None,
        }
    }

    /// The expression computed at `shape`, which its own shape broadcasts to
    /// (the caller has checked).
    pub(crate) fn broadcast(self, shape: Vec<usize>) -> Self {
        ArrayExpr { shape: Ok(shape), term: self.term }
    }

    /// The shape the expression computes (its arrays' broadcast shape), or
    /// the broadcasting error naming both shapes.
    pub fn shape(&self) -> Result<&[usize]> {
        self.shape.as_deref().map_err(Clone::clone)
    }
}

crate::array_operations!([B: Backend, T: Element] ArrayExpr<B, T>, Array<B, T>, Mask<B, T>, IntoExpr<B, T>);

impl<B: Backend, T: Element> Array<B, T> {
    /// This array as the start of an expression.
    pub fn expr(&self) -> ArrayExpr<B, T> {
        self.into_expr()
    }
}

/// `a` where `mask` holds, else `b` (NumPy's `where`), all broadcast
/// together. For values of another element type than the mask's, see
/// [`Mask::select`].
pub fn where_<B: Backend, T: Element>(
    mask: Mask<B, T>,
    a: impl IntoExpr<B, T>,
    b: impl IntoExpr<B, T>,
) -> ArrayExpr<B, T> {
    mask.select(a, b)
}

impl<B: Backend, M: Element> Mask<B, M> {
    /// `a` where the mask holds, else `b`, all broadcast together: [`where_`]
    /// with values of any element type.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let labels = Array::from_vec(&s, &[4], &[1u32, 0, 2, 1])?;
    /// let x = Array::from_vec(&s, &[4], &[0.5f64, 1.5, 2.5, 3.5])?;
    /// assert_eq!(labels.eq_to(1).select(&x, 0.0).sum()?, 4.0); // u32 mask, f64 values
    /// # Ok(()) }
    /// ```
    pub fn select<T: Element>(self, a: impl IntoExpr<B, T>, b: impl IntoExpr<B, T>) -> ArrayExpr<B, T> {
        let (a, b) = (a.into_expr(), b.into_expr());
        let shape = joined(&self.l, &self.r).and_then(|m| {
            let ab = joined(&a, &b)?;
            broadcast_shapes(&m, &ab)
        });
        ArrayExpr { shape, term: Arc::new(Term::Where(Arc::new(self), a.term, b.term)) }
    }
}

impl<B: Backend, T: Element> ArrayExpr<B, T> {
    /// Compute the expression into a new row-major array, with one
    /// generated kernel (cached: a loop does not recompile). `Err` where
    /// the arrays do not broadcast together (naming both shapes), where
    /// there is no array to give a device, or a strided operand reaches
    /// past the i32 indices of a strided read.
    pub fn eval(&self) -> Result<Array<B, T>> {
        static KERNELS: OnceLock<Mutex<HashMap<String, ElementwiseKernel>>> = OnceLock::new();
        let plan = Plan::new(&self.term, self.shape()?, None)?;
        let stream = plan.stream();
        let n: usize = plan.shape.iter().product();
        let mut out = stream.alloc::<T>(n)?;
        // Launched at any size: an empty one still checks the device has the types.
        let key = format!("{} {}", T::DTYPE, plan.key());
        let k = crate::memo::cached(KERNELS.get_or_init(Default::default), key.clone(), || {
            let def = plan.declare(Elementwise::new(name("kiln_array", &key)), false);
            def.output("out", T::DTYPE).set("out", plan.body.clone()).build()
        })?;
        k.launch(&stream, plan.args(Args::new(), None)?.arg(&mut out))?;
        Array::from_buffer(out, &plan.shape)
    }

    /// Compute the expression converted to `U` (NumPy's `astype`, fused
    /// into the same kernel), with kiln's conversions: integers wrap, floats
    /// to integers truncate and saturate (NaN giving 0), integers to floats
    /// round to nearest.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let a = Array::from_vec(&s, &[4], &[-1.5f64, 2.7, 1e20, f64::NAN])?;
    /// assert_eq!(a.expr().astype::<i32>()?.to_vec()?, [-1, 2, i32::MAX, 0]);
    /// assert_eq!((&a * 2.0).astype::<f32>()?.to_vec()?[..3], [-3.0f32, 5.4, 2e20]);
    /// # Ok(()) }
    /// ```
    pub fn astype<U: Element>(&self) -> Result<Array<B, U>> {
        self.clone().cast::<U>().eval()
    }
}
