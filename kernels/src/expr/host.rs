//! The CPU form of a typed body: the nodes run column by column over chunks
//! of elements (each node one tight loop over the chunk), chunks in
//! parallel with rayon. Rust's own operations give kiln's semantics: `as`
//! saturates float to integer conversions (NaN to 0), `f32::min` ignores a
//! NaN operand, and the integer operations are the wrapping ones.

use kiln_core::{DType, Error, HostArgs, Result};
use rayon::prelude::*;

use super::check::{Op, Role, TNode, Typed};
use super::node::{BinOp, UnOp};
use super::ty::Vt;
use super::value::Value;

/// Elements per chunk: each node's column of a chunk stays in the L1/L2 cache.
pub(crate) const CHUNK: usize = 2048;

/// One node's values over a chunk.
#[derive(Clone, Debug)]
pub(crate) enum Col {
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    B(Vec<bool>),
}

impl Col {
    pub(crate) fn new(t: Vt) -> Col {
        match t {
            Vt::Bool => Col::B(Vec::with_capacity(CHUNK)),
            Vt::Num(DType::I32) => Col::I32(Vec::with_capacity(CHUNK)),
            Vt::Num(DType::U32) => Col::U32(Vec::with_capacity(CHUNK)),
            Vt::Num(DType::I64) => Col::I64(Vec::with_capacity(CHUNK)),
            Vt::Num(DType::U64) => Col::U64(Vec::with_capacity(CHUNK)),
            Vt::Num(DType::F32) => Col::F32(Vec::with_capacity(CHUNK)),
            Vt::Num(_) => Col::F64(Vec::with_capacity(CHUNK)),
        }
    }
}

