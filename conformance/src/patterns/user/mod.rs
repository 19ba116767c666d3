//! User kernels: random well-typed integer expressions (every integer
//! operator, comparisons, select, casts between i32 and u32, raw gathers
//! in and out of range, the element index), several per generated kernel,
//! against a reference evaluator written here in i64 arithmetic, apart from
//! every backend. Floats are in [`float`], reductions in [`reduce`], scans in
//! [`scan`] and kernels from source in [`source`].

mod float;
mod halves;
mod ints;
mod reduce;
mod scan;
mod source;

use kiln_core::{Backend, DType, Device};
use kiln_kernels::expr::{Expr, index, select, var};
use kiln_kernels::user::Elementwise;
use rand::Rng;

use self::ints::Ints;
use crate::{CaseRng, Cases, Ctx, Expected, Failure, Tolerance, poisoned};

/// Outputs per generated kernel: with the three inputs, within the eight
/// storage buffers WGSL guarantees.
const OUTPUTS: usize = 5;
/// Generated kernels per run.
const KERNELS: usize = 4;

/// An integer expression over `x`, `y`, `r` (raw), `a` (scalar), the index.
#[derive(Debug, Clone)]
pub(super) enum R {
    X,
    Y,
    A,
    I,
    Lit(i64),
    At(Box<R>),
    Un(&'static str, Box<R>),
    Bin(&'static str, Box<R>, Box<R>),
    Sel(&'static str, Box<R>, Box<R>, Box<R>, Box<R>),
    /// Through the other 32-bit integer type and back.
    Flip(Box<R>),
}

const UN: [&str; 3] = ["neg", "abs", "not"];
const BIN: [&str; 12] = ["+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "min", "max"];
const CMP: [&str; 6] = ["<", "<=", ">", ">=", "==", "!="];

/// Whether `r` has a type of its own (not only literals): operands of
/// comparisons, shift amounts and indices must, since nothing around them
/// gives literals a type.
fn typed(r: &R) -> bool {
    match r {
        R::Lit(_) => false,
        R::X | R::Y | R::A | R::I | R::At(_) | R::Flip(_) => true,
        R::Un(_, a) => typed(a),
        // A shift has its left operand's type; a select its branches'.
        R::Bin("<<" | ">>", a, _) => typed(a),
        R::Bin(_, a, b) | R::Sel(_, _, _, a, b) => typed(a) || typed(b),
    }
}

fn gen_typed(rng: &mut CaseRng, depth: u32) -> R {
    let r = tree(rng, depth);
    if typed(&r) { r } else { R::Bin("^", Box::new(r), Box::new(R::X)) }
}

pub(super) fn tree(rng: &mut CaseRng, depth: u32) -> R {
    let leaf = depth == 0 || rng.random_ratio(1, 4);
    if leaf {
        return match rng.random_range(0..6) {
            0 => R::X,
            1 => R::Y,
            2 => R::A,
            3 => R::I,
            4 => R::Lit(
                *[0i64, 1, -1, 2, 31, 32, 33, 7, i32::MIN as i64, i32::MAX as i64]
                    .get(rng.random_range(0..10))
                    .unwrap_or(&0),
            ),
            _ => R::At(Box::new(gen_typed(rng, 0))),
        };
    }
    let d = depth - 1;
    match rng.random_range(0..10) {
        0 => R::Un(UN[rng.random_range(0..UN.len())], Box::new(tree(rng, d))),
        1 => R::Sel(
            CMP[rng.random_range(0..CMP.len())],
            Box::new(gen_typed(rng, d)),
            Box::new(tree(rng, d)),
            Box::new(tree(rng, d)),
            Box::new(tree(rng, d)),
        ),
        // A cast gives a literal-only operand the cast's dtype: keep it typed.
        2 => R::Flip(Box::new(gen_typed(rng, d))),
        3 => R::At(Box::new(gen_typed(rng, d))),
        _ => R::Bin(BIN[rng.random_range(0..BIN.len())], Box::new(tree(rng, d)), Box::new(tree(rng, d))),
    }
}

/// The kiln expression for `r` on dtype `d` (i32 or u32).
pub(super) fn build(r: &R, d: DType) -> Expr {
    build_with(r, d, "a")
}

/// `build` with the scalar named `scalar`.
pub(super) fn build_with(r: &R, d: DType, scalar: &str) -> Expr {
    let other = if d == DType::I32 { DType::U32 } else { DType::I32 };
    match r {
        R::X => var("x"),
        R::Y => var("y"),
        R::A => var(scalar),
        R::I => index().cast(d),
        R::Lit(v) => Expr::from(if d == DType::U32 { *v as u32 as i64 } else { *v }),
        R::At(i) => var("r").at(build_with(i, d, scalar)),
        R::Un(op, a) => {
            let a = build_with(a, d, scalar);
            match *op {
                "neg" => -a,
                "abs" => a.abs(),
                _ => !a,
            }
        }
        R::Bin(op, a, b) => {
            let (a, b) = (build_with(a, d, scalar), build_with(b, d, scalar));
            match *op {
                "+" => a + b,
                "-" => a - b,
                "*" => a * b,
                "/" => a / b,
                "%" => a % b,
                "&" => a & b,
                "|" => a | b,
                "^" => a ^ b,
                "<<" => a << b,
                ">>" => a >> b,
                "min" => a.min(b),
                _ => a.max(b),
            }
        }
        R::Sel(op, p, q, a, b) => {
            let (p, q) = (build_with(p, d, scalar), build_with(q, d, scalar));
            let c = match *op {
                "<" => p.lt(q),
                "<=" => p.le(q),
                ">" => p.gt(q),
                ">=" => p.ge(q),
                "==" => p.eq(q),
                _ => p.ne(q),
            };
            select(c, build_with(a, d, scalar), build_with(b, d, scalar))
        }
        R::Flip(a) => build_with(a, d, scalar).cast(other).cast(d),
    }
}

/// The reference: `r` at element `i`, in i64 with explicit 32-bit wrapping.
pub(super) struct Env<'a> {
    pub(super) signed: bool,
    pub(super) x: &'a [i64],
    pub(super) y: &'a [i64],
    pub(super) raw: &'a [i64],
    pub(super) a: i64,
}

impl Env<'_> {
    pub(super) fn wrap(&self, v: i64) -> i64 {
        if self.signed { v as i32 as i64 } else { v as u32 as i64 }
    }

    pub(super) fn eval(&self, r: &R, i: usize) -> i64 {
        let min = if self.signed { i32::MIN as i64 } else { -1 };
        match r {
            R::X => self.x[i],
            R::Y => self.y[i],
            R::A => self.a,
            R::I => self.wrap(i as i64),
            R::Lit(v) => self.wrap(*v),
            R::At(k) => {
                let k = self.eval(k, i);
                if k >= 0 && (k as usize) < self.raw.len() { self.raw[k as usize] } else { 0 }
            }
            R::Un(op, a) => {
                let a = self.eval(a, i);
                match *op {
                    "neg" => self.wrap(-a),
                    "abs" => self.wrap(a.abs()),
                    _ => self.wrap(!a),
                }
            }
            R::Bin(op, a, b) => {
                let (a, b) = (self.eval(a, i), self.eval(b, i));
                let shift = (b & 31) as u32;
                match *op {
                    "+" => self.wrap(a + b),
                    "-" => self.wrap(a - b),
                    "*" => self.wrap(a.wrapping_mul(b)),
                    "/" if b == 0 || (a == min && b == -1) => a,
                    "/" => a / b,
                    "%" if b == 0 || (a == min && b == -1) => 0,
                    "%" => a % b,
                    "&" => self.wrap(a & b),
                    "|" => self.wrap(a | b),
                    "^" => self.wrap(a ^ b),
                    "<<" => self.wrap(a << shift),
                    ">>" => a >> shift,
                    "min" => a.min(b),
                    _ => a.max(b),
                }
            }
            R::Sel(op, p, q, a, b) => {
                if super::holds(op, self.eval(p, i), self.eval(q, i)) {
                    self.eval(a, i)
                } else {
                    self.eval(b, i)
                }
            }
            R::Flip(a) => self.eval(a, i),
        }
    }
}

/// Random integer expressions of `T` (i32 or u32).
fn random_ints<B: Backend, T>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure>
where
    T: crate::Sample + kiln_kernels::Number + Into<i64> + TryFrom<i64>,
{
    ints::<B, T>(device, ctx, KERNELS, |rng| (0..OUTPUTS).map(|_| tree(rng, 4)).collect())
}

/// Nested min and max with the negated scalar beside a quotient, a sum or
/// a remainder: ptxas (CUDA 13, sm_90) lost the negation in these when
/// integer min and max were C comparisons (see the CUDA prelude), and
/// random trees meet the shape too rarely to keep it fixed.
fn nested_min_max<B: Backend, T>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure>
where
    T: crate::Sample + kiln_kernels::Number + Into<i64> + TryFrom<i64>,
{
    let b = |op: &'static str, l: R, r: R| R::Bin(op, Box::new(l), Box::new(r));
    let neg_a = || R::Un("neg", Box::new(R::A));
    let exprs = vec![
        b("max", b("+", R::X, R::Y), b("max", neg_a(), R::X)),
        b("min", b("/", R::X, R::Y), b("min", neg_a(), R::X)),
        b("max", b("max", neg_a(), R::Y), b("/", R::X, R::Y)),
        b("min", b("%", R::X, R::Y), b("min", neg_a(), R::Y)),
        b("max", b("min", neg_a(), R::X), b("-", R::X, R::Y)),
    ];
    ints::<B, T>(device, ctx, 1, |_| exprs.clone())
}

/// `kernels` kernels of the expressions `exprs` gives, each output checked.
fn ints<B: Backend, T>(
    device: &Device<B>,
    ctx: &mut Ctx,
    kernels: usize,
    exprs: impl Fn(&mut CaseRng) -> Vec<R>,
) -> Result<(), Failure>
where
    T: crate::Sample + kiln_kernels::Number + Into<i64> + TryFrom<i64>,
{
    let n = ctx.n;
    let inputs = Ints::<B, T>::new(device, ctx, n)?;
    let env = inputs.env();
    let s = device.stream();
    for k in 0..kernels {
        let exprs = exprs(&mut ctx.rng);
        let kernel = random_kernel(k, T::DTYPE, exprs.iter().map(|e| build(e, T::DTYPE)))?;
        let want: Vec<Vec<T>> = exprs
            .iter()
            .map(|e| (0..ctx.n).map(|i| T::try_from(env.eval(e, i)).unwrap_or_default()).collect())
            .collect();
        let mut outs = want.iter().map(|w| poisoned(device, w)).collect::<kiln_core::Result<Vec<_>>>()?;
        let mut args = inputs.args();
        for o in outs.iter_mut() {
            args = args.arg(o);
        }
        kernel.launch(&s, args)?;
        for (j, (o, w)) in outs.iter().zip(&want).enumerate() {
            let got = o.to_vec()?;
            let what = format!("z{j} = {}", build(&exprs[j], T::DTYPE));
            ctx.compare_inputs(
                &what,
                &Expected::new(w.clone(), Tolerance::Exact),
                &got,
                &[("x", &inputs.x), ("y", &inputs.y)],
            )?;
        }
    }
    inputs.unchanged()
}

/// The kernel `random_{k}` of the random-expression cases: inputs `x` and
/// `y`, raw input `r` and scalar `a` of `dtype`, and an output `z{j}` set
/// to each of `bodies`.
pub(super) fn random_kernel(
    k: usize,
    dtype: DType,
    bodies: impl IntoIterator<Item = Expr>,
) -> kiln_core::Result<kiln_kernels::user::ElementwiseKernel> {
    let mut def =
        Elementwise::new(format!("random_{k}")).input("x", dtype).input("y", dtype).raw("r", dtype).scalar("a", dtype);
    for (j, e) in bodies.into_iter().enumerate() {
        def = def.output(&format!("z{j}"), dtype).set(&format!("z{j}"), e);
    }
    def.build()
}

/// Add the user-kernel cases to `group`.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    c.one(group, "user/random-int", DType::I32, |d, ctx| random_ints::<B, i32>(d, ctx));
    c.one(group, "user/random-int", DType::U32, |d, ctx| random_ints::<B, u32>(d, ctx));
    c.one(group, "user/nested-min-max", DType::I32, |d, ctx| nested_min_max::<B, i32>(d, ctx));
    c.one(group, "user/nested-min-max", DType::U32, |d, ctx| nested_min_max::<B, u32>(d, ctx));
    float::register(c, group);
    halves::register(c, group);
    reduce::register(c, group);
    scan::register(c, group);
    source::register(c, group);
}
