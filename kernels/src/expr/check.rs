//! Type checking: a kernel body with its argument types bound becomes a
//! typed, flat program (one node per distinct value, in evaluation order),
//! which every code generator prints and the CPU runs.

use std::collections::HashMap;
use std::sync::Arc;

use kiln_core::{DType, Error, Result};

use super::node::{BinOp, Expr, Lit, Node, UnOp};
use super::ty::{STORED, SUPPORTED, Ty, Vt};
use super::value::Value;

/// What a kernel argument is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Read at the element index.
    Input,
    /// Read and written at the element index.
    InOut,
    /// Written at the element index.
    Output,
    /// Read at computed indices.
    Raw,
    /// One value for the whole launch.
    Scalar,
}

impl Role {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Role::Input => "input",
            Role::InOut => "in-out argument",
            Role::Output => "output",
            Role::Raw => "raw input",
            Role::Scalar => "scalar",
        }
    }

    pub(crate) fn is_buffer(self) -> bool {
        self != Role::Scalar
    }

    pub(crate) fn writes(self) -> bool {
        matches!(self, Role::InOut | Role::Output)
    }
}

/// One declared argument.
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub(crate) name: Arc<str>,
    pub(crate) role: Role,
    pub(crate) ty: Ty,
}

/// One statement of a body.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Stmt {
    /// A named local.
    Let(Arc<str>, Expr),
    /// An assignment to an output or in-out argument.
    Set(Arc<str>, Expr),
}

/// An operation of the typed program; operands are node numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Op {
    /// Argument `p` at the element index.
    Load(u32),
    /// Scalar argument `p`.
    Scalar(u32),
    /// Raw argument `p` at the index in operand 0; zero outside it.
    At(u32),
    /// Raw argument `p`'s length (u32).
    LenOf(u32),
    Index,
    Len,
    Const(Value),
    Un(UnOp),
    Bin(BinOp),
    Select,
    Cast,
    Fma,
    /// Operand 0 (any number) rounded once to the 16-bit float dtype,
    /// as an `f32` (see `halves.rs`).
    Round(DType),
}

/// The name of `op` if it is one of the functions Vulkan offers on 32-bit
/// floats only.
pub(crate) fn transcendental(op: &Op) -> Option<&'static str> {
    match op {
        Op::Un(u @ (UnOp::Exp | UnOp::Log | UnOp::Sin | UnOp::Cos | UnOp::Tanh)) => Some(u.name()),
        Op::Bin(BinOp::Pow) => Some("pow"),
        _ => None,
    }
}

/// One value of the typed program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct TNode {
    pub(crate) op: Op,
    pub(crate) ty: Vt,
    pub(crate) args: [u32; 3],
}

impl TNode {
    pub(crate) fn arity(&self) -> usize {
        match self.op {
            Op::Load(_) | Op::Scalar(_) | Op::LenOf(_) | Op::Index | Op::Len | Op::Const(_) => 0,
            Op::At(_) | Op::Un(_) | Op::Cast | Op::Round(_) => 1,
            Op::Bin(_) => 2,
            Op::Select | Op::Fma => 3,
        }
    }

    pub(crate) fn operands(&self) -> &[u32] {
        &self.args[..self.arity()]
    }
}

/// A checked kernel body: nodes in evaluation order (operands before uses),
/// the stores, and each argument's dtype.
#[derive(Clone, Debug, PartialEq)]
pub struct Typed {
    pub(crate) nodes: Vec<TNode>,
    /// (argument, node) per output and in-out argument, in declaration order.
    pub(crate) stores: Vec<(u32, u32)>,
    pub(crate) dtypes: Vec<DType>,
}

impl Typed {
    /// Whether any node is of `pred`.
    pub(crate) fn any(&self, pred: impl Fn(&TNode) -> bool) -> bool {
        self.nodes.iter().any(pred)
    }

    /// The canonical form: one line per node and store. Two bodies with the
    /// same form compute the same thing; generated kernels are cached by it.
    pub(crate) fn canonical(&self) -> String {
        let mut out = String::new();
        for (i, d) in self.dtypes.iter().enumerate() {
            out.push_str(&format!("a{i}:{d} "));
        }
        for (i, n) in self.nodes.iter().enumerate() {
            out.push_str(&format!("\nv{i}:{}={:?}{:?}", n.ty, n.op, n.operands()));
        }
        for (p, v) in &self.stores {
            out.push_str(&format!("\na{p}=v{v}"));
        }
        out
    }
}

