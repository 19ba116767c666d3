//! The expression handle users build kernel bodies from, and its operators.

use std::sync::Arc;

use kiln_core::DType;

use super::Ty;

/// A value in a user kernel's body: an argument, a constant, the element
/// index, or an operation on other expressions.
///
/// Expressions are built with Rust's operators (`+ - * / % & | ^ << >> !`
/// and unary `-`), methods for comparisons (`lt`, `le`, `gt`, `ge`, `eq`,
/// `ne`), math functions and casts, and [`select`]. Operands
/// must have the same dtype; a Rust number on either side of an operator
/// (`x * 2.0`, `1 - x`) takes the dtype of the other operand, as CuPy's
/// Python scalars do. Types are checked when the kernel is built (or, for
/// placeholder types, when it is launched), and a mismatch names the kernel
/// and the expression.
///
/// # Examples
/// ```
/// use kiln_kernels::expr::{select, var};
/// let x = var("x");
/// let y = select(x.clone().gt(0.0), x.clone().sqrt(), -x) * 2.0 + 1.0;
/// assert_eq!(y.to_string(), "((select((x > 0.0), sqrt(x), (-x)) * 2.0) + 1.0)");
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Expr(pub(crate) Arc<Node>);

/// One node of an expression tree.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Node {
    /// An argument or a local, by name.
    Var(Arc<str>),
    /// A raw argument read at a computed index.
    At(Arc<str>, Expr),
    /// The length of a raw argument (u32).
    LenOf(Arc<str>),
    /// The element index (u32).
    Index,
    /// The number of elements (u32).
    Len,
    /// A constant.
    Lit(Lit),
    /// A unary operation.
    Un(UnOp, Expr),
    /// A binary operation.
    Bin(BinOp, Expr, Expr),
    /// `if c { a } else { b }`.
    Select(Expr, Expr, Expr),
    /// A conversion.
    Cast(Expr, Ty),
    /// `a * b + c`, rounded once.
    Fma(Expr, Expr, Expr),
}

/// A constant: typed, or a Rust number whose dtype comes from its context.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Lit {
    /// A Rust integer literal, any integer or float dtype.
    Int(i128),
    /// A Rust float literal, any float dtype.
    Float(f64),
    /// A boolean.
    Bool(bool),
    /// A value of one dtype, its bits in the low bytes.
    Typed(DType, u64),
}

/// Unary operations and one-argument functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum UnOp {
    Neg,
    Not,
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

impl UnOp {
    /// Every unary operation.
    pub const ALL: [UnOp; 12] = [
        UnOp::Neg,
        UnOp::Not,
        UnOp::Abs,
        UnOp::Sqrt,
        UnOp::Rsqrt,
        UnOp::Exp,
        UnOp::Log,
        UnOp::Sin,
        UnOp::Cos,
        UnOp::Tanh,
        UnOp::Floor,
        UnOp::Ceil,
    ];

    /// The name in the canonical form ("sqrt"; "-" and "!" for the operators).
    pub const fn name(self) -> &'static str {
        match self {
            UnOp::Neg => "-",
            UnOp::Not => "!",
            UnOp::Abs => "abs",
            UnOp::Sqrt => "sqrt",
            UnOp::Rsqrt => "rsqrt",
            UnOp::Exp => "exp",
            UnOp::Log => "log",
            UnOp::Sin => "sin",
            UnOp::Cos => "cos",
            UnOp::Tanh => "tanh",
            UnOp::Floor => "floor",
            UnOp::Ceil => "ceil",
        }
    }

    /// Whether the operation is defined on floats only.
    pub const fn float_only(self) -> bool {
        !matches!(self, UnOp::Neg | UnOp::Not | UnOp::Abs)
    }
}

/// Binary operations, comparisons and two-argument functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Min,
    Max,
    Pow,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
}

impl BinOp {
    /// Every binary operation.
    pub const ALL: [BinOp; 19] = [
        BinOp::Add,
        BinOp::Sub,
        BinOp::Mul,
        BinOp::Div,
        BinOp::Rem,
        BinOp::And,
        BinOp::Or,
        BinOp::Xor,
        BinOp::Shl,
        BinOp::Shr,
        BinOp::Min,
        BinOp::Max,
        BinOp::Pow,
        BinOp::Lt,
        BinOp::Le,
        BinOp::Gt,
        BinOp::Ge,
        BinOp::Eq,
        BinOp::Ne,
    ];

    /// The operator or function name in the canonical form ("+", "min").
    pub const fn name(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Min => "min",
            BinOp::Max => "max",
            BinOp::Pow => "pow",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
        }
    }

    /// Whether the result is a boolean.
    pub const fn is_comparison(self) -> bool {
        matches!(self, BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge | BinOp::Eq | BinOp::Ne)
    }

    /// Whether it prints as a function call rather than an infix operator.
    pub(crate) const fn is_function(self) -> bool {
        matches!(self, BinOp::Min | BinOp::Max | BinOp::Pow)
    }
}

