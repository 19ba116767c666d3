//! Unary maps (see [`kiln_kernels::map`]).

use kiln_core::Result;

use super::{Number, dispatch, on, on_mut};
use crate::runtime::{Stream, View, ViewMut};

pub use kiln_kernels::map::MapOp;

/// `y[i] = op(x[i])`.
///
/// # Examples
/// ```
/// use kiln::kernels::map::{map, MapOp};
/// # fn main() -> kiln::Result<()> {
/// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
/// let s = dev.stream();
/// let x = s.upload(&[1.0f32, -2.0, 3.0])?;
/// let mut y = s.alloc::<f32>(3)?;
/// map(&s, MapOp::Square, &x, &mut y)?;
/// assert_eq!(y.to_vec()?, [1.0, 4.0, 9.0]);
/// # Ok(()) }
/// ```
pub fn map<T: Number>(stream: &Stream, op: MapOp, x: &impl View<T>, y: &mut impl ViewMut<T>) -> Result<()> {
    let (x, y) = (x.view(), y.view_mut());
    dispatch!(stream, Stream, s => {
        kiln_kernels::map::map(s, op, &on("map: x", s, x)?, &mut on_mut("map: y", s, y)?)
    })
}

/// `x[i] = op(x[i])`.
pub fn map_in_place<T: Number>(stream: &Stream, op: MapOp, x: &mut impl ViewMut<T>) -> Result<()> {
    let x = x.view_mut();
    dispatch!(stream, Stream, s => kiln_kernels::map::map_in_place(s, op, &mut on_mut("map_in_place: x", s, x)?))
}
