//! The column machine: a typed body evaluated over a range of elements,
//! node by node, each node one tight loop over the range. A load reads its
//! argument in place and a scalar or constant stays one value (as does
//! every node computed from such values only), so only the nodes that vary
//! per element fill a column; the columns are kept from range to range.

use kiln_core::{DType, Error, Result};
use multiversion::multiversion;

use crate::expr::check::{Op, TNode, Typed};
use crate::expr::halves::round_f64;
use crate::expr::host::{Col, Elem, FromAll, Num, Slice, SliceMut, by_dtype};
use crate::expr::node::{BinOp, UnOp};
use crate::expr::ty::Vt;
use crate::expr::value::Value;
use crate::prefetch::Ahead;
use crate::widen::half_to_f32;

pub(in crate::expr) fn internal(what: &str) -> Error {
    Error::invalid("user kernel on the CPU", format!("{what}: operand types disagree with the checked body"))
}

/// One range of a launch: elements `[start, start + len)` of `n`. Arguments
/// in `inputs` are read there (a scalar given there is read as a column:
/// the folds' `a` and `b`); those listed in `local` are the range's own
/// elements (in-out arguments, read from their output chunk), read from 0.
pub(crate) struct Exec<'a> {
    pub(crate) start: usize,
    pub(crate) len: usize,
    pub(crate) n: usize,
    pub(crate) inputs: &'a [Option<Slice<'a>>],
    pub(crate) scalars: &'a [Option<Value>],
    pub(crate) local: &'a [usize],
}

/// Where a node's values over the range are.
#[derive(Clone, Copy, Debug)]
enum At {
    /// Its own column.
    Col,
    /// Argument `p`'s elements from an offset.
    Arg(usize, usize),
    /// One value, as bits, for every element.
    One(u64),
}

/// A node's values as an operation reads them.
#[derive(Clone, Copy)]
enum Opd<'a, T> {
    Many(&'a [T]),
    One(T),
}

impl<'a, T: Elem> Opd<'a, T> {
    /// As a slice of `len`, filling `scratch` for one value.
    fn many(self, len: usize, scratch: &'a mut Vec<T>) -> &'a [T] {
        match self {
            Opd::Many(s) => s,
            Opd::One(v) => {
                scratch.clear();
                scratch.resize(len, v);
                scratch
            }
        }
    }
}

/// The nodes evaluated before the one being evaluated.
struct Env<'s, 'a> {
    nodes: &'s [TNode],
    cols: &'s [Col],
    at: &'s [At],
    exec: &'s Exec<'a>,
}

impl<'s> Env<'s, '_> {
    fn ty(&self, k: u32) -> Vt {
        self.nodes[k as usize].ty
    }

    fn opd<T: Elem>(&self, k: u32) -> Result<Opd<'s, T>> {
        let len = self.exec.len;
        Ok(match self.at[k as usize] {
            At::One(bits) => Opd::One(T::of_bits(bits)),
            At::Col => Opd::Many(T::col(&self.cols[k as usize]).ok_or_else(|| internal("operand"))?),
            At::Arg(p, from) => {
                let s = self.exec.inputs[p].ok_or_else(|| internal("argument"))?;
                let s = T::of(s).ok_or_else(|| internal("argument"))?;
                Opd::Many(s.get(from..from + len).ok_or_else(|| internal("a load past its argument"))?)
            }
        })
    }
}

/// Where a node's values go: its column, and the lines to ask for while
/// they are computed ([`Ahead::NONE`] unless the node reads only cache).
struct Dst<'d> {
    col: &'d mut Col,
    ahead: &'d mut Ahead,
}

fn out_col<T: Elem>(out: &mut Col) -> Result<&mut Vec<T>> {
    let o = T::col_mut(out).ok_or_else(|| internal("result"))?;
    o.clear();
    Ok(o)
}

/// Elements per step of a loop that asks for lines ([`Ahead::ask`]).
const STEP: usize = 16;

