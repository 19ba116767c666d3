//! The CPU form of a typed body: its values (columns, arguments' slices)
//! and the arithmetic of each dtype; elementwise launches, which run the
//! column machine (`host_eval.rs`) on them, are in `host_elementwise.rs`. Rust's own operations give kiln's
//! semantics: `as` saturates float to integer conversions (NaN to 0),
//! `f32::min` ignores a NaN operand, and the integer operations are the
//! wrapping ones.

pub(in crate::expr) mod elementwise;
pub(in crate::expr) mod eval;
pub(in crate::expr) mod fold;
pub(in crate::expr) mod fold_op;
mod generator;
pub(in crate::expr) mod inputs;
pub(in crate::expr) mod op;
pub(in crate::expr) mod scan;
pub(in crate::expr) mod scan_op;

pub(crate) use generator::Host;

use kiln_core::{DType, Error, HostArgs, Result};

use crate::expr::node::{BinOp, UnOp};
use crate::expr::ty::Vt;
use crate::prefetch::Ahead;
use crate::stream_store;
use crate::widen::{half_bits, half_to_f32};

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
    /// A 16-bit float argument (`f16` or `bf16`) as its bits: widened to
    /// f32 as it is read.
    Half(DType, &'a [u16]),
}

/// An output's elements.
pub(crate) enum SliceMut<'a> {
    I32(&'a mut [i32]),
    U32(&'a mut [u32]),
    I64(&'a mut [i64]),
    U64(&'a mut [u64]),
    F32(&'a mut [f32]),
    F64(&'a mut [f64]),
    /// A 16-bit float output as its bits: f32 values rounded as they are written.
    Half(DType, &'a mut [u16]),
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
        Ok(match d {
            DType::F16 => Slice::Half(d, bytemuck::cast_slice(args.input::<half::f16>(index)?)),
            DType::BF16 => Slice::Half(d, bytemuck::cast_slice(args.input::<half::bf16>(index)?)),
            _ => by_dtype!(d, T => T::slice(args.input::<T>(index)?)),
        })
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Slice::I32(s) => s.len(),
            Slice::U32(s) => s.len(),
            Slice::I64(s) => s.len(),
            Slice::U64(s) => s.len(),
            Slice::F32(s) => s.len(),
            Slice::F64(s) => s.len(),
            Slice::Half(_, s) => s.len(),
        }
    }
}

impl<'a> SliceMut<'a> {
    pub(crate) fn output(args: &mut HostArgs<'a>, index: usize, d: DType) -> Result<SliceMut<'a>> {
        Ok(match d {
            DType::F16 => SliceMut::Half(d, bytemuck::cast_slice_mut(args.output::<half::f16>(index)?)),
            DType::BF16 => SliceMut::Half(d, bytemuck::cast_slice_mut(args.output::<half::bf16>(index)?)),
            _ => by_dtype!(d, T => T::slice_mut(args.output::<T>(index)?)),
        })
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
            SliceMut::Half(d, s) => s.chunks_mut(size).map(|c| SliceMut::Half(d, c)).collect(),
        }
    }
}

/// A value a column holds: a number or a boolean.
pub(crate) trait Elem: Copy + Default + Send + Sync + 'static {
    fn col(c: &Col) -> Option<&Vec<Self>>;
    fn col_mut(c: &mut Col) -> Option<&mut Vec<Self>>;
    fn of_bits(bits: u64) -> Self;
    fn to_bits(self) -> u64;
    /// An argument's elements, when of this type.
    fn of(s: Slice<'_>) -> Option<&[Self]>;
    /// An output's elements, when of this type.
    fn of_mut(s: SliceMut<'_>) -> Option<&mut [Self]>;
}

impl Elem for bool {
    fn col(c: &Col) -> Option<&Vec<Self>> {
        if let Col::B(v) = c { Some(v) } else { None }
    }
    fn col_mut(c: &mut Col) -> Option<&mut Vec<Self>> {
        if let Col::B(v) = c { Some(v) } else { None }
    }
    fn of_bits(bits: u64) -> Self {
        bits != 0
    }
    fn to_bits(self) -> u64 {
        u64::from(self)
    }
    fn of(_: Slice<'_>) -> Option<&[Self]> {
        None
    }
    fn of_mut(_: SliceMut<'_>) -> Option<&mut [Self]> {
        None
    }
}

/// Arithmetic of one dtype with kiln's semantics. Operations a dtype does
/// not have are never reached (the checker refuses them) and are identities.
pub(crate) trait Num: Elem + PartialOrd {
    fn slice(s: &[Self]) -> Slice<'_>;
    fn slice_mut(s: &mut [Self]) -> SliceMut<'_>;
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

/// `Elem` and `Num` for a number type held in variant `$v` (of `Col`,
/// `Slice` and `SliceMut`): its bits through `$of_bits` and `$to_bits`, and
/// the rest of `Num`, its arithmetic, given as `$arith`.
macro_rules! number {
    ($t:ty, $v:ident, $of_bits:expr, $to_bits:expr, { $($arith:tt)* }) => {
        impl Elem for $t {
            fn col(c: &Col) -> Option<&Vec<Self>> {
                if let Col::$v(v) = c { Some(v) } else { None }
            }
            fn col_mut(c: &mut Col) -> Option<&mut Vec<Self>> {
                if let Col::$v(v) = c { Some(v) } else { None }
            }
            fn of_bits(bits: u64) -> Self {
                ($of_bits)(bits)
            }
            fn to_bits(self) -> u64 {
                ($to_bits)(self)
            }
            fn of(s: Slice<'_>) -> Option<&[Self]> {
                if let Slice::$v(s) = s { Some(s) } else { None }
            }
            fn of_mut(s: SliceMut<'_>) -> Option<&mut [Self]> {
                if let SliceMut::$v(s) = s { Some(s) } else { None }
            }
        }
        impl Num for $t {
            fn slice(s: &[Self]) -> Slice<'_> {
                Slice::$v(s)
            }
            fn slice_mut(s: &mut [Self]) -> SliceMut<'_> {
                SliceMut::$v(s)
            }
            $($arith)*
        }
    };
}

macro_rules! int_num {
    ($t:ty, $v:ident, $signed:expr) => {
        number!($t, $v, |bits: u64| bits as $t, |x: $t| x as u64, {
            fn low_u32(self) -> u32 {
                self as u32
            }
            #[allow(unused_comparisons)]
            fn to_index(self) -> Option<u64> {
                if self < 0 { None } else { Some(self as u64) }
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
                if left { a << s } else { a >> s }
            }
            fn fma(a: Self, _: Self, _: Self) -> Self {
                a
            }
        });
    };
}
int_num!(i32, I32, true);
int_num!(u32, U32, false);
int_num!(i64, I64, true);
int_num!(u64, U64, false);

macro_rules! float_num {
    ($t:ty, $v:ident, $bits:ty) => {
        number!($t, $v, |bits: u64| <$t>::from_bits(bits as $bits), |x: $t| u64::from(x.to_bits()), {
            fn low_u32(self) -> u32 {
                0
            }
            fn to_index(self) -> Option<u64> {
                None
            }
            fn from_bool(b: bool) -> Self {
                if b { 1.0 } else { 0.0 }
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
        });
    };
}
float_num!(f32, F32, u32);
float_num!(f64, F64, u64);

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

fn internal(what: &str) -> Error {
    Error::invalid("user kernel on the CPU", format!("{what}: operand types disagree with the checked body"))
}

/// One arm per column type, each giving a column of the same type.
macro_rules! each_col {
    ($c:expr, $v:ident => $e:expr) => {
        match $c {
            Col::I32($v) => Col::I32($e),
            Col::U32($v) => Col::U32($e),
            Col::I64($v) => Col::I64($e),
            Col::U64($v) => Col::U64($e),
            Col::F32($v) => Col::F32($e),
            Col::F64($v) => Col::F64($e),
            Col::B($v) => Col::B($e),
        }
    };
}

impl Col {
    /// A column holding `s`'s elements.
    pub(crate) fn of(s: Slice<'_>) -> Col {
        match s {
            Slice::I32(s) => Col::I32(s.to_vec()),
            Slice::U32(s) => Col::U32(s.to_vec()),
            Slice::I64(s) => Col::I64(s.to_vec()),
            Slice::U64(s) => Col::U64(s.to_vec()),
            Slice::F32(s) => Col::F32(s.to_vec()),
            Slice::F64(s) => Col::F64(s.to_vec()),
            Slice::Half(d, s) => Col::F32(s.iter().map(|&b| half_to_f32(d, b)).collect()),
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            Col::I32(v) => v.len(),
            Col::U32(v) => v.len(),
            Col::I64(v) => v.len(),
            Col::U64(v) => v.len(),
            Col::F32(v) => v.len(),
            Col::F64(v) => v.len(),
            Col::B(v) => v.len(),
        }
    }

    /// Elements `[start, end)` as a column of their own.
    pub(crate) fn range(&self, start: usize, end: usize) -> Col {
        each_col!(self, v => v[start..end].to_vec())
    }

    /// The elements `n` times over.
    pub(crate) fn repeat(&self, n: usize) -> Col {
        each_col!(self, v => v.repeat(n))
    }

    /// Every `stride`-th element from `start`, `count` of them.
    pub(crate) fn strided(&self, start: usize, stride: usize, count: usize) -> Col {
        each_col!(self, v => v.iter().skip(start).step_by(stride).take(count).copied().collect())
    }

    /// The elements, as an argument slice (never for booleans).
    pub(crate) fn slice(&self) -> Result<Slice<'_>> {
        Ok(match self {
            Col::I32(v) => Slice::I32(v),
            Col::U32(v) => Slice::U32(v),
            Col::I64(v) => Slice::I64(v),
            Col::U64(v) => Slice::U64(v),
            Col::F32(v) => Slice::F32(v),
            Col::F64(v) => Slice::F64(v),
            Col::B(_) => return Err(internal("a boolean accumulator")),
        })
    }

    /// The columns' elements one after another (all of one type).
    pub(crate) fn concat(cols: &[Col]) -> Result<Col> {
        let first = cols.first().ok_or_else(|| internal("no partial results"))?;
        let mut out = first.range(0, 0);
        for c in cols {
            out.extend(c.slice()?)?;
        }
        Ok(out)
    }

    /// Append `s`'s elements (of the column's type).
    pub(crate) fn extend(&mut self, s: Slice<'_>) -> Result<()> {
        match (self, s) {
            (Col::I32(o), Slice::I32(v)) => o.extend_from_slice(v),
            (Col::U32(o), Slice::U32(v)) => o.extend_from_slice(v),
            (Col::I64(o), Slice::I64(v)) => o.extend_from_slice(v),
            (Col::U64(o), Slice::U64(v)) => o.extend_from_slice(v),
            (Col::F32(o), Slice::F32(v)) => o.extend_from_slice(v),
            (Col::F64(o), Slice::F64(v)) => o.extend_from_slice(v),
            _ => return Err(internal("partial results")),
        }
        Ok(())
    }

    /// Overwrite the first elements with `s`'s (of the column's type).
    pub(crate) fn overwrite(&mut self, s: Slice<'_>) -> Result<()> {
        if s.len() > self.len() {
            return Err(internal("partial results longer than their accumulator"));
        }
        copy_into(s, &mut self.as_slice_mut()?.sub(0, s.len()))
    }

    /// The elements, writable (never for booleans).
    fn as_slice_mut(&mut self) -> Result<SliceMut<'_>> {
        Ok(match self {
            Col::I32(v) => SliceMut::I32(v),
            Col::U32(v) => SliceMut::U32(v),
            Col::I64(v) => SliceMut::I64(v),
            Col::U64(v) => SliceMut::U64(v),
            Col::F32(v) => SliceMut::F32(v),
            Col::F64(v) => SliceMut::F64(v),
            Col::B(_) => return Err(internal("a boolean accumulator")),
        })
    }

    /// Keep the first `len` elements.
    pub(crate) fn truncate(&mut self, len: usize) {
        match self {
            Col::I32(v) => v.truncate(len),
            Col::U32(v) => v.truncate(len),
            Col::I64(v) => v.truncate(len),
            Col::U64(v) => v.truncate(len),
            Col::F32(v) => v.truncate(len),
            Col::F64(v) => v.truncate(len),
            Col::B(v) => v.truncate(len),
        }
    }
}

impl<'a> Slice<'a> {
    /// Elements `[start, end)`.
    pub(crate) fn sub(self, start: usize, end: usize) -> Slice<'a> {
        match self {
            Slice::I32(s) => Slice::I32(&s[start..end]),
            Slice::U32(s) => Slice::U32(&s[start..end]),
            Slice::I64(s) => Slice::I64(&s[start..end]),
            Slice::U64(s) => Slice::U64(&s[start..end]),
            Slice::F32(s) => Slice::F32(&s[start..end]),
            Slice::F64(s) => Slice::F64(&s[start..end]),
            Slice::Half(d, s) => Slice::Half(d, &s[start..end]),
        }
    }

    /// Add the lines of elements `[start, end)` (as many as the slice has)
    /// to `ahead`.
    pub(crate) fn ask_later(self, start: usize, end: usize, ahead: &mut Ahead) {
        let end = end.min(self.len());
        if start < end {
            match self.sub(start, end) {
                Slice::I32(s) => ahead.push(s),
                Slice::U32(s) => ahead.push(s),
                Slice::I64(s) => ahead.push(s),
                Slice::U64(s) => ahead.push(s),
                Slice::F32(s) => ahead.push(s),
                Slice::F64(s) => ahead.push(s),
                Slice::Half(_, s) => ahead.push(s),
            }
        }
    }
}

impl SliceMut<'_> {
    pub(crate) fn len(&self) -> usize {
        match self {
            SliceMut::I32(s) => s.len(),
            SliceMut::U32(s) => s.len(),
            SliceMut::I64(s) => s.len(),
            SliceMut::U64(s) => s.len(),
            SliceMut::F32(s) => s.len(),
            SliceMut::F64(s) => s.len(),
            SliceMut::Half(_, s) => s.len(),
        }
    }

    /// Elements `[start, end)`, writable.
    pub(crate) fn sub(&mut self, start: usize, end: usize) -> SliceMut<'_> {
        match self {
            SliceMut::I32(s) => SliceMut::I32(&mut s[start..end]),
            SliceMut::U32(s) => SliceMut::U32(&mut s[start..end]),
            SliceMut::I64(s) => SliceMut::I64(&mut s[start..end]),
            SliceMut::U64(s) => SliceMut::U64(&mut s[start..end]),
            SliceMut::F32(s) => SliceMut::F32(&mut s[start..end]),
            SliceMut::F64(s) => SliceMut::F64(&mut s[start..end]),
            SliceMut::Half(d, s) => SliceMut::Half(*d, &mut s[start..end]),
        }
    }

    /// The elements, read-only.
    pub(crate) fn as_slice(&self) -> Slice<'_> {
        match self {
            SliceMut::I32(s) => Slice::I32(s),
            SliceMut::U32(s) => Slice::U32(s),
            SliceMut::I64(s) => Slice::I64(s),
            SliceMut::U64(s) => Slice::U64(s),
            SliceMut::F32(s) => Slice::F32(s),
            SliceMut::F64(s) => Slice::F64(s),
            SliceMut::Half(d, s) => Slice::Half(*d, s),
        }
    }
}

