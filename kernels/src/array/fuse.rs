//! Running an array expression: its arrays and scalars become the
//! arguments of one generated elementwise kernel, cached by the
//! expression's form, its operands' access (in order or strided) and rank.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use kiln_core::{Args, Backend, DType, Element, Error, Result};

use super::lazy::{ArrayExpr, Term};
use super::{Array, Layout};
use crate::expr::{index, select, var, Expr, Ty};
use crate::user::{Elementwise, ElementwiseKernel};

/// An array operand: the array and its layout broadcast to the result.
struct Operand<'a, B: Backend, T: Element> {
    array: &'a Array<B, T>,
    layout: Layout,
}

impl<B: Backend, T: Element> Operand<'_, B, T> {
    /// Read at the element index (row-major, every element once).
    fn in_order(&self) -> bool {
        self.layout.is_standard()
    }
}

/// The operands of a term and the kernel body reading them.
struct Gathered<'a, B: Backend, T: Element> {
    shape: &'a [usize],
    arrays: Vec<Operand<'a, B, T>>,
    scalars: Vec<T>,
}

impl<'a, B: Backend, T: Element> Gathered<'a, B, T> {
    fn array(&mut self, a: &'a Array<B, T>) -> Result<Expr> {
        let k = match self
            .arrays
            .iter()
            .position(|o| Arc::ptr_eq(&o.array.buffer, &a.buffer) && o.array.layout == a.layout)
        {
            Some(k) => k,
            None => {
                let layout = a.layout.broadcast_to(self.shape)?;
                self.arrays.push(Operand { array: a, layout });
                self.arrays.len() - 1
            }
        };
        let x = var(&format!("x{k}"));
        if self.arrays[k].in_order() {
            return Ok(x);
        }
        let mut at = var(&format!("o{k}"));
        for d in dims(self.shape) {
            let i = (index() / var(&format!("w{d}"))) % var(&format!("n{d}"));
            at = at + i.cast(DType::I32) * var(&format!("s{k}_{d}"));
        }
        Ok(x.at(at))
    }

    fn body(&mut self, t: &'a Term<B, T>) -> Result<Expr> {
        Ok(match t {
            Term::Array(a) => self.array(a)?,
            Term::Scalar(v) => {
                self.scalars.push(*v);
                var(&format!("c{}", self.scalars.len() - 1))
            }
            Term::Un(op, a) => self.body(a)?.unary(*op),
            Term::Bin(op, a, b) => {
                let a = self.body(a)?;
                a.binary(*op, self.body(b)?)
            }
            Term::Where(op, [l, r, a, b]) => {
                let l = self.body(l)?;
                let cond = l.binary(*op, self.body(r)?);
                let a = self.body(a)?;
                select(cond, a, self.body(b)?)
            }
        })
    }
}

/// The dimensions a strided read steps through (extent-1 ones add nothing).
fn dims(shape: &[usize]) -> impl Iterator<Item = usize> + '_ {
    (0..shape.len()).filter(|&d| shape[d] > 1)
}

/// The kernel for `body` over operands read in order or strided.
fn kernel(body: &Expr, in_order: &[bool], scalars: usize, shape: &[usize]) -> Result<ElementwiseKernel> {
    static CACHE: OnceLock<Mutex<HashMap<String, ElementwiseKernel>>> = OnceLock::new();
    let strided: Vec<usize> = (0..in_order.len()).filter(|&k| !in_order[k]).collect();
    let ds: Vec<usize> = dims(shape).collect();
    let key = format!("{body} | {in_order:?} {scalars} {ds:?}");
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(k) = cache.get(&key) {
        return Ok(k.clone());
    }
    let mut h = std::collections::hash_map::DefaultHasher::new();
    key.hash(&mut h);
    let t = Ty::param("T");
    let mut def = Elementwise::new(format!("kiln_array_{:016x}", h.finish()));
    for (k, &ordered) in in_order.iter().enumerate() {
        def = if ordered { def.input(&format!("x{k}"), t.clone()) } else { def.raw(&format!("x{k}"), t.clone()) };
    }
    for j in 0..scalars {
        def = def.scalar(&format!("c{j}"), t.clone());
    }
    def = def.output("out", t);
    if !strided.is_empty() {
        for d in &ds {
            def = def.scalar(&format!("n{d}"), DType::U32).scalar(&format!("w{d}"), DType::U32);
        }
    }
    for k in &strided {
        def = def.scalar(&format!("o{k}"), DType::I32);
        for d in &ds {
            def = def.scalar(&format!("s{k}_{d}"), DType::I32);
        }
    }
    let k = def.set("out", body.clone()).build()?;
    cache.insert(key, k.clone());
    Ok(k)
}

impl<B: Backend, T: Element> ArrayExpr<B, T> {
    /// Compute the expression into a new row-major array, with one
    /// generated kernel (cached: a loop does not recompile). `Err` where
    /// the arrays do not broadcast together (naming both shapes), where
    /// there is no array to give a device, or a strided operand reaches
    /// past the i32 indices of a strided read.
    pub fn eval(&self) -> Result<Array<B, T>> {
        let shape = self.shape()?.to_vec();
        let mut g = Gathered { shape: &shape, arrays: Vec::new(), scalars: Vec::new() };
        let body = g.body(&self.term)?;
        let first = g.arrays.first().map(|o| o.array).ok_or_else(|| {
            Error::invalid("array expression", "it holds scalars only, and no array to say on which device")
        })?;
        let stream = first.stream().clone();
        let n: usize = shape.iter().product();
        let mut out = stream.alloc::<T>(n)?;
        if n == 0 {
            return Array::from_buffer(out, &shape);
        }
        let in_order: Vec<bool> = g.arrays.iter().map(Operand::in_order).collect();
        let k = kernel(&body, &in_order, g.scalars.len(), &shape)?;
        let limit = |what: String| {
            Error::invalid("array expression", format!("{what} is past the i32 indices of a strided read"))
        };
        let mut args = Args::new();
        for o in &g.arrays {
            args = if o.in_order() {
                let at = o.layout.offset();
                args.arg(o.array.buffer.slice(at..at + n)?)
            } else {
                if i32::try_from(o.layout.span().1).is_err() {
                    return Err(limit(format!("buffer index {}", o.layout.span().1)));
                }
                args.arg(&*o.array.buffer)
            };
        }
        for &c in &g.scalars {
            args = args.scalar(c);
        }
        args = args.arg(&mut out);
        if in_order.iter().any(|&o| !o) {
            let w: Vec<usize> = (0..shape.len()).map(|d| shape[d + 1..].iter().product()).collect();
            for d in dims(&shape) {
                // index() is u32: a launch past it is refused, so these fit.
                args = args.scalar(shape[d] as u32).scalar(w[d] as u32);
            }
        }
        for o in g.arrays.iter().filter(|o| !o.in_order()) {
            let off = i32::try_from(o.layout.offset()).map_err(|_| limit(format!("offset {}", o.layout.offset())))?;
            args = args.scalar(off);
            for d in dims(&shape) {
                let s = o.layout.strides()[d];
                args = args.scalar(i32::try_from(s).map_err(|_| limit(format!("stride {s}")))?);
            }
        }
        k.launch(&stream, args)?;
        Array::from_buffer(out, &shape)
    }
}
