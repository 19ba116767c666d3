//! User kernels on floats: random well-typed `f32` and `f64` expressions
//! (every float operator and math function, `fma`, comparisons in selects,
//! truncation to `i32` and back, a trip through the other float width, raw
//! gathers at computed indices, the element index, literals among them
//! infinities and NaN) over inputs full of edge values (NaN, infinities,
//! `-0.0`, subnormals, the extremes), several per generated kernel.
//!
//! The reference is evaluated here in f64, apart from every backend, and
//! carries with each subexpression a bound on how far a backend's value
//! may be from it: the operation's documented accuracy on that backend
//! ([`accuracy`]) plus what the error of its operands can move it by.
//! Where that bound is not finite (a division by a value the error could
//! make zero, a comparison it could flip between a number and a NaN, a
//! result that could overflow) the element is not judged; a value known
//! exactly (an infinity or NaN from exact operands) must come out exactly.
//! The case fails if it judged fewer than half of the elements (a quarter
//! on WGSL, where every value past an infinity or NaN goes unjudged).
//!
//! With `KILN_CONFORMANCE_TRACE` set, each generated kernel is printed to
//! stderr before it runs, so a run that stops shows the kernel it stopped in.

use kiln_core::{Args, Backend, DType, Device, Language};
use kiln_kernels::expr::{Expr, index, select, var};
use rand::Rng;

use crate::patterns::unchanged;
use crate::{CaseRng, Cases, Ctx, Expected, Failure, Mismatch, Sample, poisoned};

/// Outputs per generated kernel (with three inputs, within WGSL's eight storage buffers).
const OUTPUTS: usize = 5;
/// Generated kernels per run.
const KERNELS: usize = 4;