/// Copy `src` into `out`, of one type and length.
pub(crate) fn copy_into(src: Slice<'_>, out: &mut SliceMut<'_>) -> Result<()> {
    write(src, out, false)
}

/// Copy `src` into `out`, of one type and length; with `stream`, the whole
/// lines of `out` past the cache (then [`stream_store::fence`] before the
/// output is handed on).
pub(crate) fn write(src: Slice<'_>, out: &mut SliceMut<'_>, stream: bool) -> Result<()> {
    if src.len() != out.len() {
        return Err(internal("store: a column and its output chunk differ in length"));
    }
    match (src, out) {
        (Slice::I32(c), SliceMut::I32(o)) => stream_store::write(o, c, stream),
        (Slice::U32(c), SliceMut::U32(o)) => stream_store::write(o, c, stream),
        (Slice::I64(c), SliceMut::I64(o)) => stream_store::write(o, c, stream),
        (Slice::U64(c), SliceMut::U64(o)) => stream_store::write(o, c, stream),
        (Slice::F32(c), SliceMut::F32(o)) => stream_store::write(o, c, stream),
        (Slice::F64(c), SliceMut::F64(o)) => stream_store::write(o, c, stream),
        // A 16-bit output: each f32 value (one of the type's, the body
        // having rounded it) stored as its 16-bit bits.
        (Slice::F32(c), SliceMut::Half(d, o)) => {
            for (o, &v) in o.iter_mut().zip(c) {
                *o = half_bits(*d, v);
            }
        }
        _ => return Err(internal("store")),
    }
    Ok(())
}

