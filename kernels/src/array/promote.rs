//! Mixed element types: [`ArrayExpr::cast`] converts inside the fused
//! kernel, and [`Promote`] is NumPy's type promotion for kiln's dtypes, so
//! [`promote`] brings two operands to their common type the way NumPy
//! would before an operator (`int32 + float32` is `float64`; the table is
//! on [`Promote`]).
//!
//! A Rust scalar is typed, so it promotes as a NumPy array or NumPy scalar
//! of its type does (NEP 50), not as a Python number: `promote(&a_f32,
//! 2.0f64)` is `f64`. Operators themselves take one element type: an
//! expression mixing `f32` and `i32` without [`promote`] or a
//! [`cast`](ArrayExpr::cast) does not compile.

use std::sync::Arc;

use kiln_core::{Backend, Element};

use super::Array;
use super::fuse::Term;
use super::lazy::{ArrayExpr, CastOf, IntoExpr};

/// The type NumPy gives `T` combined with `U`. Symmetric:
///
/// | `T \ U` | i32 | u32 | i64 | u64 | f32 | f64 |
/// |---------|-----|-----|-----|-----|-----|-----|
/// | **i32** | i32 | i64 | i64 | f64 | f64 | f64 |
/// | **u32** | i64 | u32 | i64 | u64 | f64 | f64 |
/// | **i64** | i64 | i64 | i64 | f64 | f64 | f64 |
/// | **u64** | f64 | u64 | f64 | u64 | f64 | f64 |
/// | **f32** | f64 | f64 | f64 | f64 | f32 | f64 |
/// | **f64** | f64 | f64 | f64 | f64 | f64 | f64 |
pub trait Promote<U: Element>: Element {
    /// The common type.
    type Output: Element;
}

macro_rules! promote {
    ($($t:ty, $u:ty => $o:ty;)*) => {$(
        impl Promote<$u> for $t {
            type Output = $o;
        }
    )*};
}

promote! {
    i32, i32 => i32; i32, u32 => i64; i32, i64 => i64; i32, u64 => f64; i32, f32 => f64; i32, f64 => f64;
    u32, i32 => i64; u32, u32 => u32; u32, i64 => i64; u32, u64 => u64; u32, f32 => f64; u32, f64 => f64;
    i64, i32 => i64; i64, u32 => i64; i64, i64 => i64; i64, u64 => f64; i64, f32 => f64; i64, f64 => f64;
    u64, i32 => f64; u64, u32 => u64; u64, i64 => f64; u64, u64 => u64; u64, f32 => f64; u64, f64 => f64;
    f32, i32 => f64; f32, u32 => f64; f32, i64 => f64; f32, u64 => f64; f32, f32 => f32; f32, f64 => f64;
    f64, i32 => f64; f64, u32 => f64; f64, i64 => f64; f64, u64 => f64; f64, f32 => f64; f64, f64 => f64;
}

impl<B: Backend, T: Element> ArrayExpr<B, T> {
    /// The expression converted to `U`, computed in the same kernel as the
    /// rest (lazily; [`astype`](Self::astype) is `cast` then `eval`), with
    /// kiln's conversions: integers wrap, floats to integers truncate and
    /// saturate (NaN giving 0), integers to floats round to nearest.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let counts = Array::from_vec(&s, &[3], &[1u32, 2, 4])?;
    /// let w = Array::from_vec(&s, &[3], &[0.5f32, 0.25, 0.125])?;
    /// // One kernel: the u32 counts read, converted and multiplied.
    /// assert_eq!((counts.cast::<f32>() * &w).eval()?.to_vec()?, [0.5, 0.5, 0.5]);
    /// assert_eq!((&w * 10.0).cast::<i32>().sum()?, 8); // 5 + 2 + 1
    /// # Ok(()) }
    /// ```
    pub fn cast<U: Element>(self) -> ArrayExpr<B, U> {
        let shape = self.shape.clone();
        if T::DTYPE == U::DTYPE
            && let Some(term) = same_type::<B, T, U>(&self.term)
        {
            // The same type: the expression itself, seen as U (so that one
            // of scalars alone stays one).
            return ArrayExpr { shape, term };
        }
        ArrayExpr { shape, term: Arc::new(Term::Cast(Arc::new(CastOf(self)))) }
    }
}

