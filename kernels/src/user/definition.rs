//! The definition every kind of user kernel shares (as CuPy's
//! `_AbstractReductionKernel` serves every reduction): the declaration,
//! the hand-written passes and the instances, each the declaration checked
//! for argument dtypes with one program per pass of its kind.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use kiln_core::{Args, Backend, DType, Error, IndexWidth, Kernel, Language, Program, Result, Source, Stream};

use super::instances::Instances;
use super::kind::Kind;
use super::names::check_ident;
use super::overrides::Overrides;
use super::signature::{Binding, Bound, bind, check_u32, resolve_types};
use crate::expr;

/// A built user kernel of kind `K` ([`Elementwise`](super::Elementwise),
/// [`Reduction`](super::Reduction) or [`Scan`](super::Scan)); cheap to
/// clone, shared between threads. Its programs are generated per argument
/// dtypes, index width and language on first use, and kept.
///
/// Its kinds are named [`ElementwiseKernel`](super::ElementwiseKernel),
/// [`ReductionKernel`](super::ReductionKernel) and
/// [`ScanKernel`](super::ScanKernel); each adds its own launch.
///
/// # Examples
/// ```
/// use kiln_core::{DType, IndexWidth, Language};
/// use kiln_kernels::expr::var;
/// use kiln_kernels::user::{Elementwise, ElementwiseKernel};
/// # fn main() -> kiln_core::Result<()> {
/// let double: ElementwiseKernel =
///     Elementwise::new("double").input("x", DType::I32).output("y", DType::I32).set("y", var("x") * 2).build()?;
/// assert_eq!(double.name(), "double");
/// let programs = double.programs(Language::Host, IndexWidth::U64, &[])?;
/// assert_eq!(programs[0].name(), "user_double");
/// # Ok(()) }
/// ```
pub struct UserKernel<K: Kind>(Arc<Definition<K>>);

struct Definition<K: Kind> {
    /// The declaration.
    decl: K::Decl,
    /// The instances, made on first use.
    cache: Instances<Instance<K>>,
    /// The hand-written passes.
    overrides: Overrides,
}

/// A user kernel instantiated for argument dtypes, an index width and a language.
pub(super) struct Instance<K: Kind> {
    /// The declaration, checked.
    pub(super) checked: K::Checked,
    /// The program of each pass.
    programs: HashMap<K::Pass, Program>,
    /// The passes whose program is a hand-written source.
    hand_written: HashSet<K::Pass>,
}

impl<K: Kind> Instance<K> {
    /// Whether `pass` runs a hand-written source.
    pub(super) fn hand_written(&self, pass: K::Pass) -> bool {
        self.hand_written.contains(&pass)
    }
}

impl<K: Kind> Clone for UserKernel<K> {
    fn clone(&self) -> Self {
        UserKernel(self.0.clone())
    }
}

impl<K: Kind> std::fmt::Debug for UserKernel<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple(K::KERNEL).field(&self.0.decl).finish()
    }
}

impl<K: Kind> UserKernel<K> {
    /// The kernel `builder` declares: its name and arguments checked, then
    /// what its kind needs, then, where no dtype is a placeholder, every
    /// type (else at the first launch binding each dtype).
    pub(super) fn build(builder: K) -> Result<Self> {
        let (name, params) = builder.signature();
        check_ident(name, params)?;
        let decl = builder.declare()?;
        if K::concrete(&decl) {
            K::check(&decl, &Binding::new())?;
        }
        Ok(Self::new(decl, Overrides::default()))
    }

    fn new(decl: K::Decl, overrides: Overrides) -> Self {
        UserKernel(Arc::new(Definition { decl, cache: Instances::default(), overrides }))
    }

    /// The kernel's name.
    pub fn name(&self) -> &str {
        K::declared(&self.0.decl).0
    }

    /// `user kernel `{name}``, as errors name the kernel.
    pub(super) fn what(&self) -> String {
        format!("user kernel `{}`", self.name())
    }

    /// This kernel with `source` for the pass whose entry point is `entry`
    /// in `language`; `Err` naming the kernel and its entry points when
    /// `entry` is not one of them. Each kind's `with_source` states what
    /// the source must do.
    pub(super) fn replaced(&self, language: Language, entry: &str, source: Source) -> Result<Self> {
        let entries: Vec<String> = K::passes(language).into_iter().map(|p| K::entry(self.name(), p)).collect();
        let overrides = self.0.overrides.with(self.name(), &entries, language, entry, source)?;
        Ok(Self::new(self.0.decl.clone(), overrides))
    }

