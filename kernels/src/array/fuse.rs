//! Running an array expression: its arrays and scalars become the
//! parameters of one generated kernel (elementwise, or a reduction whose
//! map is the expression), cached by the expression's form, its operands'
//! access (in order or strided) and rank.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use kiln_core::{Args, Backend, DType, Element, Error, Result, Scalar, Stream};

use super::{Array, Layout};
use crate::expr::{BinOp, Expr, Ty, UnOp, index, select, var};
use crate::user::{Elementwise, Reduction};

/// A node of an array expression.
pub(crate) enum Term<B: Backend, T: Element> {
    Array(Array<B, T>),
    Scalar(T),
    Un(UnOp, Arc<Term<B, T>>),
    Bin(BinOp, Arc<Term<B, T>>, Arc<Term<B, T>>),
    /// `a` where the mask holds, else `b`.
    Where(Arc<dyn Lower<B>>, Arc<Term<B, T>>, Arc<Term<B, T>>),
    /// An expression of another element type converted to `T`.
    Cast(Arc<dyn Lower<B>>),
}

/// An array of any element type, as a plan reads it.
pub(crate) trait Source<B: Backend>: Sync {
    /// The buffer's address, to tell two views of one buffer apart from two buffers.
    fn buffer_id(&self) -> *const ();
    fn layout(&self) -> &Layout;
    fn dtype(&self) -> DType;
    fn stream(&self) -> &Stream<B>;
    /// `args` and the elements `range` of the buffer, or all of it.
    fn push<'b>(&'b self, args: Args<'b, B>, range: Option<std::ops::Range<usize>>) -> Result<Args<'b, B>>;
}

impl<B: Backend, T: Element> Source<B> for Array<B, T> {
    fn buffer_id(&self) -> *const () {
        Arc::as_ptr(&self.buffer).cast()
    }
    fn layout(&self) -> &Layout {
        &self.layout
    }
    fn dtype(&self) -> DType {
        T::DTYPE
    }
    fn stream(&self) -> &Stream<B> {
        self.buffer.stream()
    }
    fn push<'b>(&'b self, args: Args<'b, B>, range: Option<std::ops::Range<usize>>) -> Result<Args<'b, B>> {
        Ok(match range {
            Some(r) => args.arg(self.buffer.slice(r)?),
            None => args.arg(&*self.buffer),
        })
    }
}

/// A part of an expression of another element type (a cast, a mask's
/// comparison) that lowers itself into a plan.
pub(crate) trait Lower<B: Backend>: Send + Sync {
    /// The part's kernel expression, its operands added to `plan`.
    fn lower<'a>(&'a self, plan: &mut Plan<'a, B>, full: &[usize], perm: Option<&[usize]>) -> Result<Expr>;
}

/// An array operand: the array and its layout broadcast to the result.
struct Operand<'a, B: Backend> {
    array: &'a dyn Source<B>,
    layout: Layout,
    /// Read at the element index (row-major, every element once).
    in_order: bool,
}

/// An expression ready to run: the kernel body over named parameters and
/// the arrays and scalars that fill them.
pub(crate) struct Plan<'a, B: Backend> {
    /// The shape the kernel walks in row-major order.
    pub(crate) shape: Vec<usize>,
    pub(crate) body: Expr,
    arrays: Vec<Operand<'a, B>>,
    scalars: Vec<Scalar>,
}

/// The user-kernel builders a plan declares its parameters on.
pub(crate) trait Declare: Sized {
    fn input(self, name: &str, ty: Ty) -> Self;
    fn raw(self, name: &str, ty: Ty) -> Self;
    fn scalar(self, name: &str, ty: Ty) -> Self;
}