impl Expr {
    pub(crate) fn new(node: Node) -> Expr {
        Expr(Arc::new(node))
    }

    pub(crate) fn node(&self) -> &Node {
        &self.0
    }

    fn un(self, op: UnOp) -> Expr {
        Expr::new(Node::Un(op, self))
    }

    fn bin(self, op: BinOp, other: impl Into<Expr>) -> Expr {
        Expr::new(Node::Bin(op, self, other.into()))
    }

    /// `op` applied to this expression (`x.unary(UnOp::Sqrt)` is `x.sqrt()`).
    pub fn unary(self, op: UnOp) -> Expr {
        self.un(op)
    }

    /// `op` applied to this expression and `other` (`x.binary(BinOp::Add, y)` is `x + y`).
    pub fn binary(self, op: BinOp, other: impl Into<Expr>) -> Expr {
        self.bin(op, other)
    }

    /// A constant of dtype `T` (`Expr::constant(1.5f32)`), unlike a bare
    /// Rust number, which takes its dtype from the other operand.
    pub fn constant<T: kiln_core::Element>(value: T) -> Expr {
        let mut bits = [0u8; 8];
        bits[..size_of::<T>()].copy_from_slice(bytemuck::bytes_of(&value));
        Expr::new(Node::Lit(Lit::Typed(T::DTYPE, u64::from_le_bytes(bits))))
    }

    /// This raw argument's element at `index` (any integer dtype); an index
    /// outside the argument reads zero.
    pub fn at(self, index: impl Into<Expr>) -> Expr {
        match self.node() {
            Node::Var(name) => Expr::new(Node::At(name.clone(), index.into())),
            _ => Expr::new(Node::At(Arc::from(format!("{self}")), index.into())),
        }
    }

    /// The number of elements of this raw argument, as `u32`.
    pub fn len_of(self) -> Expr {
        match self.node() {
            Node::Var(name) => Expr::new(Node::LenOf(name.clone())),
            _ => Expr::new(Node::LenOf(Arc::from(format!("{self}")))),
        }
    }

    /// `self < other`.
    pub fn lt(self, other: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Lt, other)
    }
    /// `self <= other`.
    pub fn le(self, other: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Le, other)
    }
    /// `self > other`.
    pub fn gt(self, other: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Gt, other)
    }
    /// `self >= other`.
    pub fn ge(self, other: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Ge, other)
    }
    /// `self == other` (false when either is NaN).
    pub fn eq(self, other: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Eq, other)
    }
    /// `self != other` (true when either is NaN).
    pub fn ne(self, other: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Ne, other)
    }
    /// The smaller operand; for floats, a NaN operand gives the other one.
    pub fn min(self, other: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Min, other)
    }
    /// The larger operand; for floats, a NaN operand gives the other one.
    pub fn max(self, other: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Max, other)
    }
    /// `self` raised to `other` (floats; C's `pow`, special cases included).
    pub fn pow(self, other: impl Into<Expr>) -> Expr {
        self.bin(BinOp::Pow, other)
    }
    /// `self * b + c` rounded once (floats).
    pub fn fma(self, b: impl Into<Expr>, c: impl Into<Expr>) -> Expr {
        Expr::new(Node::Fma(self, b.into(), c.into()))
    }
    /// Absolute value (wrapping for the most negative integer).
    pub fn abs(self) -> Expr {
        self.un(UnOp::Abs)
    }
    /// Square root (floats).
    pub fn sqrt(self) -> Expr {
        self.un(UnOp::Sqrt)
    }
    /// `1 / sqrt(self)` (floats).
    pub fn rsqrt(self) -> Expr {
        self.un(UnOp::Rsqrt)
    }
    /// `e^self` (floats).
    pub fn exp(self) -> Expr {
        self.un(UnOp::Exp)
    }
    /// Natural logarithm (floats).
    pub fn log(self) -> Expr {
        self.un(UnOp::Log)
    }
    /// Sine (floats).
    pub fn sin(self) -> Expr {
        self.un(UnOp::Sin)
    }
    /// Cosine (floats).
    pub fn cos(self) -> Expr {
        self.un(UnOp::Cos)
    }
    /// Hyperbolic tangent (floats).
    pub fn tanh(self) -> Expr {
        self.un(UnOp::Tanh)
    }
    /// Largest integer not above (floats).
    pub fn floor(self) -> Expr {
        self.un(UnOp::Floor)
    }
    /// Smallest integer not below (floats).
    pub fn ceil(self) -> Expr {
        self.un(UnOp::Ceil)
    }
    /// Conversion to `ty`: floats to integers truncate and saturate (NaN
    /// gives 0), integers to floats round to nearest, integers to integers
    /// wrap, booleans give 0 or 1.
    pub fn cast(self, ty: impl Into<Ty>) -> Expr {
        Expr::new(Node::Cast(self, ty.into()))
    }
}

/// The argument or local named `name`.
///
/// # Examples
/// ```
/// use kiln_kernels::expr::var;
/// assert_eq!((var("a") * var("x") + var("y")).to_string(), "((a * x) + y)");
/// ```
pub fn var(name: &str) -> Expr {
    Expr::new(Node::Var(Arc::from(name)))
}

