//! User kernels written once in Rust with the [`expr`](crate::expr) IR,
//! generated for CUDA (NVRTC), WGSL and the CPU.
//!
//! - [`Elementwise`]: a body of assignments per element (PyCUDA's and
//!   CuPy's `ElementwiseKernel`).
//! - [`Reduction`]: a map per element folded by a combining expression,
//!   over everything or along an axis (`ReductionKernel`).
//! - [`Scan`]: a map per element scanned by an associative combining
//!   expression, inclusive or exclusive (`InclusiveScanKernel`).

/// The argument, local, map and identity methods of the fold builders
/// ([`Reduction`], [`Scan`]): structs with `params`, `locals`, `map` and
/// `identity` fields.
macro_rules! fold_arguments {
    () => {
        fn param(mut self, name: &str, role: Role, ty: Ty) -> Self {
            self.params.push(Param { name: Arc::from(name), role, ty });
            self
        }

        /// An input read at the element index.
        pub fn input(self, name: &str, ty: impl Into<Ty>) -> Self {
            self.param(name, Role::Input, ty.into())
        }

        /// An input read at computed indices ([`Expr::at`]).
        pub fn raw(self, name: &str, ty: impl Into<Ty>) -> Self {
            self.param(name, Role::Raw, ty.into())
        }

        /// A scalar argument (visible to the map, and to a post-map).
        pub fn scalar(self, name: &str, ty: impl Into<Ty>) -> Self {
            self.param(name, Role::Scalar, ty.into())
        }

        /// Name `value` as `name` for the map.
        pub fn local(mut self, name: &str, value: impl Into<Expr>) -> Self {
            self.locals.push(Stmt::Let(Arc::from(name), value.into()));
            self
        }

        /// The value each element contributes, of the accumulator's dtype.
        pub fn map(mut self, value: impl Into<Expr>) -> Self {
            self.map = Some(value.into());
            self
        }

        /// The identity of the combining expression: a constant of the
        /// accumulator's dtype, neutral on both sides. `build` (or, where
        /// the accumulator is a placeholder, the first launch binding each
        /// dtype) checks it at sample values and refuses NaN; where the
        /// check cannot prove it neutral everywhere, a value equal to it is
        /// left out of the fold on every backend (see [`Reduction`](crate::user::Reduction)).
        pub fn identity(mut self, value: impl Into<Expr>) -> Self {
            self.identity = Some(value.into());
            self
        }
    };
}
use fold_arguments;

mod elementwise;
mod fold_kernel;
mod instances;
mod names;
mod overrides;
mod partials;
mod reduction;
mod scan;
mod signature;

pub use elementwise::{Elementwise, ElementwiseKernel};
pub use reduction::{Reduction, ReductionKernel};
pub use scan::{Scan, ScanKernel};
