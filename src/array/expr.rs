//! [`ArrayExpr`] on the run-time tier: the typed expression of one backend,
//! or one of scalars alone that takes the backend of the arrays it meets.

use kiln_core::{Backend, Element, Error, Result};
use kiln_cpu::Cpu;
use kiln_kernels::array::{ArrayExpr as Typed, Promote};
use kiln_kernels::expr::{BinOp, UnOp};

use super::Array;
use crate::runtime::{ExprArm, ExprTier, Tier, dispatch};

/// An elementwise expression of arrays and scalars of `T` on a device of
/// any backend, not yet computed: operators on [`Array`]s build one,
/// [`eval`](Self::eval) runs it as one generated kernel (see the typed
/// [`ArrayExpr`](kiln_kernels::array::ArrayExpr)). Cheap to clone.
///
/// # Examples
/// ```
/// use kiln::array::Array;
/// # fn main() -> kiln::Result<()> {
/// let s = kiln::Device::open(kiln::BackendKind::Cpu, 0)?.stream();
/// let x = Array::from_vec(&s, &[4], &[1u32, 2, 3, 4])?;
/// let e = (&x << 4u32 | &x) ^ 1u32; // integer bit operations too
/// assert_eq!(e.eval()?.to_vec()?, [16, 35, 50, 69]);
/// assert_eq!((&x * 2u32).max()?, 8);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ArrayExpr<T: Element>(Inner<T>);

#[derive(Clone)]
pub(super) enum Inner<T: Element> {
    /// An expression reading arrays of one backend.
    Typed(ExprArm<T>),
    /// Scalars alone (held as the CPU's type until they meet an array).
    Free(Typed<Cpu, T>),
}

/// `$body` with `$e` bound to the typed expression, whichever backend (the
/// CPU's for scalars alone) and `B` naming it.
macro_rules! on_typed {
    ($inner:expr, $e:ident => $body:expr) => {
        match $inner {
            $crate::array::expr::Inner::Typed(arm) => $crate::runtime::dispatch!(arm, ExprArm, $e => $body),
            $crate::array::expr::Inner::Free($e) => {
                #[allow(dead_code)]
                type B = kiln_cpu::Cpu;
                $body
            }
        }
    };
}
pub(super) use on_typed;

/// `e` on backend `B`: scalars alone move to it; an expression of another
/// backend becomes one that fails naming both.
fn lower<B: ExprTier, T: Element>(e: Inner<T>) -> Typed<B, T> {
    match e {
        // On the CPU the expression is taken as it is; elsewhere it is
        // rebuilt for `B`.
        #[allow(unreachable_patterns)] // with the CPU the only backend
        Inner::Free(f) => match B::expr(ExprArm::Cpu(f)) {
            Ok(same) => same,
            Err(ExprArm::Cpu(f)) => f.rebind().unwrap_or_else(|| Typed::failed(free_cannot_move())),
            // Never: the arm given back is the one given.
            Err(_) => Typed::failed(free_cannot_move()),
        },
        Inner::Typed(arm) => B::expr(arm).unwrap_or_else(|other| {
            Typed::failed(Error::DeviceMismatch {
                what: "array expression".into(),
                first: <B as Backend>::KIND.to_string(),
                second: kind(&other).to_string(),
            })
        }),
    }
}

/// `e` as an expression of backend `B` (one that fails naming both
/// backends where it reads another's arrays).
pub(super) fn lower_into<B: ExprTier, T: Element>(e: ArrayExpr<T>) -> Typed<B, T> {
    lower(e.0)
}

/// The first of `parts` that reads arrays (and so names a backend).
fn first_arm<T: Element>(parts: [&Inner<T>; 2]) -> Option<ExprArm<T>> {
    parts.into_iter().find_map(|p| match p {
        Inner::Typed(arm) => Some(arm.clone()),
        Inner::Free(_) => None,
    })
}

/// The backend of an arm.
fn kind<T: Element>(arm: &ExprArm<T>) -> kiln_core::BackendKind {
    dispatch!(arm, ExprArm, _e => B::KIND)
}

/// The error for scalars alone, with a cast or a `where_`, meeting arrays
/// of a backend other than the CPU's (their parts' types cannot be moved).
fn free_cannot_move() -> Error {
    Error::invalid(
        "array expression",
        "an expression of scalars alone with a cast or a where_ cannot join arrays of another backend; \
         compute the scalar on the host first",
    )
}

impl<T: Element> ArrayExpr<T> {
    pub(super) fn inner(&self) -> &Inner<T> {
        &self.0
    }