/// `o = f(x[i])` for every `i`: the loop every one-operand node runs, built
/// also for AVX2 (wider vectors, the same operations) and chosen at run
/// time. With lines left in `ahead`, it asks for some every [`STEP`]
/// elements.
#[multiversion(targets("x86_64+avx2"))]
fn each1<A: Copy, T: Copy + Default, F: Fn(A) -> T>(x: &[A], o: &mut Vec<T>, ahead: &mut Ahead, f: F) {
    if ahead.is_done() {
        o.extend(x.iter().map(|&x| f(x)));
        return;
    }
    o.reserve(x.len());
    let mut steps = x.chunks_exact(STEP);
    for a in &mut steps {
        let mut v = [T::default(); STEP];
        for (v, &a) in v.iter_mut().zip(a) {
            *v = f(a);
        }
        o.extend_from_slice(&v);
        ahead.ask();
    }
    o.extend(steps.remainder().iter().map(|&x| f(x)));
}

/// `o = f(x[i], y[i])` for every `i`, as [`each1`].
#[multiversion(targets("x86_64+avx2"))]
fn each2<A: Copy, B: Copy, T: Copy + Default, F: Fn(A, B) -> T>(
    x: &[A],
    y: &[B],
    o: &mut Vec<T>,
    ahead: &mut Ahead,
    f: F,
) {
    if ahead.is_done() {
        o.extend(x.iter().zip(y).map(|(&x, &y)| f(x, y)));
        return;
    }
    let n = x.len().min(y.len());
    o.reserve(n);
    let (mut xs, mut ys) = (x[..n].chunks_exact(STEP), y[..n].chunks_exact(STEP));
    for (a, b) in (&mut xs).zip(&mut ys) {
        let mut v = [T::default(); STEP];
        for (v, (&a, &b)) in v.iter_mut().zip(a.iter().zip(b)) {
            *v = f(a, b);
        }
        o.extend_from_slice(&v);
        ahead.ask();
    }
    o.extend(xs.remainder().iter().zip(ys.remainder()).map(|(&x, &y)| f(x, y)));
}

fn map1<A: Elem, T: Elem>(a: Opd<'_, A>, out: &mut Dst<'_>, f: impl Fn(A) -> T) -> Result<At> {
    match a {
        Opd::One(x) => Ok(At::One(f(x).to_bits())),
        Opd::Many(x) => {
            each1(x, out_col::<T>(out.col)?, out.ahead, f);
            Ok(At::Col)
        }
    }
}

fn map2<A: Elem, B: Elem, T: Elem>(
    a: Opd<'_, A>,
    b: Opd<'_, B>,
    out: &mut Dst<'_>,
    f: impl Fn(A, B) -> T,
) -> Result<At> {
    let ahead = &mut *out.ahead;
    match (a, b) {
        (Opd::One(x), Opd::One(y)) => return Ok(At::One(f(x, y).to_bits())),
        (Opd::Many(x), Opd::One(y)) => each1(x, out_col::<T>(out.col)?, ahead, |x| f(x, y)),
        (Opd::One(x), Opd::Many(y)) => each1(y, out_col::<T>(out.col)?, ahead, |y| f(x, y)),
        (Opd::Many(x), Opd::Many(y)) => each2(x, y, out_col::<T>(out.col)?, ahead, f),
    }
    Ok(At::Col)
}