macro_rules! declare {
    ($($t:ty),*) => {$(
        impl Declare for $t {
            fn input(self, name: &str, ty: Ty) -> Self {
                <$t>::input(self, name, ty)
            }
            fn raw(self, name: &str, ty: Ty) -> Self {
                <$t>::raw(self, name, ty)
            }
            fn scalar(self, name: &str, ty: Ty) -> Self {
                <$t>::scalar(self, name, ty)
            }
        }
    )*};
}
declare!(Elementwise, Reduction);

/// The dimensions a strided read steps through (extent-1 ones add nothing).
fn dims(shape: &[usize]) -> impl Iterator<Item = usize> + '_ {
    (0..shape.len()).filter(|&d| shape[d] > 1)
}

fn limit(what: String) -> Error {
    Error::invalid("array expression", format!("{what} is past the i32 indices of a strided read"))
}

impl<'a, B: Backend> Plan<'a, B> {
    /// The plan of the expression `term` of shape `full`, its axes walked
    /// in the order `perm` gives (all of them, in order, without one).
    pub(crate) fn new<T: Element>(term: &'a Term<B, T>, full: &[usize], perm: Option<&[usize]>) -> Result<Self> {
        let full = full.to_vec();
        let shape = match perm {
            Some(p) => Layout::standard(&full)?.permuted(p)?.shape().to_vec(),
            None => full.clone(),
        };
        let mut plan = Plan { shape, body: Expr::from(0), arrays: Vec::new(), scalars: Vec::new() };
        plan.body = plan.term(term, &full, perm)?;
        if plan.arrays.is_empty() {
            return Err(Error::invalid(
                "array expression",
                "it holds scalars only, and no array to say on which device",
            ));
        }
        Ok(plan)
    }

    /// The stream of the first array, where the kernel runs.
    pub(crate) fn stream(&self) -> Stream<B> {
        self.arrays[0].array.stream().clone()
    }

    fn array(&mut self, a: &'a dyn Source<B>, full: &[usize], perm: Option<&[usize]>) -> Result<Expr> {
        let same = |o: &Operand<'a, B>| o.array.buffer_id() == a.buffer_id() && o.array.layout() == a.layout();
        let k = match self.arrays.iter().position(same) {
            Some(k) => k,
            None => {
                let mut layout = a.layout().broadcast_to(full)?;
                if let Some(p) = perm {
                    layout = layout.permuted(p)?;
                }
                let in_order = layout.is_standard();
                self.arrays.push(Operand { array: a, layout, in_order });
                self.arrays.len() - 1
            }
        };
        let x = var(&format!("x{k}"));
        if self.arrays[k].in_order {
            return Ok(x);
        }
        let mut at = var(&format!("o{k}"));
        for d in dims(&self.shape) {
            let i = (index() / var(&format!("w{d}"))) % var(&format!("n{d}"));
            at = at + i.cast(DType::I32) * var(&format!("s{k}_{d}"));
        }
        Ok(x.at(at))
    }

    /// The kernel expression of `t`, its operands added to the plan.
    pub(crate) fn term<T: Element>(
        &mut self,
        t: &'a Term<B, T>,
        full: &[usize],
        perm: Option<&[usize]>,
    ) -> Result<Expr> {
        Ok(match t {
            Term::Array(a) => self.array(a, full, perm)?,
            Term::Scalar(v) => {
                self.scalars.push(Scalar::new(*v));
                var(&format!("c{}", self.scalars.len() - 1))
            }
            Term::Un(op, a) => self.term(a, full, perm)?.unary(*op),
            Term::Bin(op, a, b) => {
                let a = self.term(a, full, perm)?;
                a.binary(*op, self.term(b, full, perm)?)
            }
            Term::Where(cond, a, b) => {
                let cond = cond.lower(self, full, perm)?;
                let a = self.term(a, full, perm)?;
                select(cond, a, self.term(b, full, perm)?)
            }
            Term::Cast(x) => x.lower(self, full, perm)?.cast(T::DTYPE),
        })
    }

    fn strided(&self) -> impl Iterator<Item = (usize, &Operand<'a, B>)> {
        self.arrays.iter().enumerate().filter(|(_, o)| !o.in_order)
    }