    fn from_typed<B: ExprTier>(e: Typed<B, T>) -> Self {
        ArrayExpr(Inner::Typed(B::wrap_expr(e)))
    }

    /// A scalar as an expression (broadcast to every element).
    pub fn scalar(value: T) -> Self {
        ArrayExpr(Inner::Free(Typed::scalar(value)))
    }

    /// `op` applied to each element (the methods and `-`, `!` are this).
    pub fn unary(self, op: UnOp) -> Self {
        match self.0 {
            Inner::Free(f) => ArrayExpr(Inner::Free(f.unary(op))),
            Inner::Typed(arm) => dispatch!(arm, ExprArm, e => ArrayExpr::from_typed(e.unary(op))),
        }
    }

    /// `op` between this and `other`, broadcast together (the operators
    /// and `minimum`, `maximum`, `pow` are this). A comparison is an `Err`
    /// when the expression runs: use [`compare`](Self::compare).
    pub fn binary(self, op: BinOp, other: impl IntoExpr<T>) -> Self {
        match (self.0, other.into_expr().0) {
            (Inner::Free(a), Inner::Free(b)) => ArrayExpr(Inner::Free(a.binary(op, b))),
            (Inner::Typed(a), b) => dispatch!(a, ExprArm, a => ArrayExpr::from_typed(a.binary(op, lower::<B, T>(b)))),
            (a, Inner::Typed(b)) => dispatch!(b, ExprArm, b => ArrayExpr::from_typed(lower::<B, T>(a).binary(op, b))),
        }
    }

    /// The mask where `self op other` holds, for [`where_`].
    pub fn compare(self, op: BinOp, other: impl IntoExpr<T>) -> Mask<T> {
        Mask { op, l: self, r: other.into_expr() }
    }

    /// The shape the expression computes, or the error that building it
    /// met (two shapes that do not broadcast, arrays of two backends).
    pub fn shape(&self) -> Result<&[usize]> {
        on_typed!(&self.0, e => e.shape())
    }

    /// Compute the expression into a new row-major array with one
    /// generated kernel (cached). `Err` where building it failed, or it
    /// holds scalars alone (no array to say on which device).
    pub fn eval(&self) -> Result<Array<T>> {
        on_typed!(&self.0, e => e.eval().map(B::wrap_array))
    }

    /// Compute the expression converted to `U` in the same kernel (NumPy's
    /// `astype`: integers wrap, floats to integers truncate and saturate,
    /// NaN giving 0).
    pub fn astype<U: Element>(&self) -> Result<Array<U>> {
        on_typed!(&self.0, e => e.astype::<U>().map(B::wrap_array))
    }

    /// The expression converted to `U` inside the same kernel, lazily
    /// (see the typed [`cast`](kiln_kernels::array::ArrayExpr::cast)).
    pub fn cast<U: Element>(self) -> ArrayExpr<U> {
        match self.0 {
            Inner::Free(f) => ArrayExpr(Inner::Free(f.cast())),
            Inner::Typed(arm) => dispatch!(arm, ExprArm, e => ArrayExpr::from_typed(e.cast::<U>())),
        }
    }
}

/// `a` and `b` converted to their common type by NumPy's promotion (the
/// table in [`Promote`]), ready for an operator; the conversions run in the
/// kernel the expression becomes.
///
/// # Examples
/// ```
/// use kiln::array::{promote, Array};
/// # fn main() -> kiln::Result<()> {
/// let s = kiln::Device::open(kiln::BackendKind::Cpu, 0)?.stream();
/// let i = Array::from_vec(&s, &[2], &[3i32, -4])?;
/// let f = Array::from_vec(&s, &[2], &[0.5f32, 0.25])?;
/// let (x, y) = promote(&i, &f); // int32 with float32: float64, as NumPy
/// assert_eq!((x * y).eval()?.to_vec()?, [1.5f64, -1.0]);
/// # Ok(()) }
/// ```
pub fn promote<T: Promote<U>, U: Element>(
    a: impl IntoExpr<T>,
    b: impl IntoExpr<U>,
) -> (ArrayExpr<T::Output>, ArrayExpr<T::Output>) {
    (a.into_expr().cast(), b.into_expr().cast())
}

/// A comparison of two array expressions, for [`where_`].
pub struct Mask<T: Element> {
    op: BinOp,
    l: ArrayExpr<T>,
    r: ArrayExpr<T>,
}