/// Copy a column into `out`, of one type and length (past the cache with
/// `stream`, as [`write()`]).
pub(crate) fn store(col: &Col, out: &mut SliceMut<'_>, stream: bool) -> Result<()> {
    write(col.slice()?, out, stream)
}

/// Chunks a parallel task runs one after another: enough work per task
/// that splitting costs nothing, and many tasks for every thread.
pub(crate) const TASK_CHUNKS: usize = 16;

/// Scalar argument `p` of dtype `d` as the value the body computes on
/// (the 16-bit floats widened to f32).
pub(crate) fn scalar_value(args: &HostArgs<'_>, p: usize, d: DType) -> Result<crate::expr::value::Value> {
    use crate::expr::value::Value;
    let wide = |v: f32| Value::from_bits(DType::F32, u64::from(v.to_bits()));
    Ok(match d {
        DType::F16 => wide(args.scalar::<half::f16>(p)?.to_f32()),
        DType::BF16 => wide(args.scalar::<half::bf16>(p)?.to_f32()),
        _ => Value::from_bits(d, by_dtype!(d, T => scalar_bits::<T>(args, p)?)),
    })
}

pub(crate) fn scalar_bits<T: Num + kiln_core::Element>(args: &HostArgs<'_>, p: usize) -> Result<u64> {
    let v: T = args.scalar(p)?;
    let mut bits = [0u8; 8];
    bits[..size_of::<T>()].copy_from_slice(bytemuck::bytes_of(&v));
    Ok(u64::from_le_bytes(bits))
}
