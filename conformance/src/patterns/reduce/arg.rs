//! argmin and argmax, on the host and into device buffers.

use kiln_core::{Backend, Device};
use kiln_kernels::Number;
use kiln_kernels::reduce::{ArgOp, arg_reduce_into, argmax, argmin};
use rand::Rng;

use super::reference::arg_ref;
use super::refusals::expect_invalid;
use super::values::no_nan;
use crate::patterns::inputs::{from_f64, offset, upload_at};
use crate::patterns::unchanged;
use crate::{Arith, Ctx, Failure, NumberPattern, Sample};

/// `argmin`/`argmax` and `arg_reduce_into`: on the adversarial mix without
/// NaN (ties among repeated extremes), on a constant array, then with NaN.
#[derive(Debug, Clone, Copy)]
pub struct Arg {
    /// The operation.
    pub op: ArgOp,
}

impl NumberPattern for Arg {
    fn run<B: Backend, T: Arith + Number>(self, device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
        let (op, n) = (self.op, ctx.n);
        let s = device.stream();
        if n == 0 {
            let empty = device.alloc::<T>(0)?;
            let call = if op == ArgOp::ArgMin { argmin(&s, &empty) } else { argmax(&s, &empty) };
            return expect_invalid(&format!("{op} of nothing"), call);
        }
        let mut x: Vec<T> = if ctx.rng.random_range(0..4) == 0 {
            vec![T::random(&mut ctx.rng); n]
        } else {
            crate::random_vec(&mut ctx.rng, n)
        };
        x = no_nan(x, ctx);
        self.check(device, ctx, &x, "values without NaN")?;
        if <T as Sample>::IS_FLOAT {
            let (a, b) = (ctx.rng.random_range(0..n), ctx.rng.random_range(0..n));
            x[a] = from_f64(f64::NAN);
            x[b] = from_f64(-f64::NAN);
            self.check(device, ctx, &x, &format!("NaN at {a} and {b}"))?;
        }
        Ok(())
    }
}

impl Arg {
    fn check<B: Backend, T: Arith + Number>(
        self,
        device: &Device<B>,
        ctx: &mut Ctx,
        x: &[T],
        what: &str,
    ) -> Result<(), Failure> {
        let op = self.op;
        let s = device.stream();
        let mut allowed = vec![arg_ref(op, x)];
        if ctx.flush_subnormals {
            let flushed: Vec<T> = x.iter().map(|v| v.flush_subnormal()).collect();
            allowed.push(arg_ref(op, &flushed));
        }
        let off = offset(ctx);
        let (buf, all) = upload_at(device, ctx, x, off)?;
        let view = buf.slice(off..)?;
        let (at, v) = if op == ArgOp::ArgMin { argmin(&s, &view)? } else { argmax(&s, &view)? };
        let mut index = device.upload(&[u64::MAX - 1])?;
        let mut value = device.upload(&[T::poison(x[0])])?;
        arg_reduce_into(&s, op, &view, &mut index, &mut value)?;
        let (at2, v2) = (index.to_vec()?[0], value.to_vec()?[0]);
        for (form, at, v) in [("host", at as u64, v), ("device", at2, v2)] {
            let good = allowed.iter().any(|&a| a as u64 == at)
                && x.get(at as usize)
                    .is_some_and(|&e| crate::close(crate::Tolerance::Exact, e, v) || e.flush_subnormal().same_as(v));
            if !good {
                return Err(Failure::Contract(format!(
                    "{op} ({form}) of {} elements, {what}: got index {at} value {v:?}; expected index {} (value {:?})",
                    x.len(),
                    allowed[0],
                    x[allowed[0]]
                )));
            }
        }
        unchanged("input", &buf, &all)
    }
}
