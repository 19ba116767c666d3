//! User scans that combine by one operation of `a` and `b` (`a + b`,
//! `a * b`, `min`, `max`, `&`, `|` or `^`, in either order) from that
//! operation's neutral element: scanned in one pass over memory through the
//! built-in scans' chunks and chains ([`crate::scan::cpu_pass`]), each chunk
//! mapped by the column machine as it is reached, or read in place when the
//! map is one of the inputs.
//!
//! Sums of floats accumulate as the built-in scans' do (`f32` in f64, `f64`
//! with compensation), so each output is within about one rounding of the
//! exact prefix. The other operations combine with the column machine's own
//! arithmetic: integers give the bits of any order, and the chunking does
//! not depend on the thread count, so every result is deterministic.

use std::sync::{Mutex, PoisonError};

use kiln_core::{DType, Error, Result};

use super::check::Op;
use super::fold::Fold;
use super::host::{by_dtype, Col, Elem, Num, SliceMut, CHUNK as SPAN};
use super::host_eval::Machine;
use super::host_fold::Inputs;
use super::node::BinOp;
use super::ty::Vt;
use crate::scan::cpu::{Prefix, Sum, CHUNK};
use crate::scan::cpu_pass::{chunk_of, scan as scan_chunks};
use crate::scan::ScanKind;

fn internal(what: &str) -> Error {
    Error::invalid("user scan on the CPU", format!("{what}: disagrees with the checked kernel"))
}

/// The operation the combining expression is, when it is one of `a` and
/// `b` that this path scans.
fn operation(fold: &Fold) -> Option<BinOp> {
    let body = &fold.combine;
    let &(_, v) = body.stores.last()?;
    let node = body.nodes.get(v as usize)?;
    let Op::Bin(op) = node.op else { return None };
    let operand = |k: usize| body.nodes.get(node.args[k] as usize).map(|n| (n.op, n.ty));
    let acc = Some(Vt::Num(fold.acc));
    let (a, b) = (operand(0)?, operand(1)?);
    let ops = [a.0, b.0];
    let pair = ops == [Op::Scalar(0), Op::Scalar(1)] || ops == [Op::Scalar(1), Op::Scalar(0)];
    let typed = Some(node.ty) == acc && Some(a.1) == acc && Some(b.1) == acc;
    let known = matches!(op, BinOp::Add | BinOp::Mul | BinOp::Min | BinOp::Max | BinOp::And | BinOp::Or | BinOp::Xor);
    (body.nodes.len() == 3 && pair && typed && known).then_some(op)
}

/// The neutral element of each operation on a number type.
trait Neutral: Num {
    fn neutral(op: BinOp) -> Option<Self>;
}

macro_rules! int_neutral {
    ($($t:ty),*) => {$(
        impl Neutral for $t {
            fn neutral(op: BinOp) -> Option<$t> {
                match op {
                    BinOp::Add | BinOp::Or | BinOp::Xor => Some(0),
                    BinOp::Mul => Some(1),
                    BinOp::And => Some(!0),
                    BinOp::Min => Some(<$t>::MAX),
                    BinOp::Max => Some(<$t>::MIN),
                    _ => None,
                }
            }
        }
    )*};
}
int_neutral!(i32, u32, i64, u64);

macro_rules! float_neutral {
    ($($t:ty),*) => {$(
        impl Neutral for $t {
            fn neutral(op: BinOp) -> Option<$t> {
                match op {
                    BinOp::Add => Some(0.0),
                    BinOp::Mul => Some(1.0),
                    BinOp::Min => Some(<$t>::INFINITY),
                    BinOp::Max => Some(<$t>::NEG_INFINITY),
                    _ => None,
                }
            }
        }
    )*};
}
float_neutral!(f32, f64);

/// `op` over `T` with the column machine's arithmetic, from `id`.
struct Apply<T> {
    op: BinOp,
    id: T,
}

impl<T: Num> Prefix for Apply<T> {
    type T = T;
    type Acc = T;
    fn zero(&self) -> T {
        self.id
    }
    fn push(&self, acc: T, v: T) -> T {
        T::bin(self.op, acc, v)
    }
    fn join(&self, a: T, b: T) -> T {
        T::bin(self.op, a, b)
    }
    fn value(&self, acc: T) -> T {
        acc
    }
}

/// Scan natively when the fold's combining expression and identity `id`
/// allow it, into `out` (the output, `n` elements): whether it did.
pub(super) fn scan(
    fold: &Fold,
    kind: ScanKind,
    inputs: &Inputs<'_>,
    id: &Col,
    n: usize,
    out: &mut SliceMut<'_>,
) -> Result<bool> {
    let Some(op) = operation(fold) else { return Ok(false) };
    let neutral = by_dtype!(fold.acc, T => {
        let id = T::col(id).and_then(|c| c.first().copied());
        id.is_some_and(|v| T::neutral(op).map(T::to_bits) == Some(v.to_bits()))
    });
    if !neutral {
        return Ok(false);
    }
    if out.len() != n {
        return Err(internal("the output's length"));
    }
    let exclusive = kind == ScanKind::Exclusive;
    let out = out.sub(0, n);
    match (op, fold.acc) {
        (BinOp::Add, DType::F32) => typed(&Sum::<f32>::OF, fold, exclusive, inputs, f32::of_mut(out)),
        (BinOp::Add, DType::F64) => typed(&Sum::<f64>::OF, fold, exclusive, inputs, f64::of_mut(out)),
        _ => by_dtype!(fold.acc, T => match T::neutral(op) {
            Some(id) => typed(&Apply { op, id }, fold, exclusive, inputs, T::of_mut(out)),
            None => Err(internal("the operation")),
        }),
    }?;
    Ok(true)
}

/// Scan by `p` into `out`: each chunk the map's values, computed in
/// steps of the column machine's span by one machine per worker.
fn typed<P>(p: &P, fold: &Fold, exclusive: bool, inputs: &Inputs<'_>, out: Option<&mut [P::T]>) -> Result<()>
where
    P: Prefix,
    P::T: Num,
{
    let out = out.ok_or_else(|| internal("the output"))?;
    let n = out.len();
    let result = Fold::result(&fold.map);
    let node = fold.map.nodes.get(result as usize).ok_or_else(|| internal("the map"))?;
    let direct = match node.op {
        Op::Load(k) => inputs.slice(k as usize).and_then(P::T::of).and_then(|x| x.get(..n)),
        _ => None,
    };
    if let Some(x) = direct {
        return scan_chunks(p, exclusive, n, |c| Ok(chunk_of(x, c)), out);
    }
    let machines: Mutex<Vec<Machine<'_>>> = Mutex::new(Vec::new());
    let take = || machines.lock().unwrap_or_else(PoisonError::into_inner).pop();
    let map = |c: usize| -> Result<Vec<P::T>> {
        let mut machine = take().unwrap_or_else(|| Machine::new(&fold.map));
        let (start, end) = (c * CHUNK, n.min((c + 1) * CHUNK));
        let mut xs = Vec::with_capacity(end - start);
        for at in (start..end).step_by(SPAN) {
            let exec = inputs.exec(at, SPAN.min(end - at), n);
            machine.run(&exec)?;
            xs.extend_from_slice(P::T::of(machine.values(result, &exec)?).ok_or_else(|| internal("the map"))?);
        }
        machines.lock().unwrap_or_else(PoisonError::into_inner).push(machine);
        Ok(xs)
    };
    scan_chunks(p, exclusive, n, map, out)
}
