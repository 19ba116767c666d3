//! The expression IR of user kernels: bodies written once in Rust, printed
//! as CUDA C++ and WGSL and run on the CPU as a compiled column program.
//!
//! An [`Expr`] is built from arguments ([`var`]), the element index
//! ([`index`]), constants, Rust's operators, comparison methods, math
//! functions, [`select`] and casts. A kernel type-checks its body when it is
//! built, or, where argument types are placeholders ([`Ty::param`]), when a
//! launch binds them; the checked body is flattened (equal subexpressions
//! computed once) and its canonical form keys the generated kernels.
//!
//! # Semantics, on every backend
//! - Operands of an operation have one dtype; nothing converts implicitly
//!   except Rust number literals, which take the other operand's dtype
//!   (an operand made of literals only takes a cast's target dtype:
//!   `(Expr::from(-8) >> 1).cast(DType::U32)` shifts a `u32`).
//! - A literal must be a value of the dtype it takes, or the kernel's
//!   build (or, with placeholders, the launch that binds them) is an `Err`
//!   naming the literal and the dtype. An integer literal must lie in the
//!   dtype's range (`x + 3000000000` on `i32` is refused, not wrapped),
//!   except as an operand of `&`, `|`, `^`, `!` or as the value shifted by
//!   `<<` and `>>`, where it may give the bits of the other signedness
//!   (`x & 0xffff_ffff` on `i32`, the `-8` above on `u32`); as a float it
//!   rounds to nearest. A float literal never becomes an integer, even
//!   `2.0` (write `2`); as `f32` it rounds to nearest, and a finite value
//!   that would become an infinity (`1e300`) or a non-zero one that would
//!   become zero (`1e-50`) is refused. Infinities and NaN are kept.
//! - Integers wrap on overflow. `x / 0 == x`, `MIN / -1 == MIN`,
//!   `x % 0 == 0`, `MIN % -1 == 0`; `%` is integers only (C's truncated
//!   remainder). Shift amounts (any integer dtype) are taken modulo the
//!   bit width; `>>` is arithmetic for signed dtypes.
//! - Floats are IEEE 754: `+ - * /` and `sqrt` correctly rounded on the CPU
//!   and CUDA (Vulkan allows 2.5 ulp for `/` and `sqrt`); GPUs may contract
//!   `a * b + c` into one rounding (use [`Expr::fma`] to ask for it
//!   everywhere). `min`/`max` return the other operand when one is NaN.
//!   `exp`, `log`, `sin`, `cos`, `tanh`, `pow` follow C (`log(0) == -inf`,
//!   `log(-1)` and `sqrt(-1)` are NaN, `pow` has C's special cases) to the
//!   accuracy of each platform's library: exact rounding is not promised.
//!   WGSL offers these six on `f32` only; on `f64` they are `Unsupported`
//!   on wgpu. Comparisons are IEEE's: every one is false at NaN except
//!   `ne`, which is true.
//! - On wgpu, WGSL lets the shader compiler assume values are finite (Mesa
//!   folds `y - y` to 0 and `0 / y` to 0), so a result that is, or passes
//!   through, an infinity or NaN is indeterminate there; the finite results
//!   follow the rules above. The per-operation error bounds each backend is
//!   held to are tabled in the conformance suite's random float
//!   expressions (`conformance/src/patterns/user/float.rs`).
//! - Float to integer conversion truncates and saturates, NaN giving 0;
//!   integer to float rounds to nearest; integer to integer wraps.
//! - `f16` and `bf16` values are computed in `f32` and rounded once to
//!   their dtype after each operation (so `+ - * /` and `sqrt` give the
//!   correctly rounded 16-bit result, as if computed in the 16-bit type);
//!   reductions and scans accumulate in a 32- or 64-bit type.
//! - A raw input read outside its length gives 0.
//! - `abs` of the most negative integer is itself (it wraps), on every
//!   backend; generated CUDA multiplies by the sign rather than emitting
//!   PTX `abs`, which ptxas was seen to treat as never negative.
//!
//! # Examples
//! ```
//! use kiln_kernels::expr::{select, var, Expr};
//! let x = var("x");
//! let relu = select(x.clone().gt(0.0), x.clone(), Expr::from(0.0));
//! assert_eq!(relu.to_string(), "select((x > 0.0), x, 0.0)");
//! ```

mod check;
mod cuda;
mod fold;
mod fold_check;
mod generate;
mod halves;
mod host;
mod neutral;
mod node;
mod ty;
mod value;
mod wgsl;

pub use node::{BinOp, Expr, UnOp, index, len, select, var};
pub use ty::{STORED, SUPPORTED, Ty};

// `Param`, `Role`, `Typed`, the fold types and `Generator` are declared
// `pub` in their private modules, as the sealed trait of the user kernels'
// kinds (user/kind.rs), reachable through the public `UserKernel<K>`, names
// them; these `pub(crate)` re-exports keep them out of the API.
pub(crate) use check::{Param, Role, Stmt, Typed, resolve};
pub(crate) use halves::check;

/// The typed program's operations, for the kernels' checks.
pub(crate) mod check_op {
    pub(crate) use super::check::Op::*;
    pub(crate) use super::check::transcendental;
}
pub(crate) use fold::{Fold, FoldDef, Pass, ScanPass};
pub(crate) use fold_check::check_fold;
pub(crate) use generate::{Generator, generator};

/// The tiles of the scans' one-pass (CUDA) and multi-pass (WGSL) kernels.
pub(crate) use cuda::scan::tile as cuda_scan_tile;
pub(crate) use wgsl::scan::tile as wgsl_scan_tile;
