//! binary operations and axpy, out of place and in place; mismatched lengths.

use kiln_core::{Backend, Device, Error};
use kiln_kernels::Number;
use kiln_kernels::elementwise::{BinaryOp, axpy, axpy_in_place, binary, binary_in_place};
use kiln_kernels::map::{MapOp, map};

use super::unchanged;
use crate::{
    Arith, Cases, Ctx, Expected, Failure, NumberPattern, Tolerance, binary as reference, or_flushed, poisoned,
};

/// `c = a op b` (or `a = a op b` in place) on adversarial random inputs.
#[derive(Debug, Clone, Copy)]
pub struct Binary {
    /// The operation.
    pub op: BinaryOp,
    /// Whether to run `binary_in_place` rather than `binary`.
    pub in_place: bool,
}

impl NumberPattern for Binary {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let (a, b): (Vec<T>, Vec<T>) = (ctx.random(), ctx.random());
        let op = self.op;
        let want: Vec<T> = a.iter().zip(&b).map(|(&x, &y)| reference(op, x, y)).collect();
        // IEEE rounds +, -, * and / once: within an ulp; WGSL bounds `/` at 2.5 ulp.
        let tolerance = if op == BinaryOp::Div { Tolerance::Ulps(3) } else { Tolerance::Ulps(1) };
        let mut expected = Expected::new(want, tolerance);
        if ctx.flush_subnormals {
            expected = or_flushed(expected, [&a, &b], |[x, y]| reference(op, x, y));
        }
        let s = device.stream();
        let (mut ab, bb) = (device.upload(&a)?, device.upload(&b)?);
        let got = if self.in_place {
            binary_in_place(&s, op, &mut ab, &bb)?;
            ab.to_vec()?
        } else {
            let mut c = poisoned(device, &expected.values)?;
            binary(&s, op, &ab, &bb, &mut c)?;
            unchanged("input a", &ab, &a)?;
            c.to_vec()?
        };
        unchanged("input b", &bb, &b)?;
        ctx.compare_inputs("output", &expected, &got, &[("a", &a), ("b", &b)])
    }
}

/// `z = alpha * x + y` (or `y = alpha * x + y` in place) with a random alpha.
#[derive(Debug, Clone, Copy)]
pub struct Axpy {
    /// Whether to run `axpy_in_place` rather than `axpy`.
    pub in_place: bool,
}

impl NumberPattern for Axpy {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let alpha = T::random_scalar(&mut ctx.rng);
        let (x, y): (Vec<T>, Vec<T>) = (ctx.random(), ctx.random());
        let f = move |[x, y]: [T; 2]| T::plus(T::times(alpha, x), y);
        let want: Vec<T> = x.iter().zip(&y).map(|(&x, &y)| f([x, y])).collect();
        // Two roundings in the reference, one in a fused multiply-add: both are right.
        let fused = x.iter().zip(&y).map(|(&x, &y)| T::fused(alpha, x, y)).collect();
        let mut expected = Expected::new(want, Tolerance::Ulps(1)).or(fused);
        if ctx.flush_subnormals {
            expected = or_flushed(expected, [&x, &y], f);
            expected = or_flushed(expected, [&x, &y], |[x, y]| T::fused(alpha, x, y));
        }
        let s = device.stream();
        let (xb, mut yb) = (device.upload(&x)?, device.upload(&y)?);
        let got = if self.in_place {
            axpy_in_place(&s, alpha, &xb, &mut yb)?;
            yb.to_vec()?
        } else {
            let mut z = poisoned(device, &expected.values)?;
            axpy(&s, alpha, &xb, &yb, &mut z)?;
            unchanged("input y", &yb, &y)?;
            z.to_vec()?
        };
        unchanged("input x", &xb, &x)?;
        ctx.compare_inputs(&format!("output (alpha {alpha:?})"), &expected, &got, &[("x", &x), ("y", &y)])
    }
}

/// Every elementwise call given operands of different lengths must return
/// `LengthMismatch` and write nothing.
#[derive(Debug, Clone, Copy)]
pub struct MismatchedLengths;

impl NumberPattern for MismatchedLengths {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let n = ctx.n;
        let long: Vec<T> = crate::random_vec(&mut ctx.rng, n + 1);
        let short: Vec<T> = ctx.random();
        let s = device.stream();
        let (lb, sb) = (device.upload(&long)?, device.upload(&short)?);
        let mut out = device.upload(&short)?;
        let one = T::random_moderate(&mut ctx.rng);
        let calls: [(&str, kiln_core::Result<()>); 4] = [
            ("binary(a: n, b: n + 1, c: n)", binary(&s, BinaryOp::Add, &sb, &lb, &mut out)),
            ("binary(a: n + 1, b: n, c: n)", binary(&s, BinaryOp::Mul, &lb, &sb, &mut out)),
            ("axpy(x: n + 1, y: n, z: n)", axpy(&s, one, &lb, &sb, &mut out)),
            ("map(x: n + 1, y: n)", map(&s, MapOp::Negate, &lb, &mut out)),
        ];
        for (call, result) in calls {
            match result {
                Err(Error::LengthMismatch { .. }) => {}
                Ok(()) => return Err(Failure::Contract(format!("{call} succeeded; it must return LengthMismatch"))),
                Err(e) => return Err(Failure::Contract(format!("{call} returned `{e}`, not LengthMismatch"))),
            }
        }
        let mut inout = device.upload(&short)?;
        match binary_in_place(&s, BinaryOp::Sub, &mut inout, &lb) {
            Err(Error::LengthMismatch { .. }) => {}
            other => return Err(Failure::Contract(format!("binary_in_place(a: n, b: n + 1) returned {other:?}"))),
        }
        match axpy_in_place(&s, one, &lb, &mut inout) {
            Err(Error::LengthMismatch { .. }) => {}
            other => return Err(Failure::Contract(format!("axpy_in_place(x: n + 1, y: n) returned {other:?}"))),
        }
        unchanged("output after refused calls", &out, &short)?;
        unchanged("in-place operand after refused calls", &inout, &short)
    }
}

/// Add the elementwise cases to `group`: every binary operation out of
/// place then in place, axpy in both forms, and mismatched lengths, on
/// every number type.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    for in_place in [false, true] {
        let form = if in_place { "elementwise_in_place" } else { "elementwise" };
        for op in BinaryOp::ALL {
            c.numbers_and_halves(group, format!("{form}/{op}"), Binary { op, in_place });
        }
    }
    c.numbers_and_halves(group, "axpy", Axpy { in_place: false });
    c.numbers_and_halves(group, "axpy_in_place", Axpy { in_place: true });
    c.numbers(group, "elementwise/mismatched_lengths", MismatchedLengths);
}
