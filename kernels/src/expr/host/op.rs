//! Folds and scans that combine by one operation of `a` and `b` (`a + b`,
//! `a * b`, `min`, `max`, `&`, `|` or `^`, in either order) from that
//! operation's neutral element: recognised here, and run natively through
//! the built-in scans' running prefixes ([`Prefix`]) instead of the column
//! machine's combining expression. Sums of floats accumulate as the
//! built-in scans' do (`f32` in f64, `f64` with compensation); the other
//! operations combine with the column machine's own arithmetic.

use kiln_core::{DType, Result};

use crate::expr::check::{Op, Typed};
use crate::expr::fold::Fold;
use crate::expr::host::eval::internal;
use crate::expr::host::inputs::Inputs;
use crate::expr::host::{Col, Elem, Num, by_dtype};
use crate::expr::node::BinOp;
use crate::expr::ty::Vt;
use crate::scan::cpu::Sum;
use crate::scan::prefix::Prefix;

/// The operation the combining expression `body` (over accumulator
/// values of dtype `acc`) is, when it is one of `a` and `b` that runs natively.
fn operation(body: &Typed, acc: DType) -> Option<BinOp> {
    let &(_, v) = body.stores.last()?;
    let node = body.nodes.get(v as usize)?;
    let Op::Bin(op) = node.op else { return None };
    let operand = |k: usize| body.nodes.get(node.args[k] as usize).map(|n| (n.op, n.ty));
    let acc = Some(Vt::Num(acc));
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
pub(in crate::expr) struct Apply<T> {
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

/// The operation `fold` combines by, when it is one that runs natively
/// and `id` (the fold's identity) is its neutral element.
pub(in crate::expr) fn native(fold: &Fold, id: &Col) -> Option<BinOp> {
    standard(&fold.combine, fold.acc, id)
}

/// The operation the combining expression `combine` over `acc` is, when
/// it is one that runs natively and `id` is its neutral element (so the
/// identity is neutral at every value).
pub(in crate::expr) fn standard(combine: &Typed, acc: DType, id: &Col) -> Option<BinOp> {
    let op = operation(combine, acc)?;
    let neutral = by_dtype!(acc, T => {
        let id = T::col(id).and_then(|c| c.first().copied());
        id.is_some_and(|v| T::neutral(op).map(T::to_bits) == Some(v.to_bits()))
    });
    neutral.then_some(op)
}

/// Work generic over the running prefix of a native operation.
pub(in crate::expr) trait WithPrefix {
    type Out;
    fn run<P>(self, p: &P) -> Result<Self::Out>
    where
        P: Prefix,
        P::T: Num;
}

/// Run `work` with the running prefix of `op` on `dtype`.
pub(in crate::expr) fn with_prefix<W: WithPrefix>(op: BinOp, dtype: DType, work: W) -> Result<W::Out> {
    match (op, dtype) {
        (BinOp::Add, DType::F32) => work.run(&Sum::<f32>::OF),
        (BinOp::Add, DType::F64) => work.run(&Sum::<f64>::OF),
        _ => by_dtype!(dtype, T => match T::neutral(op) {
            Some(id) => work.run(&Apply { op, id }),
            None => Err(internal("the operation")),
        }),
    }
}

/// The map's values in place, when the map is an input of `T` (its first `n`).
pub(in crate::expr) fn direct<'a, T: Elem>(fold: &Fold, inputs: &Inputs<'a>, n: usize) -> Option<&'a [T]> {
    let node = fold.map.nodes.get(Fold::result(&fold.map) as usize)?;
    match node.op {
        Op::Load(k) => inputs.slice(k as usize).and_then(T::of).and_then(|x| x.get(..n)),
        _ => None,
    }
}