    /// `self` with `source` in place of the generated pass `pass` in `language`.
    pub(super) fn replaced_pass(&self, language: Language, pass: K::Pass, source: Source) -> Self {
        let entry = K::entry(self.name(), pass);
        Self::new(self.0.decl.clone(), self.0.overrides.with_entry(language, &entry, source))
    }

    /// The kernel's passes as [`Program`]s in `language` for the low-level
    /// API, with placeholders bound by `types` and lengths at `width`, in
    /// the order its kind's `with_source` names them; each is named by its
    /// entry point.
    pub fn programs(&self, language: Language, width: IndexWidth, types: &[(&str, DType)]) -> Result<Vec<Program>> {
        let (name, params) = K::declared(&self.0.decl);
        let (dtypes, bind) = resolve_types(name, params, types)?;
        let inst = self.instance(language, width, &dtypes, &bind)?;
        Ok(K::passes(language).into_iter().filter_map(|p| inst.programs.get(&p).cloned()).collect())
    }

    /// The instance for `language`, `width` and argument `dtypes`,
    /// placeholders bound by `bind`: made the first time, then kept.
    fn instance(
        &self,
        language: Language,
        width: IndexWidth,
        dtypes: &[DType],
        bind: &Binding,
    ) -> Result<Arc<Instance<K>>> {
        self.0.cache.get(language, width, dtypes, || {
            let name = self.name();
            let checked = K::check(&self.0.decl, bind)?;
            let (mut programs, mut hand_written) = (HashMap::new(), HashSet::new());
            for pass in K::passes(language) {
                let entry = K::entry(name, pass);
                let program = match self.0.overrides.get(language, &entry) {
                    Some(hand) => {
                        hand_written.insert(pass);
                        hand
                    }
                    None => {
                        let generator = expr::generator(name, language)?;
                        generator.supports(name, &mut K::bodies(&checked))?;
                        K::generate(generator, name, &entry, &checked, pass, width)?
                    }
                };
                programs.insert(pass, program);
            }
            Ok(Arc::new(Instance { checked, programs, hand_written }))
        })
    }

    /// A launch's arguments matched to the declaration, the instance for
    /// them on `stream`'s device, and that device checked: `Err` naming
    /// the kernel and the argument for arguments that do not match, an
    /// output of another dtype than `output` where the kind gives one, or
    /// a dtype the device cannot compute on.
    pub(super) fn prepare<B: Backend>(
        &self,
        stream: &Stream<B>,
        args: &Args<'_, B>,
        output: Option<DType>,
    ) -> Result<(Arc<Instance<K>>, Bound)> {
        let (name, params) = K::declared(&self.0.decl);
        let bound = bind(name, params, args.raw())?;
        let width = stream.device().info().features.index_width;
        let inst = self.instance(B::LANGUAGE, width, &bound.dtypes, &bound.bind)?;
        let what = self.what();
        if let (Some(out), Some(gives)) = (output, K::gives(&inst.checked))
            && out != gives
        {
            return Err(Error::invalid(what, format!("gives {gives}, and the output is {out}")));
        }
        let nodes = K::bodies(&inst.checked).flat_map(|b| b.nodes.iter().filter_map(|n| n.ty.dtype()));
        for d in nodes.chain(bound.dtypes.iter().copied()).chain(K::computes(&inst.checked)) {
            crate::launch::check_dtype(stream, d, &what)?;
        }
        check_u32(name, K::bodies(&inst.checked), &bound)?;
        Ok((inst, bound))
    }

    /// The program of `pass` in `inst`, compiled for `stream`'s device.
    pub(super) fn kernel<B: Backend>(
        &self,
        stream: &Stream<B>,
        inst: &Instance<K>,
        pass: K::Pass,
    ) -> Result<Kernel<B>> {
        let program = inst
            .programs
            .get(&pass)
            .ok_or_else(|| Error::invalid(self.what(), format!("no {} pass", K::pass_name(pass))))?;
        stream.device().kernel(program)
    }
}
