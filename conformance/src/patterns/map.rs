//! map and map_in_place, each operation.

use kiln_core::{Backend, Device, Error};
use kiln_kernels::Number;
use kiln_kernels::map::{MapOp, map, map_in_place};

use super::unchanged;
use crate::{Arith, Cases, Ctx, Expected, Failure, NumberPattern, Tolerance, or_flushed, poisoned, unary};

/// `y = op(x)` (or `x = op(x)` in place) on adversarial random `x`.
#[derive(Debug, Clone, Copy)]
pub struct Map {
    /// The operation.
    pub op: MapOp,
    /// Whether to run `map_in_place` rather than `map`.
    pub in_place: bool,
}

impl Map {
    /// How closely each operation must match: sign and magnitude operations
    /// exactly; a square is rounded once (IEEE), so within an ulp; a square
    /// root within 3 (WGSL's bound for `sqrt` is 2.5 ulp).
    fn tolerance(self) -> Tolerance {
        match self.op {
            MapOp::Abs | MapOp::Negate => Tolerance::Exact,
            MapOp::Square => Tolerance::Ulps(1),
            MapOp::Sqrt => Tolerance::Ulps(3),
        }
    }
}

impl NumberPattern for Map {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let x: Vec<T> = ctx.random();
        let s = device.stream();
        let Some(f) = unary::<T>(self.op) else {
            return refused(device, self, &x);
        };
        let want: Vec<T> = x.iter().map(|&v| f(v)).collect();
        let mut expected = Expected::new(want, self.tolerance());
        if ctx.flush_subnormals {
            expected = or_flushed(expected, [&x], |[v]| f(v));
        }
        let got = if self.in_place {
            let mut xb = device.upload(&x)?;
            map_in_place(&s, self.op, &mut xb)?;
            xb.to_vec()?
        } else {
            let xb = device.upload(&x)?;
            let mut y = poisoned(device, &expected.values)?;
            map(&s, self.op, &xb, &mut y)?;
            unchanged("input x", &xb, &x)?;
            y.to_vec()?
        };
        ctx.compare_inputs("output", &expected, &got, &[("x", &x)])
    }
}

/// An operation `T` does not have must be refused with `Unsupported`, and
/// must leave its buffers untouched.
fn refused<B: Backend, T: Arith + Number>(device: &Device<B>, m: Map, x: &[T]) -> Result<(), Failure> {
    let s = device.stream();
    let mut xb = device.upload(x)?;
    let mut y = device.upload(x)?;
    let result = if m.in_place { map_in_place(&s, m.op, &mut xb) } else { map(&s, m.op, &xb, &mut y) };
    match result {
        Ok(()) => Err(Failure::Contract(format!("map {} on {} succeeded; it must return Unsupported", m.op, T::DTYPE))),
        Err(e @ Error::Unsupported { .. }) => {
            unchanged("x after a refused call", &xb, x)?;
            unchanged("y after a refused call", &y, x)?;
            Err(e.into())
        }
        Err(e) => Err(e.into()),
    }
}

/// Add the map cases to `group`: every operation, out of place then in
/// place, on every number type.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    for in_place in [false, true] {
        let form = if in_place { "map_in_place" } else { "map" };
        for op in MapOp::ALL {
            c.numbers_and_halves(group, format!("{form}/{op}"), Map { op, in_place });
        }
    }
}