/// `term` as a term of `U`, where `U` is `T` (`T::DTYPE == U::DTYPE`:
/// element types are one per dtype): its nodes rebuilt, its scalars
/// reinterpreted and each array read through a cast to its own type;
/// `None` where a scalar will not reinterpret.
fn same_type<B: Backend, T: Element, U: Element>(term: &Arc<Term<B, T>>) -> Option<Arc<Term<B, U>>> {
    Some(Arc::new(match &**term {
        Term::Array(a) => Term::Cast(Arc::new(CastOf(a.expr()))),
        Term::Scalar(v) => Term::Scalar(bytemuck::try_cast(*v).ok()?),
        Term::Un(op, a) => Term::Un(*op, same_type(a)?),
        Term::Bin(op, a, b) => Term::Bin(*op, same_type(a)?, same_type(b)?),
        Term::Where(mask, a, b) => Term::Where(mask.clone(), same_type(a)?, same_type(b)?),
        Term::Cast(x) => Term::Cast(x.clone()),
    }))
}

impl<B: Backend, T: Element> Array<B, T> {
    /// The array converted to `U` lazily (see [`ArrayExpr::cast`]).
    pub fn cast<U: Element>(&self) -> ArrayExpr<B, U> {
        self.expr().cast()
    }
}

/// `a` and `b` converted to their common type (NumPy's promotion, the
/// table on [`Promote`]), ready for an operator; the conversions run in
/// the kernel the expression becomes.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::array::{promote, Array};
/// # fn main() -> kiln_core::Result<()> {
/// let s = Device::<Cpu>::open(0)?.stream();
/// let i = Array::from_vec(&s, &[3], &[1i32, -2, 3])?;
/// let f = Array::from_vec(&s, &[3], &[0.5f32, 0.25, 0.1])?;
/// let (x, y) = promote(&i, &f); // int32 and float32 give float64, as NumPy
/// let z = (x + y).eval()?;
/// assert_eq!(z.to_vec()?, [1.5, -1.75, 3.0 + f64::from(0.1f32)]);
/// let (x, y) = promote(&i, 7u32); // int32 and uint32 give int64
/// assert_eq!((x * y).eval()?.to_vec()?, [7i64, -14, 21]);
/// # Ok(()) }
/// ```
pub fn promote<B: Backend, T: Promote<U>, U: Element>(
    a: impl IntoExpr<B, T>,
    b: impl IntoExpr<B, U>,
) -> (ArrayExpr<B, T::Output>, ArrayExpr<B, T::Output>) {
    (a.into_expr().cast(), b.into_expr().cast())
}

#[cfg(test)]
mod tests {
    use kiln_core::DType;

    use super::*;

    fn out<T: Promote<U>, U: Element>() -> DType {
        <T::Output as Element>::DTYPE
    }

    macro_rules! row {
        ($t:ty) => {
            [out::<$t, i32>(), out::<$t, u32>(), out::<$t, i64>(), out::<$t, u64>(), out::<$t, f32>(), out::<$t, f64>()]
        };
    }

    #[test]
    fn the_table_is_numpys_result_type() {
        use DType::{F32, F64, I32, I64, U32, U64};
        // numpy.result_type(a, b) for a, b in int32, uint32, int64, uint64, float32, float64 (NumPy 2).
        let numpy = [
            [I32, I64, I64, F64, F64, F64],
            [I64, U32, I64, U64, F64, F64],
            [I64, I64, I64, F64, F64, F64],
            [F64, U64, F64, U64, F64, F64],
            [F64, F64, F64, F64, F32, F64],
            [F64, F64, F64, F64, F64, F64],
        ];
        assert_eq!([row!(i32), row!(u32), row!(i64), row!(u64), row!(f32), row!(f64)], numpy);
    }
}
