//! User kernels written once in Rust with the [`expr`](crate::expr) IR,
//! generated for CUDA (NVRTC), WGSL and the CPU.
//!
//! - [`Elementwise`]: a body of assignments per element (PyCUDA's and
//!   CuPy's `ElementwiseKernel`).
//! - [`Reduction`]: a map per element folded by a combining expression,
//!   over everything or along an axis (`ReductionKernel`).
//! - [`Scan`]: a map per element scanned by an associative combining
//!   expression, inclusive or exclusive (`InclusiveScanKernel`).
//!
//! Each builder is a kind of the one definition they share,
//! [`UserKernel`]: its name, hand-written sources, generated programs and
//! their cache, and the checks of a launch's arguments are written once
//! there (definition.rs); a kind supplies its declaration, passes and
//! generation (kind.rs), and its launch.

/// The argument methods every builder ([`Elementwise`], [`Reduction`],
/// [`Scan`]) has: structs with a `params` field.
macro_rules! arguments {
    () => {
        fn param(mut self, name: &str, role: Role, ty: Ty) -> Self {
            self.params.push(Param { name: Arc::from(name), role, ty });
            self
        }

        /// An input read at the element index.
        pub fn input(self, name: &str, ty: impl Into<Ty>) -> Self {
            self.param(name, Role::Input, ty.into())
        }

        /// An input read at computed indices ([`Expr::at`]); its length is its own.
        pub fn raw(self, name: &str, ty: impl Into<Ty>) -> Self {
            self.param(name, Role::Raw, ty.into())
        }

        /// A scalar argument: one value, the same for every element.
        pub fn scalar(self, name: &str, ty: impl Into<Ty>) -> Self {
            self.param(name, Role::Scalar, ty.into())
        }
    };
}
use arguments;

/// The argument, local, map and identity methods of the fold builders
/// ([`Reduction`], [`Scan`]): structs with `params`, `locals`, `map` and
/// `identity` fields.
macro_rules! fold_arguments {
    () => {
        super::arguments!();

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

/// The items of [`Kind`](kind::Kind) the fold kinds ([`Reduction`],
/// [`Scan`]) share: their declaration is a [`FoldDef`](crate::expr::FoldDef),
/// checked into a [`Fold`](crate::expr::Fold), which gives its result's
/// dtype; their passes (`$pass`) are those the language's `Generator`
/// lists (`$passes`) and generates (`$generate`).
macro_rules! fold_kind {
    ($pass:ty, $passes:ident, $generate:ident) => {
        type Decl = FoldDef;
        type Pass = $pass;

        fn passes(language: Language) -> Vec<$pass> {
            expr::generator("", language).map_or_else(|_| Vec::new(), |g| g.$passes().into())
        }

        fn pass_name(pass: $pass) -> String {
            pass.name().into()
        }

        fn entry(kernel: &str, pass: $pass) -> String {
            names::pass_entry(kernel, &pass.name())
        }

        fn generate(
            generator: &dyn Generator,
            kernel: &str,
            entry: &str,
            fold: &Fold,
            pass: $pass,
            width: IndexWidth,
        ) -> Result<Program> {
            // The generators name pass `pass` of `base` `{base}_{pass}`: `entry`.
            generator.$generate(kernel, &names::entry(kernel), entry, fold, pass, width)
        }

        type Checked = Fold;

        fn signature(&self) -> (&str, &[Param]) {
            (&self.name, &self.params)
        }

        fn declared(decl: &FoldDef) -> (&str, &[Param]) {
            (&decl.name, &decl.params)
        }

        fn concrete(decl: &FoldDef) -> bool {
            let concrete = |t: &Ty| matches!(t, Ty::Is(_));
            decl.params.iter().all(|p| concrete(&p.ty))
                && concrete(&decl.acc)
                && decl.post.as_ref().is_none_or(|(t, _)| concrete(t))
        }

        fn check(decl: &FoldDef, bind: &Binding) -> Result<Fold> {
            check_fold(decl, bind)
        }

        fn bodies(fold: &Fold) -> impl Iterator<Item = &Typed> {
            fold.parts()
        }

        fn computes(fold: &Fold) -> Vec<DType> {
            vec![fold.acc, fold.out]
        }

        fn gives(fold: &Fold) -> Option<DType> {
            Some(fold.out)
        }
    };
}
use fold_kind;

mod definition;
mod elementwise;
mod instances;
mod kind;
mod names;
mod overrides;
mod partials;
mod reduction;
mod scan;
mod signature;

pub use definition::UserKernel;
pub use elementwise::Elementwise;
pub use reduction::Reduction;
pub use scan::Scan;

/// A built [`Elementwise`] kernel: run it with
/// [`launch`](UserKernel::<Elementwise>::launch).
pub type ElementwiseKernel = UserKernel<Elementwise>;

/// A built [`Reduction`]: run it with
/// [`reduce`](UserKernel::<Reduction>::reduce),
/// [`reduce_into`](UserKernel::<Reduction>::reduce_into) or
/// [`reduce_axis`](UserKernel::<Reduction>::reduce_axis).
pub type ReductionKernel = UserKernel<Reduction>;

/// A built [`Scan`]: run it with [`scan`](UserKernel::<Scan>::scan).
pub type ScanKernel = UserKernel<Scan>;
