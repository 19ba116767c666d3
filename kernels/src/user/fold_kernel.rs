//! What the built fold kernels ([`ReductionKernel`](super::ReductionKernel)
//! and [`ScanKernel`](super::ScanKernel)) hold: the declaration, the
//! hand-written passes and the instances, each a checked fold with one
//! program per pass `P`.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

use kiln_core::{Backend, DType, Error, IndexWidth, Kernel, Language, Program, Result, Source, Stream};

use super::instances::Instances;
use super::overrides::Overrides;
use super::signature::resolve_types;
use crate::expr::{Fold, FoldDef};

/// A built fold kernel with passes `P`.
pub(super) struct FoldKernel<P> {
    /// The declaration.
    pub(super) def: FoldDef,
    /// The instances, made on first use.
    pub(super) cache: Instances<FoldInstance<P>>,
    /// The hand-written passes.
    pub(super) overrides: Overrides,
}

/// A fold kernel instantiated for argument dtypes and a backend.
pub(super) struct FoldInstance<P> {
    /// The checked fold.
    pub(super) fold: Fold,
    /// The program of each pass.
    pub(super) programs: HashMap<P, Program>,
}

impl<P: Eq + Hash> FoldKernel<P> {
    /// The kernel of `def`, all its passes generated.
    pub(super) fn new(def: FoldDef) -> Self {
        FoldKernel { def, cache: Instances::default(), overrides: Overrides::default() }
    }

    /// This kernel with `source` for the pass `entry` in `language`; `Err`
    /// naming the kernel and its passes' entry points, `entries`, when
    /// `entry` is not one of them.
    pub(super) fn with_source(
        &self,
        entries: &[String],
        language: Language,
        entry: &str,
        source: Source,
    ) -> Result<Self> {
        let overrides = self.overrides.with(&self.def.name, entries, language, entry, source)?;
        Ok(FoldKernel { def: self.def.clone(), cache: Instances::default(), overrides })
    }

    /// The programs of `passes`, in that order, in `language` with
    /// placeholders bound by `types` and lengths at `width`; `build` makes
    /// the instance from the placeholders' dtypes the first time.
    pub(super) fn programs(
        &self,
        passes: &[P],
        language: Language,
        width: IndexWidth,
        types: &[(&str, DType)],
        build: impl FnOnce(&HashMap<Arc<str>, DType>) -> Result<Arc<FoldInstance<P>>>,
    ) -> Result<Vec<Program>> {
        let (dtypes, bind) = resolve_types(&self.def.name, &self.def.params, types)?;
        let inst = self.cache.get(language, width, &dtypes, || build(&bind))?;
        Ok(passes.iter().filter_map(|p| inst.programs.get(p).cloned()).collect())
    }
}

impl<P: Eq + Hash> FoldInstance<P> {
    /// The program of `pass` (named `pass_name`) of the kernel `kernel`,
    /// compiled for `stream`'s device.
    pub(super) fn kernel<B: Backend>(
        &self,
        stream: &Stream<B>,
        kernel: &str,
        pass: P,
        pass_name: &str,
    ) -> Result<Kernel<B>> {
        let program = self
            .programs
            .get(&pass)
            .ok_or_else(|| Error::invalid(format!("user kernel `{kernel}`"), format!("no {pass_name} pass")))?;
        stream.device().kernel(program)
    }
}