fn map3<C: Elem, A: Elem, B: Elem, T: Elem>(
    (c, a, b): (Opd<'_, C>, Opd<'_, A>, Opd<'_, B>),
    len: usize,
    out: &mut Dst<'_>,
    f: impl Fn(C, A, B) -> T,
) -> Result<At> {
    if let (Opd::One(c), Opd::One(a), Opd::One(b)) = (c, a, b) {
        return Ok(At::One(f(c, a, b).to_bits()));
    }
    let (mut sc, mut sa, mut sb) = (Vec::new(), Vec::new(), Vec::new());
    let (c, a, b) = (c.many(len, &mut sc), a.many(len, &mut sa), b.many(len, &mut sb));
    out_col::<T>(out.col)?.extend(c.iter().zip(a.iter().zip(b)).map(|(&c, (&a, &b))| f(c, a, b)));
    Ok(At::Col)
}

/// One loop per operation, so that each vectorises.
fn unary<T: Num>(op: UnOp, a: Opd<'_, T>, out: &mut Dst<'_>) -> Result<At> {
    macro_rules! arms {
        ($($o:ident),*) => {
            match op {
                $(UnOp::$o => map1::<T, T>(a, out, |x| T::un(UnOp::$o, x)),)*
            }
        };
    }
    arms!(Neg, Not, Abs, Sqrt, Rsqrt, Exp, Log, Sin, Cos, Tanh, Floor, Ceil)
}

fn binary<T: Num>(op: BinOp, a: Opd<'_, T>, b: Opd<'_, T>, out: &mut Dst<'_>) -> Result<At> {
    macro_rules! arms {
        ($($o:ident),*) => {
            match op {
                $(BinOp::$o => map2::<T, T, T>(a, b, out, |x, y| T::bin(BinOp::$o, x, y)),)*
                _ => map2::<T, T, T>(a, b, out, |x, y| T::bin(op, x, y)),
            }
        };
    }
    arms!(Add, Sub, Mul, Div, Rem, Min, Max, And, Or, Xor)
}

fn compare<T: Elem + PartialOrd>(op: BinOp, a: Opd<'_, T>, b: Opd<'_, T>, out: &mut Dst<'_>) -> Result<At> {
    match op {
        BinOp::Lt => map2::<T, T, bool>(a, b, out, |x, y| x < y),
        BinOp::Le => map2::<T, T, bool>(a, b, out, |x, y| x <= y),
        BinOp::Gt => map2::<T, T, bool>(a, b, out, |x, y| x > y),
        BinOp::Ge => map2::<T, T, bool>(a, b, out, |x, y| x >= y),
        BinOp::Eq => map2::<T, T, bool>(a, b, out, |x, y| x == y),
        _ => map2::<T, T, bool>(a, b, out, |x, y| x != y),
    }
}

fn cast_to<T: Num + FromAll>(from: Vt, k: u32, env: &Env<'_, '_>, out: &mut Dst<'_>) -> Result<At> {
    match from {
        Vt::Bool => map1::<bool, T>(env.opd(k)?, out, T::from_bool),
        Vt::Num(DType::I32) => map1::<i32, T>(env.opd(k)?, out, T::from_i32),
        Vt::Num(DType::U32) => map1::<u32, T>(env.opd(k)?, out, T::from_u32),
        Vt::Num(DType::I64) => map1::<i64, T>(env.opd(k)?, out, T::from_i64),
        Vt::Num(DType::U64) => map1::<u64, T>(env.opd(k)?, out, T::from_u64),
        Vt::Num(DType::F32) => map1::<f32, T>(env.opd(k)?, out, T::from_f32),
        Vt::Num(_) => map1::<f64, T>(env.opd(k)?, out, T::from_f64),
    }
}

fn shift<T: Num>(left: bool, a: Opd<'_, T>, by: Vt, k: u32, env: &Env<'_, '_>, out: &mut Dst<'_>) -> Result<At> {
    match by {
        Vt::Num(DType::I32) => map2::<T, i32, T>(a, env.opd(k)?, out, |x, s| T::shift(left, x, s.low_u32())),
        Vt::Num(DType::U32) => map2::<T, u32, T>(a, env.opd(k)?, out, |x, s| T::shift(left, x, s)),
        Vt::Num(DType::I64) => map2::<T, i64, T>(a, env.opd(k)?, out, |x, s| T::shift(left, x, s.low_u32())),
        _ => map2::<T, u64, T>(a, env.opd(k)?, out, |x, s| T::shift(left, x, s.low_u32())),
    }
}

fn gather<T: Num>(src: Slice<'_>, by: Vt, k: u32, env: &Env<'_, '_>, out: &mut Dst<'_>) -> Result<At> {
    let s: &[T] = T::of(src).ok_or_else(|| internal("raw input"))?;
    let get =
        |i: Option<u64>| i.and_then(|i| usize::try_from(i).ok()).and_then(|i| s.get(i)).copied().unwrap_or_default();
    match by {
        Vt::Num(DType::I32) => map1::<i32, T>(env.opd(k)?, out, |i| get(i.to_index())),
        Vt::Num(DType::U32) => map1::<u32, T>(env.opd(k)?, out, |i| get(i.to_index())),
        Vt::Num(DType::I64) => map1::<i64, T>(env.opd(k)?, out, |i| get(i.to_index())),
        _ => map1::<u64, T>(env.opd(k)?, out, |i| get(i.to_index())),
    }
}

/// Evaluate one node into `out`, or say where its values already are.
fn node(n: &TNode, env: &Env<'_, '_>, out: &mut Dst<'_>) -> Result<At> {
    let e = env.exec;
    let [a0, a1, a2] = n.args;
    let dtype = n.ty.dtype().unwrap_or(DType::U32);
    match n.op {
        Op::Load(p) | Op::Scalar(p) if e.inputs.get(p as usize).is_some_and(Option::is_some) => {
            let p = p as usize;
            let from = if e.local.contains(&p) { 0 } else { e.start };
            match e.inputs[p] {
                // A 16-bit argument: widened into the node's column.
                Some(Slice::Half(d, s)) => {
                    let s = s.get(from..from + e.len).ok_or_else(|| internal("a load past its argument"))?;
                    each1(s, out_col::<f32>(out.col)?, out.ahead, |b| half_to_f32(d, b));
                    Ok(At::Col)
                }
                _ => Ok(At::Arg(p, from)),
            }
        }
        Op::Scalar(p) => Ok(At::One(e.scalars[p as usize].ok_or_else(|| internal("scalar"))?.bits)),
        Op::Load(_) => Err(internal("load")),
        Op::Const(c) => Ok(At::One(c.bits)),
        Op::At(p) => match e.inputs[p as usize].ok_or_else(|| internal("raw input"))? {
            Slice::Half(d, s) => gather_half(d, s, env.ty(a0), a0, env, out),
            s => by_dtype!(dtype, T => gather::<T>(s, env.ty(a0), a0, env, out)),
        },
        Op::LenOf(p) => {
            let s = e.inputs[p as usize].ok_or_else(|| internal("raw input"))?;
            Ok(At::One(u64::from(s.len() as u32)))
        }
        Op::Index => {
            out_col::<u32>(out.col)?.extend((e.start..e.start + e.len).map(|i| i as u32));
            Ok(At::Col)
        }
        Op::Len => Ok(At::One(u64::from(e.n as u32))),
        Op::Un(UnOp::Not) if n.ty == Vt::Bool => map1::<bool, bool>(env.opd(a0)?, out, |x| !x),
        Op::Un(op) => by_dtype!(dtype, T => unary::<T>(op, env.opd(a0)?, out)),
        Op::Bin(op) if op.is_comparison() => match env.ty(a0) {
            Vt::Bool => {
                let eq = op == BinOp::Eq;
                map2::<bool, bool, bool>(env.opd(a0)?, env.opd(a1)?, out, |x, y| (x == y) == eq)
            }
            Vt::Num(d) => by_dtype!(d, T => compare::<T>(op, env.opd(a0)?, env.opd(a1)?, out)),
        },
        Op::Bin(op) if n.ty == Vt::Bool => {
            let (a, b) = (env.opd::<bool>(a0)?, env.opd::<bool>(a1)?);
            match op {
                BinOp::And => map2(a, b, out, |x, y| x & y),
                BinOp::Or => map2(a, b, out, |x, y| x | y),
                _ => map2(a, b, out, |x, y| x ^ y),
            }
        }
        Op::Bin(op @ (BinOp::Shl | BinOp::Shr)) => {
            by_dtype!(dtype, T => shift::<T>(op == BinOp::Shl, env.opd(a0)?, env.ty(a1), a1, env, out))
        }
        Op::Bin(op) => by_dtype!(dtype, T => binary::<T>(op, env.opd(a0)?, env.opd(a1)?, out)),
        Op::Select => {
            let c = env.opd::<bool>(a0)?;
            match n.ty {
                Vt::Bool => {
                    map3((c, env.opd::<bool>(a1)?, env.opd::<bool>(a2)?), e.len, out, |c, a, b| if c { a } else { b })
                }
                _ => {
                    by_dtype!(dtype, T => map3((c, env.opd::<T>(a1)?, env.opd::<T>(a2)?), e.len, out, |c, a, b| if c { a } else { b }))
                }
            }
        }
        Op::Cast => by_dtype!(dtype, T => cast_to::<T>(env.ty(a0), a0, env, out)),
        Op::Fma => by_dtype!(dtype, T => {
            map3((env.opd::<T>(a0)?, env.opd::<T>(a1)?, env.opd::<T>(a2)?), e.len, out, T::fma)
        }),
        // One rounding from the operand's exact value (integers past 2^53 round twice).
        Op::Round(d) => match env.ty(a0) {
            Vt::Num(DType::F32) => map1::<f32, f32>(env.opd(a0)?, out, |x| round_f64(d, f64::from(x))),
            Vt::Num(DType::F64) => map1::<f64, f32>(env.opd(a0)?, out, |x| round_f64(d, x)),
            Vt::Num(DType::I32) => map1::<i32, f32>(env.opd(a0)?, out, |x| round_f64(d, f64::from(x))),
            Vt::Num(DType::U32) => map1::<u32, f32>(env.opd(a0)?, out, |x| round_f64(d, f64::from(x))),
            Vt::Num(DType::I64) => map1::<i64, f32>(env.opd(a0)?, out, |x| round_f64(d, x as f64)),
            Vt::Num(DType::U64) => map1::<u64, f32>(env.opd(a0)?, out, |x| round_f64(d, x as f64)),
            _ => Err(internal("a rounding to 16 bits")),
        },
    }
}

/// [`gather`] from a 16-bit float raw input, each element widened to f32.
fn gather_half(d: DType, s: &[u16], by: Vt, k: u32, env: &Env<'_, '_>, out: &mut Dst<'_>) -> Result<At> {
    let get = |i: Option<u64>| {
        i.and_then(|i| usize::try_from(i).ok()).and_then(|i| s.get(i)).map_or(0.0, |&b| half_to_f32(d, b))
    };
    match by {
        Vt::Num(DType::I32) => map1::<i32, f32>(env.opd(k)?, out, |i| get(i.to_index())),
        Vt::Num(DType::U32) => map1::<u32, f32>(env.opd(k)?, out, |i| get(i.to_index())),
        Vt::Num(DType::I64) => map1::<i64, f32>(env.opd(k)?, out, |i| get(i.to_index())),
        _ => map1::<u64, f32>(env.opd(k)?, out, |i| get(i.to_index())),
    }
}

/// A body's columns, kept from range to range.
pub(crate) struct Machine<'b> {
    body: &'b Typed,
    cols: Vec<Col>,
    at: Vec<At>,
}