#[derive(Clone, Copy, Debug, PartialEq)]
enum Un {
    Neg,
    Abs,
    Sqrt,
    Rsqrt,
    Exp,
    Log,
    Sin,
    Cos,
    Tanh,
    Floor,
    Ceil,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Min,
    Max,
    Pow,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Cmp {
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

const UN: [Un; 11] =
    [Un::Neg, Un::Abs, Un::Sqrt, Un::Rsqrt, Un::Exp, Un::Log, Un::Sin, Un::Cos, Un::Tanh, Un::Floor, Un::Ceil];
const BIN: [Bin; 7] = [Bin::Add, Bin::Sub, Bin::Mul, Bin::Div, Bin::Min, Bin::Max, Bin::Pow];
const CMP: [Cmp; 6] = [Cmp::Lt, Cmp::Le, Cmp::Gt, Cmp::Ge, Cmp::Eq, Cmp::Ne];
const LITERALS: [f64; 15] =
    [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, 0.1, 100.0, 1e30, -1e-30, 1e-40, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];

/// A float expression over `x`, `y`, `r` (raw), `a` (scalar), the index.
#[derive(Debug, Clone)]
enum F {
    X,
    Y,
    A,
    I,
    Lit(f64),
    /// `r[trunc(k) as i32]`.
    At(Box<F>),
    Un(Un, Box<F>),
    Bin(Bin, Box<F>, Box<F>),
    Fma(Box<F>, Box<F>, Box<F>),
    Sel(Cmp, Box<F>, Box<F>, Box<F>, Box<F>),
    /// Cast to `i32` and back: truncation, saturating, NaN to 0.
    Trunc(Box<F>),
    /// Cast to `f32` and back (in `f64` expressions).
    Other(Box<F>),
}

/// Whether `f` has a dtype of its own (literal-only operands take the other operand's).
fn typed(f: &F) -> bool {
    match f {
        F::Lit(_) => false,
        F::X | F::Y | F::A | F::I | F::At(_) | F::Trunc(_) | F::Other(_) => true,
        F::Un(_, a) => typed(a),
        F::Bin(_, a, b) | F::Sel(_, _, _, a, b) => typed(a) || typed(b),
        F::Fma(a, b, c) => typed(a) || typed(b) || typed(c),
    }
}

/// What the generator may use: WGSL offers no transcendental function on `f64`.
#[derive(Clone, Copy)]
struct Gen {
    transcendental: bool,
    /// Whether to pass values through `f32` (for `f64` expressions).
    narrow: bool,
}

impl Gen {
    fn typed(self, rng: &mut CaseRng, depth: u32) -> F {
        let f = self.tree(rng, depth);
        if typed(&f) { f } else { F::Bin(Bin::Add, Box::new(f), Box::new(F::X)) }
    }

    fn tree(self, rng: &mut CaseRng, depth: u32) -> F {
        let b = |f: F| Box::new(f);
        if depth == 0 || rng.random_ratio(1, 4) {
            return match rng.random_range(0..7) {
                0 | 1 => F::X,
                2 => F::Y,
                3 => F::A,
                4 => F::I,
                5 => F::Lit(LITERALS[rng.random_range(0..LITERALS.len())]),
                _ => F::At(b(self.typed(rng, 0))),
            };
        }
        let d = depth - 1;
        match rng.random_range(0..20) {
            0..7 => loop {
                let op = UN[rng.random_range(0..UN.len())];
                if self.transcendental || !matches!(op, Un::Exp | Un::Log | Un::Sin | Un::Cos | Un::Tanh) {
                    break F::Un(op, b(self.tree(rng, d)));
                }
            },
            7..15 => loop {
                let op = BIN[rng.random_range(0..BIN.len())];
                if self.transcendental || op != Bin::Pow {
                    break F::Bin(op, b(self.tree(rng, d)), b(self.tree(rng, d)));
                }
            },
            15 => F::Fma(b(self.tree(rng, d)), b(self.tree(rng, d)), b(self.tree(rng, d))),
            16 | 17 => F::Sel(
                CMP[rng.random_range(0..CMP.len())],
                b(self.typed(rng, d)),
                b(self.tree(rng, d)),
                b(self.tree(rng, d)),
                b(self.tree(rng, d)),
            ),
            18 => F::Trunc(b(self.typed(rng, d))),
            _ if self.narrow && rng.random() => F::Other(b(self.typed(rng, d))),
            _ => F::At(b(self.typed(rng, d))),
        }
    }
}

/// The kiln expression for `f` on `d` (f32 or f64).
fn build(f: &F, d: DType) -> Expr {
    match f {
        F::X => var("x"),
        F::Y => var("y"),
        F::A => var("a"),
        F::I => index().cast(d),
        F::Lit(v) => Expr::from(*v),
        F::At(k) => var("r").at(build(k, d).cast(DType::I32)),
        F::Un(op, a) => {
            let a = build(a, d);
            match op {
                Un::Neg => -a,
                Un::Abs => a.abs(),
                Un::Sqrt => a.sqrt(),
                Un::Rsqrt => a.rsqrt(),
                Un::Exp => a.exp(),
                Un::Log => a.log(),
                Un::Sin => a.sin(),
                Un::Cos => a.cos(),
                Un::Tanh => a.tanh(),
                Un::Floor => a.floor(),
                Un::Ceil => a.ceil(),
            }
        }
        F::Bin(op, a, b) => {
            let (a, b) = (build(a, d), build(b, d));
            match op {
                Bin::Add => a + b,
                Bin::Sub => a - b,
                Bin::Mul => a * b,
                Bin::Div => a / b,
                Bin::Min => a.min(b),
                Bin::Max => a.max(b),
                Bin::Pow => a.pow(b),
            }
        }
        F::Fma(a, b, c) => build(a, d).fma(build(b, d), build(c, d)),
        F::Sel(op, p, q, a, b) => {
            let (p, q) = (build(p, d), build(q, d));
            let c = match op {
                Cmp::Lt => p.lt(q),
                Cmp::Le => p.le(q),
                Cmp::Gt => p.gt(q),
                Cmp::Ge => p.ge(q),
                Cmp::Eq => p.eq(q),
                Cmp::Ne => p.ne(q),
            };
            select(c, build(a, d), build(b, d))
        }
        F::Trunc(a) => build(a, d).cast(DType::I32).cast(d),
        F::Other(a) => build(a, d).cast(DType::F32).cast(d),
    }
}

/// A backend's accuracy for one operation: `ulps` units in the last place
/// of the result's dtype, relative to the result, plus an absolute `abs`.
#[derive(Clone, Copy, Debug)]
struct Accuracy {
    ulps: f64,
    abs: f64,
}

/// Operations with a documented accuracy.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    /// `+ - *` and the conversions: correctly rounded everywhere.
    Rounded,
    Div,
    Sqrt,
    Rsqrt,
    Exp,
    Log,
    Sin,
    Tanh,
    Pow,
}

/// What `language` promises for `op` on `dtype` at operands `x` (and `y`):
///
/// | op | CPU | CUDA f32 | CUDA f64 | Vulkan (WGSL) |
/// |---|---|---|---|---|
/// | `+ - *`, casts | 0.5 | 0.5 | 0.5 | 0.5 |
/// | `/` | 0.5 | 0.5 | 0.5 | 2.5 |
/// | `sqrt` | 0.5 | 0.5 | 0.5 | 5 (`1 / inverseSqrt`) |
/// | `rsqrt` | 1.5 | 1.5 | 1.5 | 2 |
/// | `exp` | 2 | 2 | 1 | 3 + 2\|x\| |
/// | `log` | 2 | 1 | 1 | 3, or 2^-21 absolute on [0.5, 2] |
/// | `sin`, `cos` | 2 | 2 | 2 | 2^-11 + \|x\| 2^-20 absolute |
/// | `tanh` | 2 | 2 | 2 | 2^-10 relative + 2^-20 absolute |
/// | `pow` | 2 | 4 | 2 | 3 + 5\|y log2 x\| + \|y\| 2^-21 ln 2 / eps |
///
/// (ulps unless marked; the CPU follows the platform's libm, CUDA its
/// math library's tables, Vulkan the WGSL and SPIR-V precision rules,
/// where `sin` and `cos` are bounded on [-pi, pi] only, after kiln's
/// range reduction, and `tanh` is inherited from exponentials.)
fn accuracy(language: Language, dtype: DType, op: Op, x: f64, y: f64) -> Accuracy {
    let eps = if dtype == DType::F32 { f32::EPSILON as f64 } else { f64::EPSILON };
    let ulps = |ulps: f64| Accuracy { ulps, abs: 0.0 };
    match (language, op) {
        (_, Op::Rounded) => ulps(0.5),
        (Language::Wgsl, Op::Div) => ulps(2.5),
        (Language::Wgsl, Op::Sqrt) => ulps(5.0),
        (Language::Wgsl, Op::Rsqrt) => ulps(2.0),
        (Language::Wgsl, Op::Exp) => ulps(3.0 + 2.0 * x.abs()),
        (Language::Wgsl, Op::Log) if (0.5..=2.0).contains(&x) => Accuracy { ulps: 0.0, abs: 2f64.powi(-21) },
        (Language::Wgsl, Op::Log) => ulps(3.0),
        (Language::Wgsl, Op::Sin) => Accuracy { ulps: 0.0, abs: 2f64.powi(-11) + x.abs() * 2f64.powi(-20) },
        (Language::Wgsl, Op::Tanh) => Accuracy { ulps: 2f64.powi(-10) / eps, abs: 2f64.powi(-20) },
        (Language::Wgsl, Op::Pow) => {
            let t = (y * x.abs().log2()).abs();
            ulps(3.0 + 5.0 * t + y.abs() * 2f64.powi(-21) * std::f64::consts::LN_2 / eps)
        }
        (_, Op::Div | Op::Sqrt) => ulps(0.5),
        (_, Op::Rsqrt) => ulps(1.5),
        (Language::Cuda, Op::Exp | Op::Log) if dtype == DType::F64 => ulps(1.0),
        (Language::Cuda, Op::Log) => ulps(1.0),
        (Language::Cuda, Op::Pow) if dtype == DType::F32 => ulps(4.0),
        (_, Op::Exp | Op::Log | Op::Sin | Op::Tanh | Op::Pow) => ulps(2.0),
    }
}

/// A reference value and the bound on a backend's distance from it;
/// `err == 0` on a non-finite value means the backend must give exactly it,
/// an infinite `err` that the element cannot be judged.
#[derive(Clone, Copy, Debug)]
struct V {
    v: f64,
    err: f64,
}

const UNKNOWN: V = V { v: f64::NAN, err: f64::INFINITY };

impl V {
    fn exact(v: f64) -> V {
        V { v, err: 0.0 }
    }