/// The checker's state for one body.
struct Checker<'a> {
    kernel: &'a str,
    params: &'a [Param],
    dtypes: Vec<DType>,
    nodes: Vec<TNode>,
    seen: HashMap<TNode, u32>,
    locals: HashMap<Arc<str>, u32>,
    /// Values assigned so far, by argument.
    assigned: HashMap<u32, u32>,
}

fn fail(kernel: &str, reason: impl Into<String>) -> Error {
    Error::invalid(format!("user kernel `{kernel}`"), reason)
}

/// The dtype of each argument with every placeholder bound by `bind`;
/// `Err` for a placeholder `bind` leaves unbound or a dtype user kernels
/// do not compute on.
pub(crate) fn resolve(kernel: &str, ty: &Ty, bind: &HashMap<Arc<str>, DType>, what: &str) -> Result<DType> {
    let d = match ty {
        Ty::Is(d) => *d,
        Ty::Param(p) => *bind.get(p).ok_or_else(|| {
            fail(kernel, format!("{what} has the placeholder type {p}, which no argument of the launch binds"))
        })?,
    };
    if !SUPPORTED.contains(&d) && !STORED.contains(&d) {
        let names: Vec<&str> = SUPPORTED.iter().chain(&STORED).map(|d| d.name()).collect();
        return Err(fail(kernel, format!("{what} is {d}; user kernels compute on {}", names.join(", "))));
    }
    Ok(d)
}

/// Check `stmts` over `params` with placeholders bound by `bind`, its
/// values of the 16-bit floats left as they are (`halves::check` lowers them).
pub(crate) fn check_typed(
    kernel: &str,
    params: &[Param],
    stmts: &[Stmt],
    bind: &HashMap<Arc<str>, DType>,
) -> Result<Typed> {
    let dtypes = params
        .iter()
        .map(|p| resolve(kernel, &p.ty, bind, &format!("{} `{}`", p.role.name(), p.name)))
        .collect::<Result<Vec<_>>>()?;
    let mut c = Checker {
        kernel,
        params,
        dtypes,
        nodes: Vec::new(),
        seen: HashMap::new(),
        locals: HashMap::new(),
        assigned: HashMap::new(),
    };
    for stmt in stmts {
        match stmt {
            Stmt::Let(name, e) => {
                if c.param(name).is_some() {
                    return Err(c.fail(format!("the local `{name}` has the name of an argument")));
                }
                let v = c.lower(e, None)?;
                c.locals.insert(name.clone(), v);
            }
            Stmt::Set(name, e) => {
                let Some(p) = c.param(name) else {
                    return Err(c.fail(format!("assigns `{name}`, which is not an argument")));
                };
                let param = &params[p as usize];
                if !param.role.writes() {
                    return Err(
                        c.fail(format!("writes the {} `{name}`; only outputs can be written", param.role.name()))
                    );
                }
                let want = Vt::Num(c.dtypes[p as usize]);
                let v = c.lower(e, Some(want))?;
                c.expect(v, want, &format!("the value assigned to `{name}` ({e})"))?;
                c.assigned.insert(p, v);
            }
        }
    }
    let mut stores = Vec::new();
    for (p, param) in params.iter().enumerate() {
        match (param.role, c.assigned.get(&(p as u32))) {
            (Role::Output, None) => {
                return Err(c.fail(format!("never assigns its output `{}`", param.name)));
            }
            (_, Some(&v)) => stores.push((p as u32, v)),
            _ => {}
        }
    }
    Ok(Typed { nodes: c.nodes, stores, dtypes: c.dtypes })
}