/// `a` where `mask` holds, else `b` (NumPy's `where`), all broadcast
/// together. For values of another element type than the mask's, see
/// [`Mask::select`].
///
/// # Examples
/// ```
/// use kiln::array::{where_, Array};
/// # fn main() -> kiln::Result<()> {
/// let s = kiln::Device::open(kiln::BackendKind::Cpu, 0)?.stream();
/// let x = Array::from_vec(&s, &[4], &[-2.0f64, -0.5, 0.5, 2.0])?;
/// assert_eq!(where_(x.lt(0.0), -&x, x.sqrt()).eval()?.to_vec()?, [2.0, 0.5, 0.5f64.sqrt(), 2f64.sqrt()]);
/// # Ok(()) }
/// ```
pub fn where_<T: Element>(mask: Mask<T>, a: impl IntoExpr<T>, b: impl IntoExpr<T>) -> ArrayExpr<T> {
    mask.select(a, b)
}

impl<M: Element> Mask<M> {
    /// `a` where the mask holds, else `b`: [`where_`] with values of any
    /// element type.
    ///
    /// # Examples
    /// ```
    /// use kiln::array::Array;
    /// # fn main() -> kiln::Result<()> {
    /// let s = kiln::Device::open(kiln::BackendKind::Cpu, 0)?.stream();
    /// let labels = Array::from_vec(&s, &[4], &[1u32, 0, 0, 1])?;
    /// let x = Array::from_vec(&s, &[4], &[-2.0f64, -0.5, 0.5, 2.0])?;
    /// assert_eq!(labels.eq_to(1).select(&x, 0.0).sum()?, 0.0); // an f64 choice by a u32 mask
    /// # Ok(()) }
    /// ```
    pub fn select<T: Element>(self, a: impl IntoExpr<T>, b: impl IntoExpr<T>) -> ArrayExpr<T> {
        let (op, l, r, a, b) = (self.op, self.l.0, self.r.0, a.into_expr().0, b.into_expr().0);
        let (typed_mask, typed_value) = (first_arm([&l, &r]), first_arm([&a, &b]));
        macro_rules! on {
            ($b:ty) => {{
                let (l, r) = (lower::<$b, M>(l), lower::<$b, M>(r));
                l.compare(op, r).select(lower::<$b, T>(a), lower::<$b, T>(b))
            }};
        }
        match (typed_mask, typed_value) {
            (Some(arm), _) => dispatch!(arm, ExprArm, _e => ArrayExpr::from_typed(on!(B))),
            (None, Some(arm)) => dispatch!(arm, ExprArm, _e => ArrayExpr::from_typed(on!(B))),
            (None, None) => ArrayExpr(Inner::Free(on!(Cpu))),
        }
    }
}

/// What can stand in an array expression: arrays, expressions, and scalars
/// of the element type.
pub trait IntoExpr<T: Element> {
    /// This value as an expression.
    fn into_expr(self) -> ArrayExpr<T>;
}

impl<T: Element> IntoExpr<T> for ArrayExpr<T> {
    fn into_expr(self) -> ArrayExpr<T> {
        self
    }
}

impl<T: Element> IntoExpr<T> for &ArrayExpr<T> {
    fn into_expr(self) -> ArrayExpr<T> {
        self.clone()
    }
}

impl<T: Element> IntoExpr<T> for &Array<T> {
    fn into_expr(self) -> ArrayExpr<T> {
        dispatch!(self, Array, a => ArrayExpr::from_typed(a.expr()))
    }
}

impl<T: Element> IntoExpr<T> for Array<T> {
    fn into_expr(self) -> ArrayExpr<T> {
        (&self).into_expr()
    }
}

macro_rules! scalar_expr {
    ($($t:ty),*) => {$(
        impl IntoExpr<$t> for $t {
            fn into_expr(self) -> ArrayExpr<$t> {
                ArrayExpr::scalar(self)
            }
        }
    )*};
}
scalar_expr!(i32, u32, i64, u64, f32, f64, kiln_core::f16, kiln_core::bf16);

impl<T: Element> Array<T> {
    /// This array as the start of an expression.
    pub fn expr(&self) -> ArrayExpr<T> {
        self.into_expr()
    }

    /// The array converted to `U` lazily (see [`ArrayExpr::cast`]).
    pub fn cast<U: Element>(&self) -> ArrayExpr<U> {
        self.expr().cast()
    }
}

kiln_kernels::array_operations!([T: Element] ArrayExpr<T>, Array<T>, Mask<T>, IntoExpr<T>);
