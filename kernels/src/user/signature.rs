//! Matching a launch's arguments to a user kernel's declared ones: roles,
//! dtypes (binding placeholders) and lengths.

use std::collections::HashMap;
use std::sync::Arc;

use kiln_core::{Backend, DType, Error, RawArg, Result};

use crate::expr::{Param, Role, Ty, Typed, check_op};

/// What a launch's arguments say: each argument's dtype, the placeholder
/// bindings, the element count and each raw input's length.
pub(crate) struct Bound {
    pub(crate) dtypes: Vec<DType>,
    pub(crate) bind: HashMap<Arc<str>, DType>,
    pub(crate) n: usize,
    pub(crate) raw_lens: Vec<usize>,
}

fn fail(kernel: &str, reason: impl Into<String>) -> Error {
    Error::invalid(format!("user kernel `{kernel}`"), reason)
}

/// Match `args` to `params` in declaration order.
pub(crate) fn bind<B: Backend>(kernel: &str, params: &[Param], args: &[RawArg<'_, B>]) -> Result<Bound> {
    if args.len() != params.len() {
        let names: Vec<String> = params.iter().map(|p| format!("{} `{}`", p.role.name(), p.name)).collect();
        return Err(fail(
            kernel,
            format!("takes {} arguments ({}), got {}", params.len(), names.join(", "), args.len()),
        ));
    }
    let mut bound = Bound { dtypes: Vec::new(), bind: HashMap::new(), n: 0, raw_lens: Vec::new() };
    let mut first_len: Option<(&str, usize)> = None;
    let mut bound_by: HashMap<Arc<str>, &str> = HashMap::new();
    for (p, arg) in params.iter().zip(args) {
        let what = format!("{} `{}`", p.role.name(), p.name);
        let dtype = match (p.role, arg) {
            (Role::Scalar, RawArg::Scalar(s)) => s.dtype(),
            (Role::Scalar, RawArg::Buffer { .. }) => return Err(fail(kernel, format!("{what} is given a buffer"))),
            (_, RawArg::Scalar(_)) => return Err(fail(kernel, format!("{what} is given a scalar, expected a buffer"))),
            (role, RawArg::Buffer { dtype, writable, len, .. }) => {
                if role.writes() && !writable {
                    return Err(fail(kernel, format!("{what} is written: pass it writable (&mut)")));
                }
                let elems = len / dtype.size();
                if role == Role::Raw {
                    bound.raw_lens.push(elems);
                } else {
                    match first_len {
                        None => first_len = Some((&p.name, elems)),
                        Some((first, n)) if n != elems => {
                            return Err(Error::LengthMismatch {
                                what: format!("user kernel `{kernel}`: {what} vs `{first}`"),
                                expected: n,
                                actual: elems,
                            });
                        }
                        Some(_) => {}
                    }
                }
                *dtype
            }
        };
        match &p.ty {
            Ty::Is(d) if *d != dtype => return Err(fail(kernel, format!("{what} is declared {d}, given {dtype}"))),
            Ty::Is(_) => {}
            Ty::Param(t) => match bound.bind.get(t) {
                Some(&d) if d != dtype => {
                    let by = bound_by.get(t).copied().unwrap_or("?");
                    return Err(fail(kernel, format!("{what} is {dtype}, but {t} is {d} from `{by}`")));
                }
                Some(_) => {}
                None => {
                    bound.bind.insert(t.clone(), dtype);
                    bound_by.insert(t.clone(), &p.name);
                }
            },
        }
        bound.dtypes.push(dtype);
    }
    bound.n = first_len.map_or(0, |(_, n)| n);
    Ok(bound)
}

/// Placeholder names and the dtypes they stand for.
pub(crate) type Binding = HashMap<Arc<str>, DType>;

/// Each argument's dtype with placeholders bound by `types` (for a
/// program asked for without a launch), and the bindings.
pub(crate) fn resolve_types(kernel: &str, params: &[Param], types: &[(&str, DType)]) -> Result<(Vec<DType>, Binding)> {
    let bind: Binding = types.iter().map(|(k, d)| (Arc::from(*k), *d)).collect();
    let dtypes = params
        .iter()
        .map(|p| crate::expr::resolve(kernel, &p.ty, &bind, &format!("{} `{}`", p.role.name(), p.name)))
        .collect::<Result<Vec<_>>>()?;
    Ok((dtypes, bind))
}

/// `Err` where `index()` or `len()` (u32) cannot reach every element or a
/// raw input's length does not fit u32.
pub(crate) fn check_u32<'a>(kernel: &str, bodies: impl Iterator<Item = &'a Typed>, bound: &Bound) -> Result<()> {
    let mut uses = false;
    for b in bodies {
        uses |= b.any(|n| matches!(n.op, check_op::Index | check_op::Len | check_op::LenOf(_)));
    }
    let longest = bound.raw_lens.iter().copied().chain([bound.n]).max().unwrap_or(0);
    if uses && longest > u32::MAX as usize {
        return Err(fail(kernel, format!("index() and len() are u32, and the launch has {longest} elements")));
    }
    Ok(())
}