impl<'b> Machine<'b> {
    pub(crate) fn new(body: &'b Typed) -> Self {
        Machine { body, cols: body.nodes.iter().map(|n| Col::new(n.ty)).collect(), at: vec![At::Col; body.nodes.len()] }
    }

    /// Evaluate every node over the range. Nodes that read only cache (no
    /// argument in place, no gather) ask meanwhile for the lines the next
    /// range of as many elements reads in place, so memory works while they
    /// compute.
    pub(crate) fn run(&mut self, exec: &Exec<'_>) -> Result<()> {
        let mut ahead = self.next_lines(exec);
        for (k, n) in self.body.nodes.iter().enumerate() {
            let (cols, rest) = self.cols.split_at_mut(k);
            let env = Env { nodes: &self.body.nodes, cols, at: &self.at, exec };
            let cached = !matches!(n.op, Op::At(_))
                && n.args[..n.arity()].iter().all(|&a| !matches!(self.at[a as usize], At::Arg(..)));
            let mut none = Ahead::NONE;
            let mut out = Dst { col: &mut rest[0], ahead: if cached { &mut ahead } else { &mut none } };
            self.at[k] = node(n, &env, &mut out)?;
        }
        Ok(())
    }

    /// The lines of the range after `exec`'s, of as many elements, in each
    /// argument the body reads in place (not the range's own in-out ones).
    fn next_lines(&self, exec: &Exec<'_>) -> Ahead {
        let mut ahead = Ahead::NONE;
        let (start, end) = (exec.start + exec.len, exec.start + 2 * exec.len);
        for (k, n) in self.body.nodes.iter().enumerate() {
            let (Op::Load(p) | Op::Scalar(p)) = n.op else { continue };
            let first = !self.body.nodes[..k].iter().any(|m| m.op == n.op);
            let input = exec.inputs.get(p as usize).copied().flatten();
            if let Some(s) = input.filter(|_| first && !exec.local.contains(&(p as usize))) {
                s.ask_later(start, end, &mut ahead);
            }
        }
        // Within one pass over the range.
        ahead.pace(exec.len / STEP);
        ahead
    }