impl Checker<'_> {
    fn fail(&self, reason: impl Into<String>) -> Error {
        fail(self.kernel, reason)
    }

    fn param(&self, name: &str) -> Option<u32> {
        self.params.iter().position(|p| &*p.name == name).map(|p| p as u32)
    }

    fn ty(&self, v: u32) -> Vt {
        self.nodes[v as usize].ty
    }

    fn expect(&self, v: u32, want: Vt, what: &str) -> Result<()> {
        let got = self.ty(v);
        if got == want {
            Ok(())
        } else {
            Err(self.fail(format!("{what} is {got}, expected {want}; convert with .cast()")))
        }
    }

    fn push(&mut self, op: Op, ty: Vt, args: &[u32]) -> u32 {
        let mut a = [0u32; 3];
        a[..args.len()].copy_from_slice(args);
        let node = TNode { op, ty, args: a };
        if let Some(&v) = self.seen.get(&node) {
            return v;
        }
        let v = self.nodes.len() as u32;
        self.nodes.push(node);
        self.seen.insert(node, v);
        v
    }

    fn constant(&mut self, value: Value) -> u32 {
        self.push(Op::Const(value), value.ty, &[])
    }

    /// A literal as a value of `want`; `bits` where an integer literal may
    /// give the bits of its dtype's signed or unsigned twin (operands of
    /// bitwise operations: `x & 0xffff_ffff` on i32).
    fn literal(&mut self, lit: Lit, want: Option<Vt>, e: &Expr, bits: bool) -> Result<u32> {
        let value = match (lit, want) {
            (Lit::Typed(d, bits), _) => Value::from_bits(d, bits),
            (Lit::Bool(b), _) => Value::bool(b),
            (Lit::Int(v), Some(Vt::Num(d))) => {
                let fit = if bits { fits(v, d) } else { fits_exactly(v, d) };
                if !d.is_float() && !fit {
                    let twin = if bits { " (nor its bits as the twin of the other signedness)" } else { "" };
                    return Err(self.fail(format!("the literal {v} does not fit {d}{twin}, in {e}")));
                }
                Value::int(v, d)
            }
            (Lit::Float(v), Some(Vt::Num(d))) if d.is_float() => {
                let value = Value::float(v, d);
                if d == DType::F32 && v.is_finite() && !value.as_f32().is_finite() {
                    return Err(self.fail(format!(
                        "the literal {v:?} does not fit f32 (its largest finite value is {:e}), in {e}",
                        f32::MAX
                    )));
                }
                if d == DType::F32 && v != 0.0 && value.as_f32() == 0.0 {
                    return Err(self.fail(format!("the literal {v:?} rounds to 0 in f32, in {e}")));
                }
                value
            }
            (Lit::Float(v), Some(t)) => {
                return Err(self.fail(format!("the float literal {v:?} is used as {t} in {e}")));
            }
            (Lit::Int(v), Some(Vt::Bool)) => {
                return Err(self.fail(format!("the integer literal {v} is used as bool in {e}")));
            }
            (_, None) => {
                return Err(self.fail(format!(
                    "cannot tell the dtype of the literal in {e}; write Expr::constant(..) with a typed value"
                )));
            }
        };
        Ok(self.constant(value))
    }

    /// Lower the operands of a same-typed operation: the non-literal ones
    /// first, then the literals at their type.
    fn same(&mut self, operands: &[&Expr], want: Option<Vt>) -> Result<Vec<u32>> {
        self.operands(operands, want, false)
    }

    /// [`same`](Self::same) for the operands of a bitwise operation, whose
    /// integer literals may be given as bits (see [`literal`](Self::literal)).
    fn bitwise(&mut self, operands: &[&Expr], want: Option<Vt>) -> Result<Vec<u32>> {
        self.operands(operands, want, true)
    }

    fn operands(&mut self, operands: &[&Expr], want: Option<Vt>, bits: bool) -> Result<Vec<u32>> {
        let ty = operands.iter().find_map(|e| self.infer(e)).or(want);
        let mut out = Vec::with_capacity(operands.len());
        for e in operands {
            out.push(match e.node() {
                Node::Lit(lit @ (Lit::Int(_) | Lit::Float(_))) => self.literal(*lit, ty, e, bits)?,
                _ => self.lower(e, ty)?,
            });
        }
        Ok(out)
    }

    /// The type `e` has of its own, without context: `None` for trees of
    /// untyped literals (and for names the lowering reports).
    fn infer(&self, e: &Expr) -> Option<Vt> {
        match e.node() {
            Node::Var(name) => match self.locals.get(name) {
                Some(&v) => Some(self.ty(v)),
                None => self.param(name).map(|p| Vt::Num(self.dtypes[p as usize])),
            },
            Node::At(name, _) => self.param(name).map(|p| Vt::Num(self.dtypes[p as usize])),
            Node::LenOf(_) | Node::Index | Node::Len => Some(Vt::Num(DType::U32)),
            Node::Lit(Lit::Typed(d, _)) => Some(Vt::Num(*d)),
            Node::Lit(Lit::Bool(_)) => Some(Vt::Bool),
            Node::Lit(_) => None,
            Node::Un(_, a) => self.infer(a),
            Node::Bin(op, _, _) if op.is_comparison() => Some(Vt::Bool),
            Node::Bin(BinOp::Shl | BinOp::Shr, a, _) => self.infer(a),
            Node::Bin(_, a, b) | Node::Select(_, a, b) => self.infer(a).or_else(|| self.infer(b)),
            Node::Fma(a, b, c) => self.infer(a).or_else(|| self.infer(b)).or_else(|| self.infer(c)),
            Node::Cast(_, ty) => resolve(self.kernel, ty, &self.bindings(), "").ok().map(Vt::Num),
        }
    }

    fn lower(&mut self, e: &Expr, want: Option<Vt>) -> Result<u32> {
        match e.node() {
            Node::Var(name) => self.var(name),
            Node::At(name, index) => {
                let p = self.raw(name, e)?;
                let i = match index.node() {
                    Node::Lit(Lit::Int(v)) => {
                        let d =
                            [DType::I32, DType::U32, DType::I64, DType::U64].into_iter().find(|d| fits_exactly(*v, *d));
                        let d = d.ok_or_else(|| self.fail(format!("the index {v} in {e} fits no integer dtype")))?;
                        self.constant(Value::int(*v, d))
                    }
                    _ => self.same(&[index], Some(Vt::Num(DType::I32)))?[0],
                };
                if !self.ty(i).is_int() {
                    return Err(self.fail(format!("the index in {e} is {}, expected an integer", self.ty(i))));
                }
                Ok(self.push(Op::At(p), Vt::Num(self.dtypes[p as usize]), &[i]))
            }
            Node::LenOf(name) => {
                let p = self.raw(name, e)?;
                Ok(self.push(Op::LenOf(p), Vt::Num(DType::U32), &[]))
            }
            Node::Index => Ok(self.push(Op::Index, Vt::Num(DType::U32), &[])),
            Node::Len => Ok(self.push(Op::Len, Vt::Num(DType::U32), &[])),
            Node::Lit(lit) => self.literal(*lit, want, e, false),
            Node::Un(op, a) => {
                let a = if *op == UnOp::Not { self.bitwise(&[a], want)? } else { self.same(&[a], want)? }[0];
                let t = self.ty(a);
                let ok = match op {
                    UnOp::Not => t == Vt::Bool || t.is_int(),
                    UnOp::Neg | UnOp::Abs => t.dtype().is_some(),
                    _ => t.is_float(),
                };
                if !ok {
                    let kind = if op.float_only() { "floats" } else { "numbers" };
                    return Err(self.fail(format!("{} is defined on {kind}, not {t}, in {e}", op.name())));
                }
                Ok(self.push(Op::Un(*op), t, &[a]))
            }
            Node::Bin(op @ (BinOp::Shl | BinOp::Shr), a, b) => {
                let a = self.bitwise(&[a], want)?[0];
                let ta = self.ty(a);
                let b = self.same(&[b], Some(ta))?[0];
                if !ta.is_int() || !self.ty(b).is_int() {
                    return Err(self.fail(format!(
                        "{} needs integers, not {ta} and {}, in {e}",
                        op.name(),
                        self.ty(b)
                    )));
                }
                Ok(self.push(Op::Bin(*op), ta, &[a, b]))
            }
            Node::Bin(op, a, b) => {
                let operand_want = if op.is_comparison() { None } else { want };
                let v = match op {
                    BinOp::And | BinOp::Or | BinOp::Xor => self.bitwise(&[a, b], operand_want)?,
                    _ => self.same(&[a, b], operand_want)?,
                };
                let (ta, tb) = (self.ty(v[0]), self.ty(v[1]));
                if ta != tb {
                    return Err(self.fail(format!("{} of {ta} and {tb} in {e}; convert one with .cast()", op.name())));
                }
                let ok = match op {
                    BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Min | BinOp::Max => ta.dtype().is_some(),
                    BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => ta.dtype().is_some(),
                    BinOp::Eq | BinOp::Ne => true,
                    BinOp::Rem => ta.is_int(),
                    BinOp::And | BinOp::Or | BinOp::Xor => ta.is_int() || ta == Vt::Bool,
                    BinOp::Pow => ta.is_float(),
                    BinOp::Shl | BinOp::Shr => ta.is_int(),
                };
                if !ok {
                    return Err(self.fail(format!("{} is not defined on {ta}, in {e}", op.name())));
                }
                let ty = if op.is_comparison() { Vt::Bool } else { ta };
                Ok(self.push(Op::Bin(*op), ty, &v))
            }
            Node::Select(c, a, b) => {
                let c = self.same(&[c], Some(Vt::Bool))?[0];
                self.expect(c, Vt::Bool, &format!("the condition of {e}"))?;
                let v = self.same(&[a, b], want)?;
                let (ta, tb) = (self.ty(v[0]), self.ty(v[1]));
                if ta != tb {
                    return Err(self.fail(format!("select of {ta} and {tb} in {e}; convert one with .cast()")));
                }
                Ok(self.push(Op::Select, ta, &[c, v[0], v[1]]))
            }
            Node::Fma(a, b, c) => {
                let v = self.same(&[a, b, c], want)?;
                let t = self.ty(v[0]);
                if v.iter().any(|&x| self.ty(x) != t) || !t.is_float() {
                    let tys: Vec<String> = v.iter().map(|&x| self.ty(x).to_string()).collect();
                    return Err(
                        self.fail(format!("fma needs three floats of one dtype, got {} in {e}", tys.join(", ")))
                    );
                }
                Ok(self.push(Op::Fma, t, &v))
            }
            Node::Cast(a, ty) => {
                let bind: HashMap<Arc<str>, DType> = self.bindings();
                let to = resolve(self.kernel, ty, &bind, &format!("the cast {e}"))?;
                // A literal takes the cast's dtype, and must fit it.
                let a = self.same(&[a], Some(Vt::Num(to)))?[0];
                if self.ty(a) == Vt::Num(to) {
                    return Ok(a);
                }
                Ok(self.push(Op::Cast, Vt::Num(to), &[a]))
            }
        }
    }

    /// The placeholder bindings implied by the resolved argument dtypes.
    fn bindings(&self) -> HashMap<Arc<str>, DType> {
        let mut out = HashMap::new();
        for (p, d) in self.params.iter().zip(&self.dtypes) {
            if let Ty::Param(name) = &p.ty {
                out.insert(name.clone(), *d);
            }
        }
        out
    }

    fn var(&mut self, name: &Arc<str>) -> Result<u32> {
        if let Some(&v) = self.locals.get(name) {
            return Ok(v);
        }
        let Some(p) = self.param(name) else {
            let names: Vec<&str> = self.params.iter().map(|p| &*p.name).collect();
            return Err(
                self.fail(format!("names `{name}`, which is neither an argument ({}) nor a local", names.join(", ")))
            );
        };
        let ty = Vt::Num(self.dtypes[p as usize]);
        match self.params[p as usize].role {
            Role::Input => Ok(self.push(Op::Load(p), ty, &[])),
            Role::InOut => match self.assigned.get(&p) {
                Some(&v) => Ok(v),
                None => Ok(self.push(Op::Load(p), ty, &[])),
            },
            Role::Scalar => Ok(self.push(Op::Scalar(p), ty, &[])),
            Role::Output => self
                .assigned
                .get(&p)
                .copied()
                .ok_or_else(|| self.fail(format!("reads the output `{name}` before assigning it"))),
            Role::Raw => {
                Err(self.fail(format!("reads the raw input `{name}` without an index; write var(\"{name}\").at(i)")))
            }
        }
    }

    fn raw(&self, name: &str, e: &Expr) -> Result<u32> {
        match self.param(name) {
            Some(p) if self.params[p as usize].role == Role::Raw => Ok(p),
            Some(p) => Err(self.fail(format!(
                "{e} indexes the {} `{name}`; only raw inputs are indexed",
                self.params[p as usize].role.name()
            ))),
            None => Err(self.fail(format!("{e} indexes `{name}`, which is not an argument"))),
        }
    }
}

/// Whether the integer `v` is a value of the integer dtype `d`.
fn fits_exactly(v: i128, d: DType) -> bool {
    match d {
        DType::I32 => i32::try_from(v).is_ok(),
        DType::U32 => u32::try_from(v).is_ok(),
        DType::I64 => i64::try_from(v).is_ok(),
        _ => u64::try_from(v).is_ok(),
    }
}

/// Whether the integer `v` is a value of the integer dtype `d`, or of its
/// unsigned or signed twin (so that `x & 0xffff_ffff` works on i32).
fn fits(v: i128, d: DType) -> bool {
    let (lo, hi) = match d {
        DType::I32 | DType::U32 => (i128::from(i32::MIN), i128::from(u32::MAX)),
        _ => (i128::from(i64::MIN), i128::from(u64::MAX)),
    };
    (lo..=hi).contains(&v)
}
