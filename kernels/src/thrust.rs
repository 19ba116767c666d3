//! Thrust-style algorithms: `sequence`, `transform`, `reduce`, `copy_if`,
//! each taking the stream to run on, as Thrust's `thrust::cuda::par.on(stream)`
//! execution policy does. They are thin, named the way Thrust users expect,
//! over the patterns of this crate ([`fill`](crate::fill), [`map`](crate::map),
//! [`elementwise`](crate::elementwise), [`reduce`](crate::reduce),
//! [`compact`](crate::compact)); the semantics are those patterns'.
//!
//! Every function returns as soon as its work is enqueued, except those
//! that return a value computed on the device ([`reduce`], [`copy_if`]),
//! which block until it is on the host.
//!
//! # Examples
//! ```
//! use kiln_core::Device;
//! use kiln_cpu::Cpu;
//! use kiln_kernels::compact::Predicate;
//! use kiln_kernels::map::MapOp;
//! use kiln_kernels::reduce::ReduceOp;
//! use kiln_kernels::thrust;
//! # fn main() -> kiln_core::Result<()> {
//! let dev = Device::<Cpu>::open(0)?;
//! let s = dev.stream();
//! let mut x = s.alloc::<i32>(6)?;
//! thrust::sequence(&s, &mut x, -2, 1)?;                       // -2 -1 0 1 2 3
//! let mut sq = s.alloc::<i32>(6)?;
//! thrust::transform(&s, &x, &mut sq, MapOp::Square)?;          // 4 1 0 1 4 9
//! assert_eq!(thrust::reduce(&s, &sq, 100, ReduceOp::Sum)?, 119);
//! let mut big = s.alloc::<i32>(6)?;
//! assert_eq!(thrust::copy_if(&s, &sq, &mut big, Predicate::GreaterThan(1))?, 3);
//! # Ok(()) }
//! ```

use kiln_core::{Backend, Result, Stream, View, ViewMut};

use crate::Number;
use crate::compact::Predicate;
use crate::elementwise::BinaryOp;
use crate::map::MapOp;
use crate::reduce::ReduceOp;

/// `dst[i] = init + i * step` (`thrust::sequence`).
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let mut x = s.alloc::<u32>(4)?;
/// kiln_kernels::thrust::sequence(&s, &mut x, 10, 5)?;
/// assert_eq!(x.to_vec()?, vec![10, 15, 20, 25]);
/// # Ok(()) }
/// ```
pub fn sequence<B: Backend, T: Number>(
    stream: &Stream<B>,
    dst: &mut impl ViewMut<B, T>,
    init: T,
    step: T,
) -> Result<()> {
    crate::fill::sequence(stream, dst, init, step)
}

/// `y[i] = op(x[i])` (`thrust::transform` with a unary functor).
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::map::MapOp;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[1.0f32, -4.0])?;
/// let mut y = s.alloc::<f32>(2)?;
/// kiln_kernels::thrust::transform(&s, &x, &mut y, MapOp::Negate)?;
/// assert_eq!(y.to_vec()?, vec![-1.0, 4.0]);
/// # Ok(()) }
/// ```
pub fn transform<B: Backend, T: Number>(
    stream: &Stream<B>,
    x: &impl View<B, T>,
    y: &mut impl ViewMut<B, T>,
    op: MapOp,
) -> Result<()> {
    crate::map::map(stream, op, x, y)
}

/// `c[i] = a[i] op b[i]` (`thrust::transform` with a binary functor).
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::elementwise::BinaryOp;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let (a, b) = (s.upload(&[1i32, 2])?, s.upload(&[10i32, 20])?);
/// let mut c = s.alloc::<i32>(2)?;
/// kiln_kernels::thrust::transform_binary(&s, &a, &b, &mut c, BinaryOp::Add)?;
/// assert_eq!(c.to_vec()?, vec![11, 22]);
/// # Ok(()) }
/// ```
pub fn transform_binary<B: Backend, T: Number>(
    stream: &Stream<B>,
    a: &impl View<B, T>,
    b: &impl View<B, T>,
    c: &mut impl ViewMut<B, T>,
    op: BinaryOp,
) -> Result<()> {
    crate::elementwise::binary(stream, op, a, b, c)
}

/// `init` folded with every element of `x` by `op` (`thrust::reduce` with
/// an initial value); blocks until the result is on the host. An empty `x`
/// gives `init`, whatever the operation.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::reduce::ReduceOp;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[3.0f64, 9.0, 4.0])?;
/// assert_eq!(kiln_kernels::thrust::reduce(&s, &x, 5.0, ReduceOp::Max)?, 9.0);
/// assert_eq!(kiln_kernels::thrust::reduce(&s, &s.alloc::<f64>(0)?, 5.0, ReduceOp::Min)?, 5.0);
/// # Ok(()) }
/// ```
pub fn reduce<B: Backend, T: Number>(stream: &Stream<B>, x: &impl View<B, T>, init: T, op: ReduceOp) -> Result<T> {
    if x.view().is_empty() {
        return Ok(init);
    }
    Ok(op.apply(init, crate::reduce::reduce(stream, op, x)?))
}

/// Copy the elements of `x` that satisfy `pred` to the front of `out`, in
/// order, and return how many (`thrust::copy_if`, whose returned iterator
/// is `out.begin() + count`); blocks until the count is on the host. `out`
/// must hold at least `x.len()` elements.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::compact::Predicate;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[7u32, 0, 3])?;
/// let mut out = s.alloc::<u32>(3)?;
/// assert_eq!(kiln_kernels::thrust::copy_if(&s, &x, &mut out, Predicate::NonZero)?, 2);
/// # Ok(()) }
/// ```
pub fn copy_if<B: Backend, T: Number>(
    stream: &Stream<B>,
    x: &impl View<B, T>,
    out: &mut impl ViewMut<B, T>,
    pred: Predicate<T>,
) -> Result<usize> {
    crate::compact::copy_if(stream, x, pred, out)
}