/// The index of the element being computed, as `u32`.
pub fn index() -> Expr {
    Expr::new(Node::Index)
}

/// The number of elements of the launch, as `u32`.
pub fn len() -> Expr {
    Expr::new(Node::Len)
}

/// `a` where `cond` is true, else `b` (CuPy's `where`); `cond` is a boolean
/// expression (a comparison), `a` and `b` of one dtype.
pub fn select(cond: impl Into<Expr>, a: impl Into<Expr>, b: impl Into<Expr>) -> Expr {
    Expr::new(Node::Select(cond.into(), a.into(), b.into()))
}

macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Expr {
            /// A Rust integer: takes the dtype of the other operand.
            fn from(v: $t) -> Expr {
                Expr::new(Node::Lit(Lit::Int(i128::from(v))))
            }
        }
    )*};
}
from_int!(i32, u32, i64, u64);

impl From<f64> for Expr {
    /// A Rust float: takes the (float) dtype of the other operand.
    fn from(v: f64) -> Expr {
        Expr::new(Node::Lit(Lit::Float(v)))
    }
}

impl From<f32> for Expr {
    /// A Rust float: takes the (float) dtype of the other operand.
    fn from(v: f32) -> Expr {
        Expr::new(Node::Lit(Lit::Float(f64::from(v))))
    }
}

impl From<bool> for Expr {
    fn from(v: bool) -> Expr {
        Expr::new(Node::Lit(Lit::Bool(v)))
    }
}

impl From<&Expr> for Expr {
    fn from(e: &Expr) -> Expr {
        e.clone()
    }
}

macro_rules! binary_operator {
    ($($trait:ident $method:ident $op:ident),*) => {$(
        impl<R: Into<Expr>> std::ops::$trait<R> for Expr {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                self.bin(BinOp::$op, rhs)
            }
        }
        impl<R: Into<Expr>> std::ops::$trait<R> for &Expr {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                self.clone().bin(BinOp::$op, rhs)
            }
        }
        binary_operator!(@lhs $trait $method $op: i32, u32, i64, u64, f32, f64);
    )*};
    (@lhs $trait:ident $method:ident $op:ident: $($t:ty),*) => {$(
        impl std::ops::$trait<Expr> for $t {
            type Output = Expr;
            fn $method(self, rhs: Expr) -> Expr {
                Expr::from(self).bin(BinOp::$op, rhs)
            }
        }
        impl std::ops::$trait<&Expr> for $t {
            type Output = Expr;
            fn $method(self, rhs: &Expr) -> Expr {
                Expr::from(self).bin(BinOp::$op, rhs.clone())
            }
        }
    )*};
}
binary_operator!(Add add Add, Sub sub Sub, Mul mul Mul, Div div Div, Rem rem Rem, BitAnd bitand And,
    BitOr bitor Or, BitXor bitxor Xor, Shl shl Shl, Shr shr Shr);

impl std::ops::Neg for Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        self.un(UnOp::Neg)
    }
}

impl std::ops::Neg for &Expr {
    type Output = Expr;
    fn neg(self) -> Expr {
        self.clone().un(UnOp::Neg)
    }
}

impl std::ops::Not for Expr {
    type Output = Expr;
    /// Logical not of a boolean, bitwise not of an integer.
    fn not(self) -> Expr {
        self.un(UnOp::Not)
    }
}

impl std::ops::Not for &Expr {
    type Output = Expr;
    fn not(self) -> Expr {
        self.clone().un(UnOp::Not)
    }
}

impl std::fmt::Display for Expr {
    /// The expression as written, fully parenthesised.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.node() {
            Node::Var(n) => f.write_str(n),
            Node::At(n, i) => write!(f, "{n}[{i}]"),
            Node::LenOf(n) => write!(f, "len({n})"),
            Node::Index => f.write_str("i"),
            Node::Len => f.write_str("n"),
            Node::Lit(Lit::Int(v)) => write!(f, "{v}"),
            Node::Lit(Lit::Float(v)) => write!(f, "{v:?}"),
            Node::Lit(Lit::Bool(v)) => write!(f, "{v}"),
            Node::Lit(Lit::Typed(d, bits)) => write!(f, "{}", super::value::Value::from_bits(*d, *bits)),
            Node::Un(op @ (UnOp::Neg | UnOp::Not), a) => write!(f, "({}{a})", op.name()),
            Node::Un(op, a) => write!(f, "{}({a})", op.name()),
            Node::Bin(op, a, b) if op.is_function() => write!(f, "{}({a}, {b})", op.name()),
            Node::Bin(op, a, b) => write!(f, "({a} {} {b})", op.name()),
            Node::Select(c, a, b) => write!(f, "select({c}, {a}, {b})"),
            Node::Cast(a, t) => write!(f, "{t}({a})"),
            Node::Fma(a, b, c) => write!(f, "fma({a}, {b}, {c})"),
        }
    }
}
