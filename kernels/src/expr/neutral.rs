//! A fold's identity: checked for neutrality when the fold's dtypes are
//! known, and made neutral by construction where the check cannot prove it.
//!
//! The check runs the combining expression on the CPU's column machine,
//! `combine(identity, x)` and `combine(x, identity)` for sample values `x`
//! of the accumulator's dtype, and each must give `x` (floats compared as
//! numbers, so `0.0` is neutral for `+` though `-0.0 + 0.0` is `0.0`). The
//! samples are small non-negative values (0, 1, 2, 3, 7, 27, 100, 228 and
//! 255; for floats also 1e-20, 0.5, 1.5, 100.25 and 1e20), values any
//! domain an identity may be meant for holds: `0` for `max` over lengths,
//! `0xe4` for the composition of maps of 2-bit codes. A NaN identity is
//! refused: nothing but kiln's `min` and `max` leaves it out, and WGSL lets
//! a shader assume floats are never NaN.
//!
//! What the check cannot see, an identity neutral at the samples but not
//! at some value folded (`0` for `max` of negative `i32`s), would make the
//! result depend on how often a backend folds the identity in (every GPU
//! lane starts from it; the CPU starts from the first element). So unless
//! the combining expression is one operation (`+`, `*`, `min`, `max`, `&`,
//! `|` or `^` of `a` and `b`) and the identity that operation's neutral
//! element, where neutrality holds everywhere, the expression is guarded:
//! `combine(a, b)` is applied only when neither operand equals the
//! identity, and gives the other operand when one does. Folding the
//! identity in is then a no-op on every backend, and the result is the fold
//! of the values other than the identity, the same everywhere for an
//! associative (for reductions, commutative) combining expression.

use kiln_core::{DType, Error, Result};

use super::check::Typed;
use super::fold::Fold;
use super::host::eval::{Exec, Machine};
use super::host::{Col, Elem, Slice, by_dtype};
use super::node::{Expr, Lit, Node, select, var};

/// Integer samples; the largest fits every integer dtype.
const INTS: [u8; 9] = [0, 1, 2, 3, 7, 0x1b, 100, 0xe4, 0xff];
/// Float samples, each a normal `f32`.
const FLOATS: [f64; 13] = [0.0, 1e-20, 0.5, 1.0, 1.5, 2.0, 3.0, 7.0, 27.0, 100.25, 228.0, 255.0, 1e20];

fn samples(d: DType) -> Col {
    match d {
        DType::I32 => Col::I32(INTS.map(i32::from).to_vec()),
        DType::U32 => Col::U32(INTS.map(u32::from).to_vec()),
        DType::I64 => Col::I64(INTS.map(i64::from).to_vec()),
        DType::U64 => Col::U64(INTS.map(u64::from).to_vec()),
        DType::F32 => Col::F32(FLOATS.map(|v| v as f32).to_vec()),
        _ => Col::F64(FLOATS.to_vec()),
    }
}

/// `body` (a part over no arguments but its output) evaluated once.
fn constant(body: &Typed) -> Result<Col> {
    let exec = Exec { start: 0, len: 1, n: 1, inputs: &[None], scalars: &[None], local: &[] };
    let mut machine = Machine::new(body);
    machine.run(&exec)?;
    machine.take(Fold::result(body), &exec)
}

/// The combining expression `combine` over columns `a` and `b` elementwise.
fn combine_all(combine: &Typed, a: Slice<'_>, b: Slice<'_>) -> Result<Col> {
    let inputs = [Some(a), Some(b), None];
    let exec = Exec { start: 0, len: a.len(), n: a.len(), inputs: &inputs, scalars: &[None; 3], local: &[] };
    let mut machine = Machine::new(combine);
    machine.run(&exec)?;
    machine.take(Fold::result(combine), &exec)
}

/// Element `i` of `c` (of dtype `d`): its bits, whether it is NaN, and how it prints.
fn element(c: &Col, d: DType, i: usize) -> Option<(u64, bool, String)> {
    by_dtype!(d, T => T::col(c).and_then(|v| v.get(i)).map(|&v| {
        #[allow(clippy::eq_op)]
        let nan = v != v;
        (Elem::to_bits(v), nan, format!("{v:?}"))
    }))
}

/// Whether elements `i` of `c` and `x` (of dtype `d`) are equal as numbers.
fn equal(c: &Col, x: &Col, d: DType, i: usize) -> bool {
    by_dtype!(d, T => match (T::col(c).and_then(|v| v.get(i)), T::col(x).and_then(|v| v.get(i))) {
        (Some(p), Some(q)) => p == q,
        _ => false,
    })
}

fn internal() -> Error {
    Error::invalid("a user fold's identity", "its value disagrees with the checked kernel")
}

/// Check that `identity` (the typed identity, written as `written`) is
/// neutral for `combine` (written as `combining`) on both sides at the
/// samples of `acc`: `Err` naming both and a sample where it is not. The
/// combining expression to use in place of the user's: `None` where the
/// user's is one operation with its neutral element as the identity, else
/// the user's guarded.
pub(super) fn check(
    kernel: &str,
    acc: DType,
    (combine, combining): (&Typed, &Expr),
    (identity, written): (&Typed, &Expr),
) -> Result<Option<Expr>> {
    let fail = |reason: String| Error::invalid(format!("user kernel `{kernel}`"), reason);
    let value = constant(identity)?;
    let (bits, nan, shown) = element(&value, acc, 0).ok_or_else(internal)?;
    // The identity as written, and its value where that differs.
    let written = match written.to_string() {
        w if w == shown => w,
        w => format!("{w} ({shown})"),
    };
    if nan {
        return Err(fail(format!(
            "the identity {written} of the combining expression {combining} is NaN: kiln refuses NaN \
             identities, as WGSL lets a shader assume floats are never NaN"
        )));
    }
    let x = samples(acc);
    let ids = value.repeat(x.len());
    let left = combine_all(combine, ids.slice()?, x.slice()?)?;
    let right = combine_all(combine, x.slice()?, ids.slice()?)?;
    for i in 0..x.len() {
        for (got, a_first) in [(&left, true), (&right, false)] {
            if !equal(got, &x, acc, i) {
                let (_, _, xs) = element(&x, acc, i).ok_or_else(internal)?;
                let (_, _, gs) = element(got, acc, i).ok_or_else(internal)?;
                let (a, b) = if a_first { (&shown, &xs) } else { (&xs, &shown) };
                return Err(fail(format!(
                    "the identity {written} is not neutral for the combining expression {combining}: \
                     with a = {a}, b = {b} it gives {gs}, not {xs}"
                )));
            }
        }
    }
    if super::host::op::standard(combine, acc, &value).is_some() {
        return Ok(None);
    }
    let id = || Expr::new(Node::Lit(Lit::Typed(acc, bits)));
    let (a, b) = (var(super::fold::A), var(super::fold::B));
    Ok(Some(select(a.clone().eq(id()), b.clone(), select(b.eq(id()), a, combining.clone()))))
}