/// An argument's elements.
#[derive(Clone, Copy)]
pub(crate) enum Slice<'a> {
    I32(&'a [i32]),
    U32(&'a [u32]),
    I64(&'a [i64]),
    U64(&'a [u64]),
    F32(&'a [f32]),
    F64(&'a [f64]),
}

/// An output's elements.
pub(crate) enum SliceMut<'a> {
    I32(&'a mut [i32]),
    U32(&'a mut [u32]),
    I64(&'a mut [i64]),
    U64(&'a mut [u64]),
    F32(&'a mut [f32]),
    F64(&'a mut [f64]),
}

/// Run `$e` with `$t` the Rust type of dtype `$d`.
macro_rules! by_dtype {
    ($d:expr, $t:ident => $e:expr) => {
        match $d {
            kiln_core::DType::I32 => {
                type $t = i32;
                $e
            }
            kiln_core::DType::U32 => {
                type $t = u32;
                $e
            }
            kiln_core::DType::I64 => {
                type $t = i64;
                $e
            }
            kiln_core::DType::U64 => {
                type $t = u64;
                $e
            }
            kiln_core::DType::F32 => {
                type $t = f32;
                $e
            }
            _ => {
                type $t = f64;
                $e
            }
        }
    };
}

pub(crate) use by_dtype;

impl<'a> Slice<'a> {
    pub(crate) fn input(args: &HostArgs<'a>, index: usize, d: DType) -> Result<Slice<'a>> {
        Ok(by_dtype!(d, T => T::slice(args.input::<T>(index)?)))
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Slice::I32(s) => s.len(),
            Slice::U32(s) => s.len(),
            Slice::I64(s) => s.len(),
            Slice::U64(s) => s.len(),
            Slice::F32(s) => s.len(),
            Slice::F64(s) => s.len(),
        }
    }
}

impl<'a> SliceMut<'a> {
    pub(crate) fn output(args: &mut HostArgs<'a>, index: usize, d: DType) -> Result<SliceMut<'a>> {
        Ok(by_dtype!(d, T => T::slice_mut(args.output::<T>(index)?)))
    }

    /// Chunks of `CHUNK` elements.
    pub(crate) fn chunks(self) -> Vec<SliceMut<'a>> {
        self.chunks_of(CHUNK)
    }

    /// Chunks of `size` elements.
    pub(crate) fn chunks_of(self, size: usize) -> Vec<SliceMut<'a>> {
        match self {
            SliceMut::I32(s) => s.chunks_mut(size).map(SliceMut::I32).collect(),
            SliceMut::U32(s) => s.chunks_mut(size).map(SliceMut::U32).collect(),
            SliceMut::I64(s) => s.chunks_mut(size).map(SliceMut::I64).collect(),
            SliceMut::U64(s) => s.chunks_mut(size).map(SliceMut::U64).collect(),
            SliceMut::F32(s) => s.chunks_mut(size).map(SliceMut::F32).collect(),
            SliceMut::F64(s) => s.chunks_mut(size).map(SliceMut::F64).collect(),
        }
    }
}

/// Arithmetic of one dtype with kiln's semantics. Operations a dtype does
/// not have are never reached (the checker refuses them) and are identities.
pub(crate) trait Num: Copy + Default + PartialOrd + Send + Sync + 'static {
    fn slice(s: &[Self]) -> Slice<'_>;
    fn slice_mut(s: &mut [Self]) -> SliceMut<'_>;
    fn col(c: &Col) -> Option<&Vec<Self>>;
    fn col_mut(c: &mut Col) -> Option<&mut Vec<Self>>;
    fn of_bits(bits: u64) -> Self;
    fn of(s: Slice<'_>) -> Option<&[Self]>;
    /// Low 32 bits, for shift amounts.
    fn low_u32(self) -> u32;
    /// As an index: `None` when negative.
    fn to_index(self) -> Option<u64>;
    fn from_bool(b: bool) -> Self;
    fn un(op: UnOp, a: Self) -> Self;
    fn bin(op: BinOp, a: Self, b: Self) -> Self;
    fn shift(left: bool, a: Self, s: u32) -> Self;
    fn fma(a: Self, b: Self, c: Self) -> Self;
}

macro_rules! int_num {
    ($t:ty, $v:ident, $signed:expr) => {
        impl Num for $t {
            fn slice(s: &[Self]) -> Slice<'_> {
                Slice::$v(s)
            }
            fn slice_mut(s: &mut [Self]) -> SliceMut<'_> {
                SliceMut::$v(s)
            }
            fn col(c: &Col) -> Option<&Vec<Self>> {
                if let Col::$v(v) = c {
                    Some(v)
                } else {
                    None
                }
            }
            fn col_mut(c: &mut Col) -> Option<&mut Vec<Self>> {
                if let Col::$v(v) = c {
                    Some(v)
                } else {
                    None
                }
            }
            fn of_bits(bits: u64) -> Self {
                bits as $t
            }
            fn of(s: Slice<'_>) -> Option<&[Self]> {
                if let Slice::$v(s) = s {
                    Some(s)
                } else {
                    None
                }
            }
            fn low_u32(self) -> u32 {
                self as u32
            }
            #[allow(unused_comparisons)]
            fn to_index(self) -> Option<u64> {
                if self < 0 {
                    None
                } else {
                    Some(self as u64)
                }
            }
            fn from_bool(b: bool) -> Self {
                b as $t
            }
            fn un(op: UnOp, a: Self) -> Self {
                match op {
                    UnOp::Neg => a.wrapping_neg(),
                    UnOp::Not => !a,
                    UnOp::Abs if $signed && a > <$t>::MAX => a,
                    #[allow(unused_comparisons)]
                    UnOp::Abs => {
                        if a < 0 {
                            a.wrapping_neg()
                        } else {
                            a
                        }
                    }
                    _ => a,
                }
            }
            fn bin(op: BinOp, a: Self, b: Self) -> Self {
                match op {
                    BinOp::Add => a.wrapping_add(b),
                    BinOp::Sub => a.wrapping_sub(b),
                    BinOp::Mul => a.wrapping_mul(b),
                    BinOp::Div => a.checked_div(b).unwrap_or(a),
                    BinOp::Rem => a.checked_rem(b).unwrap_or(0),
                    BinOp::And => a & b,
                    BinOp::Or => a | b,
                    BinOp::Xor => a ^ b,
                    BinOp::Min => {
                        if b < a {
                            b
                        } else {
                            a
                        }
                    }
                    BinOp::Max => {
                        if a < b {
                            b
                        } else {
                            a
                        }
                    }
                    _ => a,
                }
            }
            fn shift(left: bool, a: Self, s: u32) -> Self {
                let s = s & (<$t>::BITS - 1);
                if left {
                    a << s
                } else {
                    a >> s
                }
            }
            fn fma(a: Self, _: Self, _: Self) -> Self {
                a
            }
        }
    };
}
int_num!(i32, I32, true);
int_num!(u32, U32, false);
int_num!(i64, I64, true);
int_num!(u64, U64, false);

macro_rules! float_num {
    ($t:ty, $v:ident, $bits:ty) => {
        impl Num for $t {
            fn slice(s: &[Self]) -> Slice<'_> {
                Slice::$v(s)
            }
            fn slice_mut(s: &mut [Self]) -> SliceMut<'_> {
                SliceMut::$v(s)
            }
            fn col(c: &Col) -> Option<&Vec<Self>> {
                if let Col::$v(v) = c {
                    Some(v)
                } else {
                    None
                }
            }
            fn col_mut(c: &mut Col) -> Option<&mut Vec<Self>> {
                if let Col::$v(v) = c {
                    Some(v)
                } else {
                    None
                }
            }
            fn of_bits(bits: u64) -> Self {
                <$t>::from_bits(bits as $bits)
            }
            fn of(s: Slice<'_>) -> Option<&[Self]> {
                if let Slice::$v(s) = s {
                    Some(s)
                } else {
                    None
                }
            }
            fn low_u32(self) -> u32 {
                0
            }
            fn to_index(self) -> Option<u64> {
                None
            }
            fn from_bool(b: bool) -> Self {
                if b {
                    1.0
                } else {
                    0.0
                }
            }
            fn un(op: UnOp, a: Self) -> Self {
                match op {
                    UnOp::Neg => -a,
                    UnOp::Abs => a.abs(),
                    UnOp::Sqrt => a.sqrt(),
                    UnOp::Rsqrt => 1.0 / a.sqrt(),
                    UnOp::Exp => a.exp(),
                    UnOp::Log => a.ln(),
                    UnOp::Sin => a.sin(),
                    UnOp::Cos => a.cos(),
                    UnOp::Tanh => a.tanh(),
                    UnOp::Floor => a.floor(),
                    UnOp::Ceil => a.ceil(),
                    UnOp::Not => a,
                }
            }
            fn bin(op: BinOp, a: Self, b: Self) -> Self {
                match op {
                    BinOp::Add => a + b,
                    BinOp::Sub => a - b,
                    BinOp::Mul => a * b,
                    BinOp::Div => a / b,
                    BinOp::Min => a.min(b),
                    BinOp::Max => a.max(b),
                    BinOp::Pow => a.powf(b),
                    _ => a,
                }
            }
            fn shift(_: bool, a: Self, _: u32) -> Self {
                a
            }
            fn fma(a: Self, b: Self, c: Self) -> Self {
                a.mul_add(b, c)
            }
        }
    };
}
float_num!(f32, F32, u32);
float_num!(f64, F64, u64);

fn internal(what: &str) -> Error {
    Error::invalid("user kernel on the CPU", format!("{what}: operand types disagree with the checked body"))
}

/// Run the column ops of one node over elements `[start, start + len)` of
/// `n`. A scalar argument given in `inputs` is read there as a column (the
/// folds' `a` and `b`).
pub(crate) struct Exec<'a> {
    pub(crate) start: usize,
    pub(crate) len: usize,
    pub(crate) n: usize,
    pub(crate) inputs: &'a [Option<Slice<'a>>],
    pub(crate) scalars: &'a [Option<Value>],
}

fn fill<T: Num>(out: &mut Col, len: usize, v: T) -> Result<()> {
    let o = T::col_mut(out).ok_or_else(|| internal("constant"))?;
    o.clear();
    o.resize(len, v);
    Ok(())
}

fn map1<A: Num, T: Num>(a: &Col, out: &mut Col, f: impl Fn(A) -> T) -> Result<()> {
    let a = A::col(a).ok_or_else(|| internal("operand"))?;
    let o = T::col_mut(out).ok_or_else(|| internal("result"))?;
    o.clear();
    o.extend(a.iter().map(|&x| f(x)));
    Ok(())
}

fn map2<A: Num, B: Num, T: Num>(a: &Col, b: &Col, out: &mut Col, f: impl Fn(A, B) -> T) -> Result<()> {
    let (a, b) = (A::col(a).ok_or_else(|| internal("operand"))?, B::col(b).ok_or_else(|| internal("operand"))?);
    let o = T::col_mut(out).ok_or_else(|| internal("result"))?;
    o.clear();
    o.extend(a.iter().zip(b).map(|(&x, &y)| f(x, y)));
    Ok(())
}

fn compare<T: Num>(op: BinOp, a: &Col, b: &Col, out: &mut Col) -> Result<()> {
    let (a, b) = (T::col(a).ok_or_else(|| internal("operand"))?, T::col(b).ok_or_else(|| internal("operand"))?);
    let Col::B(o) = out else { return Err(internal("comparison")) };
    o.clear();
    let z = a.iter().zip(b);
    match op {
        BinOp::Lt => o.extend(z.map(|(x, y)| x < y)),
        BinOp::Le => o.extend(z.map(|(x, y)| x <= y)),
        BinOp::Gt => o.extend(z.map(|(x, y)| x > y)),
        BinOp::Ge => o.extend(z.map(|(x, y)| x >= y)),
        BinOp::Eq => o.extend(z.map(|(x, y)| x == y)),
        _ => o.extend(z.map(|(x, y)| x != y)),
    }
    Ok(())
}

fn binary<T: Num>(op: BinOp, a: &Col, b: &Col, out: &mut Col) -> Result<()> {
    // One loop per operation, so that each vectorises.
    match op {
        BinOp::Add => map2::<T, T, T>(a, b, out, |x, y| T::bin(BinOp::Add, x, y)),
        BinOp::Sub => map2::<T, T, T>(a, b, out, |x, y| T::bin(BinOp::Sub, x, y)),
        BinOp::Mul => map2::<T, T, T>(a, b, out, |x, y| T::bin(BinOp::Mul, x, y)),
        BinOp::Div => map2::<T, T, T>(a, b, out, |x, y| T::bin(BinOp::Div, x, y)),
        BinOp::Min => map2::<T, T, T>(a, b, out, |x, y| T::bin(BinOp::Min, x, y)),
        BinOp::Max => map2::<T, T, T>(a, b, out, |x, y| T::bin(BinOp::Max, x, y)),
        _ => map2::<T, T, T>(a, b, out, |x, y| T::bin(op, x, y)),
    }
}

fn shift<T: Num>(left: bool, a: &Col, b: &Col, out: &mut Col) -> Result<()> {
    match b {
        Col::I32(_) => map2::<T, i32, T>(a, b, out, |x, s| T::shift(left, x, s.low_u32())),
        Col::U32(_) => map2::<T, u32, T>(a, b, out, |x, s| T::shift(left, x, s)),
        Col::I64(_) => map2::<T, i64, T>(a, b, out, |x, s| T::shift(left, x, s.low_u32())),
        _ => map2::<T, u64, T>(a, b, out, |x, s| T::shift(left, x, s.low_u32())),
    }
}

fn cast_to<T: Num + FromAll>(a: &Col, out: &mut Col) -> Result<()> {
    match a {
        Col::I32(_) => map1::<i32, T>(a, out, T::from_i32),
        Col::U32(_) => map1::<u32, T>(a, out, T::from_u32),
        Col::I64(_) => map1::<i64, T>(a, out, T::from_i64),
        Col::U64(_) => map1::<u64, T>(a, out, T::from_u64),
        Col::F32(_) => map1::<f32, T>(a, out, T::from_f32),
        Col::F64(_) => map1::<f64, T>(a, out, T::from_f64),
        Col::B(v) => {
            let o = T::col_mut(out).ok_or_else(|| internal("cast"))?;
            o.clear();
            o.extend(v.iter().map(|&b| T::from_bool(b)));
            Ok(())
        }
    }
}

/// Rust's `as` from every dtype: kiln's conversion semantics.
pub(crate) trait FromAll {
    fn from_i32(v: i32) -> Self;
    fn from_u32(v: u32) -> Self;
    fn from_i64(v: i64) -> Self;
    fn from_u64(v: u64) -> Self;
    fn from_f32(v: f32) -> Self;
    fn from_f64(v: f64) -> Self;
}

macro_rules! from_all {
    ($($t:ty),*) => {$(
        impl FromAll for $t {
            fn from_i32(v: i32) -> Self { v as $t }
            fn from_u32(v: u32) -> Self { v as $t }
            fn from_i64(v: i64) -> Self { v as $t }
            fn from_u64(v: u64) -> Self { v as $t }
            fn from_f32(v: f32) -> Self { v as $t }
            fn from_f64(v: f64) -> Self { v as $t }
        }
    )*};
}
from_all!(i32, u32, i64, u64, f32, f64);

fn gather<T: Num>(src: Slice<'_>, idx: &Col, out: &mut Col) -> Result<()> {
    let s: &[T] = typed_slice::<T>(src).ok_or_else(|| internal("raw input"))?;
    let get =
        |i: Option<u64>| i.and_then(|i| usize::try_from(i).ok()).and_then(|i| s.get(i)).copied().unwrap_or_default();
    match idx {
        Col::I32(_) => map1::<i32, T>(idx, out, |i| get(i.to_index())),
        Col::U32(_) => map1::<u32, T>(idx, out, |i| get(i.to_index())),
        Col::I64(_) => map1::<i64, T>(idx, out, |i| get(i.to_index())),
        _ => map1::<u64, T>(idx, out, |i| get(i.to_index())),
    }
}

fn typed_slice<T: Num>(s: Slice<'_>) -> Option<&[T]> {
    T::of(s)
}

impl Exec<'_> {
    fn node(&self, n: &TNode, before: &[Col], out: &mut Col) -> Result<()> {
        let arg = |k: usize| &before[n.args[k] as usize];
        let dtype = n.ty.dtype().unwrap_or(DType::U32);
        match n.op {
            Op::Load(p) | Op::Scalar(p) if self.inputs.get(p as usize).is_some_and(Option::is_some) => {
                let s = self.inputs[p as usize].ok_or_else(|| internal("load"))?;
                by_dtype!(dtype, T => {
                    let s = typed_slice::<T>(s).ok_or_else(|| internal("load"))?;
                    let o = T::col_mut(out).ok_or_else(|| internal("load"))?;
                    o.clear();
                    o.extend_from_slice(&s[self.start..self.start + self.len]);
                    Ok(())
                })
            }
            Op::Const(c) if n.ty == Vt::Bool => {
                let v = c.bits != 0;
                let Col::B(o) = out else { return Err(internal("constant")) };
                o.clear();
                o.resize(self.len, v);
                Ok(())
            }
            Op::Scalar(p) => {
                let v = self.scalars[p as usize].ok_or_else(|| internal("scalar"))?;
                by_dtype!(dtype, T => fill(out, self.len, T::of_bits(v.bits)))
            }
            Op::Load(_) => Err(internal("load")),
            Op::Const(c) => by_dtype!(dtype, T => fill(out, self.len, T::of_bits(c.bits))),
            Op::At(p) => {
                let s = self.inputs[p as usize].ok_or_else(|| internal("raw input"))?;
                by_dtype!(dtype, T => gather::<T>(s, arg(0), out))
            }
            Op::LenOf(p) => {
                let s = self.inputs[p as usize].ok_or_else(|| internal("raw input"))?;
                fill(out, self.len, s.len() as u32)
            }
            Op::Index => {
                let Col::U32(o) = out else { return Err(internal("index")) };
                o.clear();
                o.extend((self.start..self.start + self.len).map(|i| i as u32));
                Ok(())
            }
            Op::Len => fill(out, self.len, self.n as u32),
            Op::Un(UnOp::Not) if n.ty == Vt::Bool => {
                let (Col::B(a), Col::B(o)) = (arg(0), out) else { return Err(internal("not")) };
                o.clear();
                o.extend(a.iter().map(|x| !x));
                Ok(())
            }
            Op::Un(op) => by_dtype!(dtype, T => map1::<T, T>(arg(0), out, |x| T::un(op, x))),
            Op::Bin(op) if op.is_comparison() => match arg(0) {
                Col::B(a) => {
                    let (Col::B(b), Col::B(o)) = (arg(1), out) else { return Err(internal("comparison")) };
                    o.clear();
                    let eq = op == BinOp::Eq;
                    o.extend(a.iter().zip(b).map(|(x, y)| (x == y) == eq));
                    Ok(())
                }
                a => by_dtype!(col_dtype(a), T => compare::<T>(op, a, arg(1), out)),
            },
            Op::Bin(op) if n.ty == Vt::Bool => {
                let (Col::B(a), Col::B(b), Col::B(o)) = (arg(0), arg(1), out) else { return Err(internal("logic")) };
                o.clear();
                let z = a.iter().zip(b);
                match op {
                    BinOp::And => o.extend(z.map(|(x, y)| x & y)),
                    BinOp::Or => o.extend(z.map(|(x, y)| x | y)),
                    _ => o.extend(z.map(|(x, y)| x ^ y)),
                }
                Ok(())
            }
            Op::Bin(op @ (BinOp::Shl | BinOp::Shr)) => {
                by_dtype!(dtype, T => shift::<T>(op == BinOp::Shl, arg(0), arg(1), out))
            }
            Op::Bin(op) => by_dtype!(dtype, T => binary::<T>(op, arg(0), arg(1), out)),
            Op::Select => {
                let Col::B(c) = arg(0) else { return Err(internal("select")) };
                match (arg(1), arg(2), out) {
                    (Col::B(a), Col::B(b), Col::B(o)) => {
                        o.clear();
                        o.extend(c.iter().zip(a.iter().zip(b)).map(|(&c, (&a, &b))| if c { a } else { b }));
                        Ok(())
                    }
                    (a, b, out) => by_dtype!(dtype, T => {
                        let (a, b) = (T::col(a).ok_or_else(|| internal("select"))?, T::col(b).ok_or_else(|| internal("select"))?);
                        let o = T::col_mut(out).ok_or_else(|| internal("select"))?;
                        o.clear();
                        o.extend(c.iter().zip(a.iter().zip(b)).map(|(&c, (&a, &b))| if c { a } else { b }));
                        Ok(())
                    }),
                }
            }
            Op::Cast => by_dtype!(dtype, T => cast_to::<T>(arg(0), out)),
            Op::Fma => by_dtype!(dtype, T => {
                let (a, b, c) = (
                    T::col(arg(0)).ok_or_else(|| internal("fma"))?,
                    T::col(arg(1)).ok_or_else(|| internal("fma"))?,
                    T::col(arg(2)).ok_or_else(|| internal("fma"))?,
                );
                let o = T::col_mut(out).ok_or_else(|| internal("fma"))?;
                o.clear();
                o.extend(a.iter().zip(b).zip(c).map(|((&a, &b), &c)| T::fma(a, b, c)));
                Ok(())
            }),
        }
    }
}

fn col_dtype(c: &Col) -> DType {
    match c {
        Col::I32(_) => DType::I32,
        Col::U32(_) => DType::U32,
        Col::I64(_) => DType::I64,
        Col::U64(_) => DType::U64,
        Col::F32(_) => DType::F32,
        Col::F64(_) | Col::B(_) => DType::F64,
    }
}

pub(crate) fn store(col: &Col, out: &mut SliceMut<'_>) -> Result<()> {
    if col.len() != chunk_len(out) {
        return Err(internal("store: a column and its output chunk differ in length"));
    }
    match (col, out) {
        (Col::I32(c), SliceMut::I32(o)) => o.copy_from_slice(c),
        (Col::U32(c), SliceMut::U32(o)) => o.copy_from_slice(c),
        (Col::I64(c), SliceMut::I64(o)) => o.copy_from_slice(c),
        (Col::U64(c), SliceMut::U64(o)) => o.copy_from_slice(c),
        (Col::F32(c), SliceMut::F32(o)) => o.copy_from_slice(c),
        (Col::F64(c), SliceMut::F64(o)) => o.copy_from_slice(c),
        _ => return Err(internal("store")),
    }
    Ok(())
}

/// Run an elementwise body over a launch's arguments: the arguments in
/// declaration order, each raw input's length, then the element count.
pub(crate) fn elementwise(roles: &[Role], body: &Typed, args: &mut HostArgs<'_>) -> Result<()> {
    let mut inputs: Vec<Option<Slice<'_>>> = vec![None; roles.len()];
    let mut scalars: Vec<Option<Value>> = vec![None; roles.len()];
    let mut outputs: Vec<(usize, Vec<SliceMut<'_>>)> = Vec::new();
    for (p, role) in roles.iter().enumerate() {
        let d = body.dtypes[p];
        match role {
            Role::Input | Role::Raw => inputs[p] = Some(Slice::input(args, p, d)?),
            Role::Scalar => {
                let bits = by_dtype!(d, T => scalar_bits::<T>(args, p)?);
                scalars[p] = Some(Value::from_bits(d, bits));
            }
            Role::Output | Role::InOut => {}
        }
    }
    for (p, role) in roles.iter().enumerate() {
        if role.writes() {
            outputs.push((p, SliceMut::output(args, p, body.dtypes[p])?.chunks()));
        }
    }
    // In-out arguments are read from their own chunk before it is stored.
    // The first input's length (inputs are indexed by parameter, so a
    // parameter declared before it, of any role, must not shift the pairing).
    let n = inputs.iter().zip(roles).find_map(|(s, r)| s.as_ref().filter(|_| *r == Role::Input)).map(Slice::len);
    let n = n.or_else(|| outputs.first().map(|(_, c)| c.iter().map(chunk_len).sum())).unwrap_or(0);
    let tasks = n.div_ceil(CHUNK);
    let mut per_task: Vec<Vec<(usize, SliceMut<'_>)>> = (0..tasks).map(|_| Vec::new()).collect();
    for (p, chunks) in outputs {
        for (t, c) in chunks.into_iter().enumerate() {
            if let Some(task) = per_task.get_mut(t) {
                task.push((p, c));
            }
        }
    }
    let (inputs, scalars) = (&inputs[..], &scalars[..]);
    per_task.into_par_iter().enumerate().try_for_each_init(
        || body.nodes.iter().map(|n| Col::new(n.ty)).collect::<Vec<_>>(),
        |cols, (t, mut outs)| {
            let start = t * CHUNK;
            let len = CHUNK.min(n - start);
            let mut task_inputs = inputs.to_vec();
            for (p, c) in &outs {
                if roles[*p] == Role::InOut {
                    task_inputs[*p] = Some(chunk_slice(c));
                }
            }
            let exec = Exec { start, len, n, inputs: &task_inputs, scalars };
            run(&exec, body, cols, &outs)?;
            for (p, out) in outs.iter_mut() {
                let v = body.stores.iter().find(|(q, _)| *q as usize == *p).map(|(_, v)| *v as usize);
                if let Some(v) = v {
                    store(&cols[v], out)?;
                }
            }
            Ok(())
        },
    )
}

/// Evaluate every node over one chunk; in-out arguments are read from the
/// chunk of their own slice (which starts at the chunk's first element).
pub(crate) fn run(exec: &Exec<'_>, body: &Typed, cols: &mut [Col], outs: &[(usize, SliceMut<'_>)]) -> Result<()> {
    for (k, n) in body.nodes.iter().enumerate() {
        let (before, rest) = cols.split_at_mut(k);
        let out = &mut rest[0];
        if let Op::Load(p) = n.op {
            if outs.iter().any(|(q, _)| *q == p as usize) {
                let local = Exec { start: 0, ..*exec };
                local.node(n, before, out)?;
                continue;
            }
        }
        exec.node(n, before, out)?;
    }
    Ok(())
}

fn chunk_len(c: &SliceMut<'_>) -> usize {
    match c {
        SliceMut::I32(s) => s.len(),
        SliceMut::U32(s) => s.len(),
        SliceMut::I64(s) => s.len(),
        SliceMut::U64(s) => s.len(),
        SliceMut::F32(s) => s.len(),
        SliceMut::F64(s) => s.len(),
    }
}

fn chunk_slice<'a>(c: &'a SliceMut<'_>) -> Slice<'a> {
    match c {
        SliceMut::I32(s) => Slice::I32(s),
        SliceMut::U32(s) => Slice::U32(s),
        SliceMut::I64(s) => Slice::I64(s),
        SliceMut::U64(s) => Slice::U64(s),
        SliceMut::F32(s) => Slice::F32(s),
        SliceMut::F64(s) => Slice::F64(s),
    }
}

pub(crate) fn scalar_bits<T: Num + kiln_core::Element>(args: &HostArgs<'_>, p: usize) -> Result<u64> {
    let v: T = args.scalar(p)?;
    let mut bits = [0u8; 8];
    bits[..size_of::<T>()].copy_from_slice(bytemuck::bytes_of(&v));
    Ok(u64::from_le_bytes(bits))
}