    /// What the generated kernel depends on, for caching it.
    pub(crate) fn key(&self) -> String {
        let order: Vec<(bool, DType)> = self.arrays.iter().map(|o| (o.in_order, o.array.dtype())).collect();
        let scalars: Vec<DType> = self.scalars.iter().map(Scalar::dtype).collect();
        let ds: Vec<usize> = dims(&self.shape).collect();
        format!("{} | {order:?} {scalars:?} {ds:?}", self.body)
    }

    /// Whether no array is read in order: a reduction then takes its element
    /// count from a zeroed `u32` input of the shape's length (`kx_count`).
    pub(crate) fn needs_count(&self) -> bool {
        self.arrays.iter().all(|o| !o.in_order)
    }

    /// `def` with the plan's parameters declared, in [`args`](Self::args)'
    /// order, and `kx_count` first where `count` says.
    pub(crate) fn declare<D: Declare>(&self, mut def: D, count: bool) -> D {
        if count {
            def = def.input("kx_count", DType::U32.into());
        }
        for (k, o) in self.arrays.iter().enumerate() {
            let (name, ty) = (format!("x{k}"), Ty::from(o.array.dtype()));
            def = if o.in_order { def.input(&name, ty) } else { def.raw(&name, ty) };
        }
        for (j, c) in self.scalars.iter().enumerate() {
            def = def.scalar(&format!("c{j}"), c.dtype().into());
        }
        if self.strided().next().is_some() {
            for d in dims(&self.shape) {
                def = def.scalar(&format!("n{d}"), DType::U32.into()).scalar(&format!("w{d}"), DType::U32.into());
            }
        }
        for (k, _) in self.strided() {
            def = def.scalar(&format!("o{k}"), DType::I32.into());
            for d in dims(&self.shape) {
                def = def.scalar(&format!("s{k}_{d}"), DType::I32.into());
            }
        }
        def
    }

    /// `args` followed by the plan's arguments (`count` first where given).
    pub(crate) fn args<'b>(
        &'b self,
        mut args: Args<'b, B>,
        count: Option<&'b kiln_core::Buffer<B, u32>>,
    ) -> Result<Args<'b, B>> {
        let n: usize = self.shape.iter().product();
        if let Some(c) = count {
            args = args.arg(c);
        }
        for o in &self.arrays {
            args = if o.in_order {
                let at = o.layout.offset();
                o.array.push(args, Some(at..at + n))?
            } else {
                let end = o.layout.span()?.1;
                if i32::try_from(end).is_err() {
                    return Err(limit(format!("buffer index {end}")));
                }
                o.array.push(args, None)?
            };
        }
        for &c in &self.scalars {
            args = args.arg(c);
        }
        if self.strided().next().is_some() {
            for d in dims(&self.shape) {
                let (n, w) = (self.shape[d], self.shape[d + 1..].iter().product::<usize>());
                let wide = |what: String| {
                    Error::invalid("array expression", format!("{what} is past the u32 indices of a strided read"))
                };
                let n = u32::try_from(n).map_err(|_| wide(format!("extent {n}")))?;
                let w = u32::try_from(w).map_err(|_| wide(format!("a step of {w} elements along an axis")))?;
                args = args.scalar(n).scalar(w);
            }
        }
        for (_, o) in self.strided() {
            let off = o.layout.offset();
            args = args.scalar(i32::try_from(off).map_err(|_| limit(format!("offset {off}")))?);
            for d in dims(&self.shape) {
                let s = o.layout.strides()[d];
                args = args.scalar(i32::try_from(s).map_err(|_| limit(format!("stride {s}")))?);
            }
        }
        Ok(args)
    }
}

/// A name for a generated kernel from its cache key.
pub(crate) fn name(prefix: &str, key: &str) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    format!("{prefix}_{:016x}", h.finish())
}
