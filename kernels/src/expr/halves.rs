//! The 16-bit floats (`f16`, `bf16`) in user kernels: stored as themselves,
//! computed in `f32`. A checked body whose values are of a 16-bit dtype is
//! rewritten so that every value is an `f32`: arguments of a 16-bit dtype
//! are widened as they are read (exactly) and rounded as they are written,
//! and each operation whose result is of a 16-bit dtype is computed in
//! `f32` and rounded once to that dtype ([`Op::Round`]), so it gives the
//! correctly rounded 16-bit result (f32 carries more than twice their
//! significand bits plus two) on every backend. Negation, `abs`, `min`,
//! `max` and `select` give one of their operands and need no rounding;
//! comparisons compare the exact values.
//!
//! The generators see 16-bit dtypes only as the dtypes of arguments
//! (`Typed::dtypes`, their storage) and in `Round`; every node is of a
//! dtype they compute on.

use std::collections::HashMap;
use std::sync::Arc;

use kiln_core::{DType, Result};

use super::check::{Op, Param, Stmt, TNode, Typed, check_typed};
use super::node::{BinOp, UnOp};
use super::ty::Vt;
use super::value::Value;
use crate::widen::half_to_f32;
pub(crate) use crate::widen::is_half;

/// Check `stmts` over `params` with placeholders bound by `bind`, every
/// 16-bit value then computed in `f32` ([`lower`]): the typed body every
/// generator prints and the CPU runs.
pub(crate) fn check(kernel: &str, params: &[Param], stmts: &[Stmt], bind: &HashMap<Arc<str>, DType>) -> Result<Typed> {
    Ok(lower(check_typed(kernel, params, stmts, bind)?))
}

/// `v` rounded once to the 16-bit float `d` (nearest, ties to even), as an `f32`.
pub(crate) fn round_f64(d: DType, v: f64) -> f32 {
    match d {
        DType::BF16 => half::bf16::from_f64(v).to_f32(),
        _ => half::f16::from_f64(v).to_f32(),
    }
}

const F32: Vt = Vt::Num(DType::F32);

fn half_ty(t: Vt) -> Option<DType> {
    t.dtype().filter(|d| is_half(*d))
}

/// `body` with every 16-bit value computed in `f32` (see the module
/// documentation); the same body when it has none.
pub(crate) fn lower(body: Typed) -> Typed {
    if !body.nodes.iter().any(|n| half_ty(n.ty).is_some()) {
        return body;
    }
    let mut out =
        Lowering { nodes: Vec::with_capacity(body.nodes.len() * 2), map: Vec::with_capacity(body.nodes.len()) };
    for n in &body.nodes {
        let v = out.node(n);
        out.map.push(v);
    }
    let stores = body.stores.iter().map(|&(p, v)| (p, out.map[v as usize])).collect();
    Typed { nodes: out.nodes, stores, dtypes: body.dtypes }
}

struct Lowering {
    nodes: Vec<TNode>,
    /// The new node of each old one.
    map: Vec<u32>,
}

impl Lowering {
    fn push(&mut self, op: Op, ty: Vt, args: &[u32]) -> u32 {
        let mut a = [0u32; 3];
        a[..args.len()].copy_from_slice(args);
        self.nodes.push(TNode { op, ty, args: a });
        (self.nodes.len() - 1) as u32
    }

    fn ty(&self, v: u32) -> Vt {
        self.nodes[v as usize].ty
    }

    /// The new node computing old node `n` (its operands already lowered).
    fn node(&mut self, n: &TNode) -> u32 {
        let args: Vec<u32> = n.operands().iter().map(|&a| self.map[a as usize]).collect();
        let Some(h) = half_ty(n.ty) else {
            return match n.op {
                // A cast from a widened 16-bit value: from its f32 value.
                Op::Cast if self.ty(args[0]) == n.ty => args[0],
                _ => self.push(n.op, n.ty, &args),
            };
        };
        match n.op {
            // Read from a 16-bit argument: widened by the generators.
            Op::Load(_) | Op::Scalar(_) | Op::At(_) => self.push(n.op, F32, &args),
            Op::Const(c) => {
                let v = half_to_f32(h, c.bits as u16);
                self.push(Op::Const(Value::from_bits(DType::F32, u64::from(v.to_bits()))), F32, &[])
            }
            // To a 16-bit dtype from any: one rounding of the operand's value.
            Op::Cast => self.push(Op::Round(h), F32, &args),
            // One of the operands: already a value of the dtype.
            Op::Un(UnOp::Neg | UnOp::Abs) | Op::Bin(BinOp::Min | BinOp::Max) | Op::Select => {
                self.push(n.op, F32, &args)
            }
            _ => {
                let exact = self.push(n.op, F32, &args);
                self.push(Op::Round(h), F32, &[exact])
            }
        }
    }
}