    fn known(self) -> bool {
        self.err.is_finite()
    }

    /// Known exactly (a literal, an input, or a special value from such).
    fn sure(self) -> bool {
        self.err == 0.0
    }
}

/// The reference for one dtype on one backend.
struct Env<'a> {
    dtype: DType,
    language: Language,
    flush: bool,
    /// Whether the backend may assume that no value is infinite or NaN.
    finite_math: bool,
    x: &'a [f64],
    y: &'a [f64],
    raw: &'a [f64],
    a: f64,
}

/// `v` rounded to `d`.
fn round_to(d: DType, v: f64) -> f64 {
    if d == DType::F32 { v as f32 as f64 } else { v }
}

/// `v` truncated to an `i32`, saturating, NaN giving 0.
fn trunc_i32(v: f64) -> f64 {
    v as i32 as f64
}

impl Env<'_> {
    fn eps(&self) -> f64 {
        if self.dtype == DType::F32 { f32::EPSILON as f64 } else { f64::EPSILON }
    }

    fn max(&self) -> f64 {
        if self.dtype == DType::F32 { f32::MAX as f64 } else { f64::MAX }
    }

    /// The smallest error any result carries near zero: a subnormal's
    /// spacing, or the smallest normal where subnormals may be flushed.
    fn floor_err(&self) -> f64 {
        match (self.dtype, self.flush) {
            (DType::F32, true) => f32::MIN_POSITIVE as f64,
            (DType::F32, false) => f32::from_bits(1) as f64,
            (_, true) => f64::MIN_POSITIVE,
            (_, false) => f64::from_bits(1),
        }
    }

    fn input(&self, v: f64) -> V {
        let tiny = if self.dtype == DType::F32 { f32::MIN_POSITIVE as f64 } else { f64::MIN_POSITIVE };
        if self.flush && v != 0.0 && v.abs() < tiny { V { v, err: v.abs() } } else { V::exact(v) }
    }

    /// The result `exact` (in f64, before rounding to the dtype) of an
    /// operation of accuracy `acc` whose operands' errors move it by at most
    /// `spread`, with `operands_sure` saying whether the operands are known
    /// exactly (then a non-finite result must be exact too).
    fn result(&self, exact: f64, spread: f64, acc: Accuracy, operands_sure: bool) -> V {
        let v = round_to(self.dtype, exact);
        if !v.is_finite() {
            return if operands_sure { V::exact(v) } else { UNKNOWN };
        }
        if !spread.is_finite() {
            return UNKNOWN;
        }
        // The backend's rounding (acc) and the reference's own (one ulp).
        let magnitude = v.abs() + spread;
        let err = spread + (acc.ulps + 1.0) * self.eps() * magnitude + acc.abs + self.floor_err();
        if v.abs() + err >= self.max() {
            return UNKNOWN; // the backend's value could overflow
        }
        V { v, err }
    }

    fn rounded(&self, exact: f64, spread: f64, sure: bool) -> V {
        self.result(exact, spread, accuracy(self.language, self.dtype, Op::Rounded, 0.0, 0.0), sure)
    }

    /// A monotone function of one operand: the error is the function's
    /// spread over the operand's interval, whose ends must stay in `domain`.
    fn monotone(&self, a: V, op: Op, f: impl Fn(f64) -> f64, domain: impl Fn(f64) -> bool) -> V {
        let acc = accuracy(self.language, self.dtype, op, a.v, 0.0);
        if a.sure() {
            return self.result(f(a.v), 0.0, acc, true);
        }
        let (lo, hi) = (a.v - a.err, a.v + a.err);
        if !a.v.is_finite() || !domain(lo) || !domain(hi) {
            return UNKNOWN;
        }
        let centre = f(a.v);
        let spread = (f(lo) - centre).abs().max((f(hi) - centre).abs());
        self.result(centre, spread, acc, false)
    }

    /// A step function of one operand (floor, ceil, truncation): exact where
    /// the operand's interval does not reach a step.
    fn step(&self, a: V, f: impl Fn(f64) -> f64) -> V {
        if a.sure() {
            return V::exact(round_to(self.dtype, f(a.v)));
        }
        if !a.v.is_finite() {
            return UNKNOWN;
        }
        let v = round_to(self.dtype, f(a.v));
        let (lo, hi) = (round_to(self.dtype, f(a.v - a.err)), round_to(self.dtype, f(a.v + a.err)));
        V { v, err: (lo - v).abs().max((hi - v).abs()) }
    }

    /// `f` at element `i`. Where infinities and NaN are not kept (WGSL
    /// lets an implementation assume there are none: lavapipe folds `y - y`
    /// to 0 and `0 / y` to 0), a value that is or passes through one is not judged.
    fn eval(&self, f: &F, i: usize) -> V {
        let v = self.node(f, i);
        if self.finite_math && !v.v.is_finite() {
            return UNKNOWN;
        }
        v
    }

    fn node(&self, f: &F, i: usize) -> V {
        match f {
            F::X => self.input(self.x[i]),
            F::Y => self.input(self.y[i]),
            F::A => self.input(self.a),
            F::I => V::exact(round_to(self.dtype, i as f64)),
            F::Lit(v) => self.input(round_to(self.dtype, *v)),
            F::At(k) => {
                let k = self.step(self.eval(k, i), trunc_i32);
                if !k.sure() {
                    return UNKNOWN;
                }
                match usize::try_from(k.v as i64).ok().and_then(|k| self.raw.get(k)) {
                    Some(&v) => self.input(v),
                    None => V::exact(0.0),
                }
            }
            F::Trunc(a) => self.step(self.eval(a, i), trunc_i32),
            F::Other(a) => {
                let a = self.eval(a, i);
                if self.dtype == DType::F32 || !a.known() {
                    return a;
                }
                // Through f32: rounding to its precision, and its range.
                let v = a.v as f32 as f64;
                if a.sure() {
                    return V::exact(v);
                }
                let err = a.err + f32::EPSILON as f64 * (a.v.abs() + a.err) + f32::MIN_POSITIVE as f64;
                if !v.is_finite() || a.v.abs() + err >= f32::MAX as f64 {
                    return UNKNOWN;
                }
                V { v, err }
            }
            F::Un(op, a) => self.unary(*op, self.eval(a, i)),
            F::Bin(op, a, b) => self.binary(*op, self.eval(a, i), self.eval(b, i)),
            F::Fma(a, b, c) => {
                let (a, b, c) = (self.eval(a, i), self.eval(b, i), self.eval(c, i));
                if !(a.known() && b.known() && c.known()) {
                    return UNKNOWN;
                }
                let spread = a.v.abs() * b.err + b.v.abs() * a.err + a.err * b.err + c.err;
                // Vulkan may round the product before the sum.
                let product = self.eps() * (a.v * b.v).abs();
                let mut r = self.rounded(a.v.mul_add(b.v, c.v), spread + product, a.sure() && b.sure() && c.sure());
                if r.known() && !r.sure() && a.sure() && b.sure() && c.sure() {
                    r.err = r.err.max(product);
                }
                r
            }
            F::Sel(op, p, q, a, b) => {
                let (p, q) = (self.eval(p, i), self.eval(q, i));
                if !(p.known() && q.known()) {
                    return UNKNOWN;
                }
                let taken = match op {
                    Cmp::Lt => p.v < q.v,
                    Cmp::Le => p.v <= q.v,
                    Cmp::Gt => p.v > q.v,
                    Cmp::Ge => p.v >= q.v,
                    Cmp::Eq => p.v == q.v,
                    Cmp::Ne => p.v != q.v,
                };
                let special = |s: V, o: V| s.sure() && !s.v.is_finite() && o.v.is_finite();
                let decided = (p.sure() && q.sure())
                    || special(p, q)
                    || special(q, p)
                    || (p.v.is_finite() && q.v.is_finite() && (p.v - q.v).abs() > p.err + q.err);
                let (a, b) = (self.eval(a, i), self.eval(b, i));
                let chosen = if taken { a } else { b };
                if decided {
                    return chosen;
                }
                // Either branch may be taken.
                if !(a.known() && b.known() && a.v.is_finite() && b.v.is_finite()) {
                    return UNKNOWN;
                }
                V { v: chosen.v, err: (a.v - b.v).abs() + a.err.max(b.err) }
            }
        }
    }

    fn unary(&self, op: Un, a: V) -> V {
        if !a.known() {
            return UNKNOWN;
        }
        let positive = |x: f64| x > 0.0;
        let any = |_: f64| true;
        match op {
            Un::Neg => V { v: -a.v, err: a.err },
            Un::Abs => V { v: a.v.abs(), err: a.err },
            Un::Floor => self.step(a, f64::floor),
            Un::Ceil => self.step(a, f64::ceil),
            Un::Sqrt => self.monotone(a, Op::Sqrt, f64::sqrt, positive),
            Un::Rsqrt => self.monotone(a, Op::Rsqrt, |x| 1.0 / x.sqrt(), positive),
            Un::Exp => self.monotone(a, Op::Exp, f64::exp, any),
            Un::Log => self.monotone(a, Op::Log, f64::ln, positive),
            // One-Lipschitz functions.
            Un::Sin | Un::Cos | Un::Tanh => {
                let f = match op {
                    Un::Sin => f64::sin,
                    Un::Cos => f64::cos,
                    _ => f64::tanh,
                };
                let acc =
                    accuracy(self.language, self.dtype, if op == Un::Tanh { Op::Tanh } else { Op::Sin }, a.v, 0.0);
                if a.sure() {
                    return self.result(f(a.v), 0.0, acc, true);
                }
                if !a.v.is_finite() {
                    return UNKNOWN;
                }
                self.result(f(a.v), a.err, acc, false)
            }
        }
    }

    fn binary(&self, op: Bin, a: V, b: V) -> V {
        let sure = a.sure() && b.sure();
        match op {
            // min and max give the other operand when one is NaN.
            Bin::Min | Bin::Max => {
                if a.sure() && a.v.is_nan() {
                    return b;
                }
                if b.sure() && b.v.is_nan() {
                    return a;
                }
                if !(a.known() && b.known()) || a.v.is_nan() || b.v.is_nan() {
                    return UNKNOWN;
                }
                let v = if op == Bin::Min { a.v.min(b.v) } else { a.v.max(b.v) };
                V { v, err: a.err.max(b.err) }
            }
            _ if !(a.known() && b.known()) => UNKNOWN,
            _ if sure && (!a.v.is_finite() || !b.v.is_finite()) => {
                let v = match op {
                    Bin::Add => a.v + b.v,
                    Bin::Sub => a.v - b.v,
                    Bin::Mul => a.v * b.v,
                    Bin::Div => a.v / b.v,
                    _ => a.v.powf(b.v),
                };
                V::exact(round_to(self.dtype, v))
            }
            _ if !a.v.is_finite() || !b.v.is_finite() => UNKNOWN,
            Bin::Add => self.rounded(a.v + b.v, a.err + b.err, sure),
            Bin::Sub => self.rounded(a.v - b.v, a.err + b.err, sure),
            Bin::Mul => self.rounded(a.v * b.v, a.v.abs() * b.err + b.v.abs() * a.err + a.err * b.err, sure),
            Bin::Div => {
                let acc = accuracy(self.language, self.dtype, Op::Div, 0.0, 0.0);
                if sure {
                    if self.language == Language::Wgsl && !self.divisor_in_range(b.v) {
                        return UNKNOWN;
                    }
                    return self.result(a.v / b.v, 0.0, acc, true);
                }
                let least = b.v.abs() - b.err;
                let wgsl_range = self.language != Language::Wgsl
                    || (self.divisor_in_range(least) && self.divisor_in_range(b.v.abs() + b.err));
                if least <= 0.0 || !wgsl_range {
                    return UNKNOWN;
                }
                let spread = (a.v.abs() * b.err + b.v.abs() * a.err) / (b.v.abs() * least);
                self.result(a.v / b.v, spread, acc, false)
            }
            Bin::Pow => {
                let acc = accuracy(self.language, self.dtype, Op::Pow, a.v, b.v);
                if sure {
                    return self.result(a.v.powf(b.v), 0.0, acc, true);
                }
                // Monotone in each operand for a positive base: the corners bound it.
                let (lo, hi) = (a.v - a.err, a.v + a.err);
                if lo <= 0.0 {
                    return UNKNOWN;
                }
                let centre = a.v.powf(b.v);
                let mut spread: f64 = 0.0;
                for x in [lo, hi] {
                    for y in [b.v - b.err, b.v + b.err] {
                        spread = spread.max((x.powf(y) - centre).abs());
                    }
                }
                self.result(centre, spread, acc, false)
            }
        }
    }

    /// Vulkan bounds `/` for divisors of magnitude in [2^-126, 2^126].
    fn divisor_in_range(&self, b: f64) -> bool {
        self.dtype == DType::F64 || (2f64.powi(-126)..=2f64.powi(126)).contains(&b.abs())
    }
}

