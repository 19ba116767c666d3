//! In-place updates: [`Array::assign`] and the operators `+= -= *= /= %=`.
//!
//! An array shares its buffer with its clones and views the way ndarray's
//! `ArcArray` does, and an update is copy-on-write: the new values are
//! computed by one fused kernel into memory of the array's own, and the
//! clones and views made before keep seeing the old values. Where nothing
//! else sees the buffer, the old memory goes back to the device in stream
//! order, so `a *= 2.0` in a loop holds two copies of `a` at most.

use std::ops;

use kiln_core::{Backend, Element, Error, Result};

use super::lazy::{ArrayExpr, IntoExpr};
use super::{Array, broadcast_shapes};

impl<B: Backend, T: Element> Array<B, T> {
    /// Set every element to `value` (an expression, array or scalar
    /// broadcast to this array's shape), computed by one generated kernel;
    /// the expression may read this array. `Err`, with the array unchanged,
    /// where `value` does not broadcast to this shape (naming both), the
    /// kernel cannot run, or the array holds the error of a failed operator
    /// (that error, still held).
    ///
    /// The operators `a += x`, `a -= x`, `a *= x`, `a /= x` and `a %= x`
    /// are `assign` of `&a + x` and so on. An operator cannot return an
    /// error: where one fails, the array keeps its old values (readable as
    /// ever) and holds the error, which [`check`](Self::check) reports
    /// until [`take_error`](Self::take_error) clears it. While it is held,
    /// later operators on the array do nothing and `assign` returns it, so
    /// the values stay those from before the first failure. Clones and
    /// views never hold it (see [`Array`]'s type docs).
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// use ndarray::array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let mut a = Array::from_ndarray(&s, &array![[1.0f32, 2.0], [3.0, 4.0]])?;
    /// let before = a.clone();
    /// a *= 2.0;
    /// a += &Array::from_vec(&s, &[2], &[10.0, 20.0])?; // broadcast along rows
    /// a.check()?;
    /// assert_eq!(a.to_vec()?, [12.0, 24.0, 16.0, 28.0]);
    /// assert_eq!(before.to_vec()?, [1.0, 2.0, 3.0, 4.0]); // copy-on-write
    ///
    /// a.assign(a.sqrt() - 1.0)?;
    /// assert_eq!(a.to_vec()?[0], 12f32.sqrt() - 1.0);
    /// let mut z = a.clone();
    /// z.assign(0.5)?; // a scalar fills
    /// assert_eq!(z.to_vec()?, [0.5; 4]);
    /// let bad = Array::from_vec(&s, &[3], &[1.0f32, 2.0, 3.0])?;
    /// assert!(a.assign(&bad).is_err()); // [3] does not broadcast to [2, 2]
    /// let kept = a.to_vec()?;
    /// a -= &bad; // the operator keeps the error in the array
    /// assert!(a.check().unwrap_err().to_string().contains("[3]"));
    /// assert_eq!(a.to_vec()?, kept); // the values from before it
    /// assert!(a.assign(1.0).is_err()); // refused while the error is held
    /// assert!(a.take_error().is_some());
    /// a.assign(1.0)?;
    /// # Ok(()) }
    /// ```
    pub fn assign(&mut self, value: impl IntoExpr<B, T>) -> Result<()> {
        self.check()?;
        let value = value.into_expr();
        let from = value.shape()?;
        let joined = broadcast_shapes(from, self.shape())?;
        if joined != self.shape() {
            return Err(Error::invalid(
                "Array::assign",
                format!("a value of shape {from:?} does not broadcast to the array's shape {:?}", self.shape()),
            ));
        }
        let new = match value.as_scalar() {
            Some(v) => Array::full(self.stream(), self.shape(), v)?,
            None => value.broadcast(self.shape().to_vec()).eval()?,
        };
        self.buffer = new.buffer;
        self.layout = new.layout;
        Ok(())
    }

    /// `Ok` unless an in-place operator on this array failed: then the
    /// first such error, every time until [`take_error`](Self::take_error)
    /// clears it. The values are those from before that operator. Clones
    /// and views of the array, taken before or after, hold no error.
    pub fn check(&self) -> Result<()> {
        match &self.fault {
            None => Ok(()),
            Some(e) => Err(e.clone()),
        }
    }

    /// The error a failed in-place operator left in this array, if any,
    /// cleared: afterwards [`check`](Self::check) is `Ok` and operators
    /// update the array again.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let mut a = Array::from_vec(&s, &[2], &[1, 2])?;
    /// assert!(a.take_error().is_none());
    /// a += &Array::from_vec(&s, &[3], &[1, 2, 3])?;
    /// let e = a.take_error().expect("[3] does not broadcast to [2]");
    /// assert!(e.to_string().contains("[3]"));
    /// assert!(a.check().is_ok() && a.take_error().is_none());
    /// a += 1;
    /// assert_eq!(a.to_vec()?, [2, 3]);
    /// # Ok(()) }
    /// ```
    pub fn take_error(&mut self) -> Option<Error> {
        self.fault.take()
    }

    /// `assign` for the operators: an error is kept (the first one) instead
    /// of returned.
    fn update(&mut self, value: ArrayExpr<B, T>) {
        if let Err(e) = self.assign(value) {
            self.fault.get_or_insert(e);
        }
    }
}

macro_rules! assign_operators {
    ($($trait:ident $method:ident => $op:ident $f:ident),*) => {$(
        impl<B: Backend, T: Element, R: IntoExpr<B, T>> ops::$trait<R> for Array<B, T> {
            fn $method(&mut self, other: R) {
                let value = ops::$op::$f(self.expr(), other);
                self.update(value);
            }
        }
    )*};
}

assign_operators!(AddAssign add_assign => Add add, SubAssign sub_assign => Sub sub,
    MulAssign mul_assign => Mul mul, DivAssign div_assign => Div div, RemAssign rem_assign => Rem rem);

#[cfg(test)]
mod tests;
