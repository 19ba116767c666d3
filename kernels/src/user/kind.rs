//! What one kind of user kernel supplies to the definition every kind
//! shares, [`UserKernel`](super::UserKernel): its declaration, its checks,
//! its passes and how each is generated. [`Elementwise`](super::Elementwise),
//! [`Reduction`](super::Reduction) and [`Scan`](super::Scan) are the kinds;
//! each adds its launch as methods of `UserKernel<Self>`.
//!
//! The trait is sealed: it is declared `pub` in this private module, so
//! that the public `UserKernel<K: Kind>` may name it, and nothing outside
//! the crate can name, call or implement it.

use std::fmt::Debug;
use std::hash::Hash;

use kiln_core::{DType, IndexWidth, Language, Program, Result};

use super::signature::Binding;
use crate::expr::{Generator, Param, Typed};

/// One kind of user kernel: how its builder becomes a declaration, how the
/// declaration is checked for argument dtypes, and the passes generated
/// from it.
pub trait Kind: Sized + Send + Sync + 'static {
    /// What a built kernel keeps of its declaration.
    type Decl: Clone + Debug + Send + Sync;
    /// One of the programs an instance holds.
    type Pass: Copy + Eq + Hash + Send + Sync;
    /// The declaration with its dtypes bound and checked: what the passes
    /// are generated from and launches read.
    type Checked: Send + Sync;
    /// The built kernel's type in `Debug` output (`ReductionKernel`).
    const KERNEL: &'static str;

    /// The builder's name and arguments, checked before anything else.
    fn signature(&self) -> (&str, &[Param]);

    /// The declaration this builder states; `Err` naming the kernel where
    /// it lacks something the kind needs (an input, a map, an identity).
    fn declare(self) -> Result<Self::Decl>;

    /// The declaration's name and arguments.
    fn declared(decl: &Self::Decl) -> (&str, &[Param]);

    /// Whether `decl` names no placeholder dtype, so that `build` can check it.
    fn concrete(decl: &Self::Decl) -> bool;

    /// `decl` with placeholders bound by `bind`, type-checked; `Err`
    /// naming the kernel and what is wrong.
    fn check(decl: &Self::Decl, bind: &Binding) -> Result<Self::Checked>;

    /// The typed bodies of `checked`: what a generator must support, and
    /// what the device must compute and index.
    fn bodies(checked: &Self::Checked) -> impl Iterator<Item = &Typed>;

    /// The dtypes `checked` computes in besides its bodies' and arguments'
    /// (a fold's accumulator and result).
    fn computes(checked: &Self::Checked) -> Vec<DType>;

    /// The dtype of the output a launch writes, where the kind has one
    /// beside its arguments (a fold's result).
    fn gives(checked: &Self::Checked) -> Option<DType>;

    /// The passes the kind runs in `language`, in the order
    /// [`UserKernel::programs`](super::UserKernel::programs) lists them.
    fn passes(language: Language) -> Vec<Self::Pass>;

    /// The name of `pass`, as errors give it.
    fn pass_name(pass: Self::Pass) -> String;

    /// The entry point of `pass` of the kernel named `kernel` (see
    /// [`names`](super::names)).
    fn entry(kernel: &str, pass: Self::Pass) -> String;

    /// `pass` of the kernel `kernel` by `generator`, its entry point `entry`.
    fn generate(
        generator: &dyn Generator,
        kernel: &str,
        entry: &str,
        checked: &Self::Checked,
        pass: Self::Pass,
        width: IndexWidth,
    ) -> Result<Program>;
}