/// The float dtypes the generator runs on.
trait Float: Sample + kiln_kernels::Number {
    fn from_f64(v: f64) -> Self;
}

impl Float for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
}

impl Float for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
}

/// Random float expressions of `T` (f32 or f64).
fn random_floats<B: Backend, T: Float>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let wgsl = B::LANGUAGE == Language::Wgsl;
    let f64 = T::DTYPE == DType::F64;
    let trees = Gen { transcendental: !(wgsl && f64), narrow: f64 };
    let x: Vec<T> = ctx.random();
    let y: Vec<T> = ctx.random();
    let raw_len = ctx.rng.random_range(0..64usize);
    let raw: Vec<T> = crate::random_vec(&mut ctx.rng, raw_len);
    let a = T::random_moderate(&mut ctx.rng);
    let wide = |v: &[T]| v.iter().map(|t| t.to_f64()).collect::<Vec<f64>>();
    let (xf, yf, rf) = (wide(&x), wide(&y), wide(&raw));
    let env = Env {
        dtype: T::DTYPE,
        language: B::LANGUAGE,
        flush: ctx.flush_subnormals,
        finite_math: wgsl,
        x: &xf,
        y: &yf,
        raw: &rf,
        a: a.to_f64(),
    };
    let s = device.stream();
    let (xb, yb, rb) = (device.upload(&x)?, device.upload(&y)?, device.upload(&raw)?);
    let (mut judged, mut total) = (0usize, 0usize);
    for k in 0..KERNELS {
        let exprs: Vec<F> = (0..OUTPUTS).map(|_| trees.typed(&mut ctx.rng, 4)).collect();
        let kernel = super::random_kernel(k, T::DTYPE, exprs.iter().map(|e| build(e, T::DTYPE)))?;
        let want: Vec<Vec<V>> = exprs.iter().map(|e| (0..ctx.n).map(|i| env.eval(e, i)).collect()).collect();
        let shown: Vec<Vec<T>> =
            want.iter().map(|w| w.iter().map(|v| T::from_f64(if v.known() { v.v } else { 0.0 })).collect()).collect();
        let mut outs = shown.iter().map(|w| poisoned(device, w)).collect::<kiln_core::Result<Vec<_>>>()?;
        let mut args = Args::new().arg(&xb).arg(&yb).arg(&rb).scalar(a);
        for o in outs.iter_mut() {
            args = args.arg(o);
        }
        if std::env::var_os("KILN_CONFORMANCE_TRACE").is_some() {
            // Which kernel was running when a run stopped (a hang, a lost device).
            let width = device.info().features.index_width;
            let source =
                kernel.program(B::LANGUAGE, width, &[]).ok().and_then(|p| p.text(B::LANGUAGE).map(String::from));
            eprintln!("random_{k} ({} n={}):\n{}", T::DTYPE, ctx.n, source.unwrap_or_default());
        }
        kernel.launch(&s, args)?;
        for (j, (o, w)) in outs.iter().zip(&want).enumerate() {
            let got = o.to_vec()?;
            let what = format!("z{j} = {}", build(&exprs[j], T::DTYPE));
            let at: Vec<usize> = (0..ctx.n).filter(|&i| w[i].known()).collect();
            judged += at.len();
            total += ctx.n;
            let expected = Expected::within(
                at.iter().map(|&i| T::from_f64(w[i].v)).collect(),
                at.iter().map(|&i| w[i].err).collect(),
            );
            let picked: Vec<T> = at.iter().map(|&i| got[i]).collect();
            crate::compare(&what, &expected, &picked).map_err(|m| Failure::Mismatch(at_element(m, &at, &x, &y)))?;
        }
    }
    // WGSL may assume finite values, so every element that meets an inf or NaN goes unjudged
    // there; a quarter of the elements is still thousands of checked values at the larger sizes.
    let share = if wgsl { 4 } else { 2 };
    if judged * share < total {
        return Err(Failure::Contract(format!("the reference judged only {judged} of {total} elements")));
    }
    unchanged("input x", &xb, &x)?;
    unchanged("raw input r", &rb, &raw)
}

/// `m`, found among the judged elements `at`, told at the element's own index, with its inputs.
fn at_element<T: Sample>(mut m: Mismatch, at: &[usize], x: &[T], y: &[T]) -> Mismatch {
    let i = at.get(m.index).copied().unwrap_or(m.index);
    let inputs = match (x.get(i), y.get(i)) {
        (Some(x), Some(y)) => format!("  inputs: x[{i}] = {x:?}, y[{i}] = {y:?}\n"),
        _ => String::new(),
    };
    m.what = format!("{} (element {i} of the whole output)", m.what);
    m.neighbours = format!("{inputs}{}", m.neighbours);
    m.index = i;
    m
}

/// Add the float user-kernel cases to `group`.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    c.one(group, "user/random-float", DType::F32, |d, ctx| random_floats::<B, f32>(d, ctx));
    c.one(group, "user/random-float", DType::F64, |d, ctx| random_floats::<B, f64>(d, ctx));
}