    /// Node `v`'s values over the last range run, as a slice (a node of
    /// one value is spread over its column first).
    pub(crate) fn values<'s>(&'s mut self, v: u32, exec: &'s Exec<'s>) -> Result<Slice<'s>> {
        let v = v as usize;
        let d = self.body.nodes[v].ty.dtype().ok_or_else(|| internal("a boolean result"))?;
        match self.at[v] {
            At::Arg(p, from) => {
                let s = exec.inputs[p].ok_or_else(|| internal("argument"))?;
                by_dtype!(d, T => {
                    let s = T::of(s).ok_or_else(|| internal("argument"))?;
                    Ok(T::slice(s.get(from..from + exec.len).ok_or_else(|| internal("a load past its argument"))?))
                })
            }
            At::One(bits) => by_dtype!(d, T => {
                let o = out_col::<T>(&mut self.cols[v])?;
                o.resize(exec.len, T::of_bits(bits));
                self.at[v] = At::Col;
                Ok(T::slice(o))
            }),
            At::Col => by_dtype!(d, T => Ok(T::slice(T::col(&self.cols[v]).ok_or_else(|| internal("result"))?))),
        }
    }

    /// Copy node `v`'s values over the last range run into `out` (past the
    /// cache with `stream`, as [`crate::expr::host::write`]).
    pub(crate) fn store(&mut self, v: u32, exec: &Exec<'_>, out: &mut SliceMut<'_>, stream: bool) -> Result<()> {
        let src = self.values(v, exec)?;
        crate::expr::host::write(src, out, stream)
    }

    /// Whether node `v`'s values over the last range run are the machine's
    /// own (not an argument's).
    pub(crate) fn owns(&self, v: u32) -> bool {
        !matches!(self.at[v as usize], At::Arg(..))
    }

    /// Keep node `v`'s values over the last range run in its own column.
    pub(crate) fn settle(&mut self, v: u32, exec: &Exec<'_>) -> Result<()> {
        if !matches!(self.at[v as usize], At::Col) {
            let col = self.take(v, exec)?;
            self.cols[v as usize] = col;
            self.at[v as usize] = At::Col;
        }
        Ok(())
    }

    /// Node `v`'s column (its values after [`Machine::settle`]).
    pub(crate) fn column(&self, v: u32) -> &Col {
        &self.cols[v as usize]
    }

    /// Exchange node `v`'s column (its values after [`Machine::settle`])
    /// with `col`, a column of the same type.
    pub(crate) fn swap_column(&mut self, v: u32, col: &mut Col) -> Result<()> {
        let mine = &mut self.cols[v as usize];
        if std::mem::discriminant(mine) != std::mem::discriminant(col) {
            return Err(internal("an accumulator"));
        }
        std::mem::swap(mine, col);
        Ok(())
    }

    /// Node `v`'s values over the last range run, as a column of their own.
    pub(crate) fn take(&mut self, v: u32, exec: &Exec<'_>) -> Result<Col> {
        Ok(Col::of(self.values(v, exec)?))
    }
}
