//! Code generation for user kernels, one implementation per language:
//! [`Cuda`](super::cuda::Cuda) (expr/cuda/: CUDA C++ for NVRTC),
//! [`Wgsl`](super::wgsl::Wgsl) (expr/wgsl/) and [`Host`](super::host::Host)
//! (expr/host/: the CPU's compiled column programs), chosen once from a
//! kernel's language by [`generator`]. A new language is a folder with a
//! type implementing [`Generator`] and its line in [`generator`].

use std::sync::Arc;

use kiln_core::{Error, IndexWidth, Language, Program, Result};

use super::check::{Role, Typed};
use super::fold::{Fold, Pass, ScanPass};

/// The kernels of one language, from checked bodies and folds. Every
/// program's entry point is the `entry` it is given (the passes of a fold
/// `base` are `{base}_{pass}`).
pub trait Generator: Sync {
    /// `Err`, naming `kernel`, where this language cannot compute what
    /// `bodies` compute; by default it can.
    fn supports(&self, kernel: &str, bodies: &mut dyn Iterator<Item = &Typed>) -> Result<()> {
        let _ = (kernel, bodies);
        Ok(())
    }

    /// Elements each thread of the elementwise kernel of `body` handles.
    fn per_thread(&self, roles: &[Role], body: &Typed) -> usize;

    /// The elementwise kernel `entry` of the user kernel `kernel`.
    fn elementwise(
        &self,
        kernel: &str,
        entry: &str,
        roles: &[Role],
        body: &Arc<Typed>,
        width: IndexWidth,
    ) -> Result<Program>;

    /// The passes a reduction runs in this language: by default a GPU's,
    /// whose blocks fold partials that later passes fold again.
    fn fold_passes(&self) -> &'static [Pass] {
        &[Pass::Whole, Pass::Fold, Pass::Rows, Pass::Split, Pass::Tile, Pass::Cols]
    }

    /// Pass `pass` of the reduction `base` of the user kernel `kernel`, its
    /// entry point `entry`.
    fn fold(
        &self,
        kernel: &str,
        base: &str,
        entry: &str,
        fold: &Fold,
        pass: Pass,
        width: IndexWidth,
    ) -> Result<Program>;

    /// The passes a scan runs in this language.
    fn scan_passes(&self) -> Vec<ScanPass>;

    /// Pass `pass` of the scan `base` of the user kernel `kernel`, its entry
    /// point `entry`.
    fn scan(
        &self,
        kernel: &str,
        base: &str,
        entry: &str,
        fold: &Fold,
        pass: ScanPass,
        width: IndexWidth,
    ) -> Result<Program>;
}

/// The generator of `language`; `Err` naming `kernel` for a language
/// without one.
pub(crate) fn generator(kernel: &str, language: Language) -> Result<&'static dyn Generator> {
    match language {
        Language::Cuda => Ok(&super::cuda::Cuda),
        Language::Wgsl => Ok(&super::wgsl::Wgsl),
        Language::Host => Ok(&super::host::Host),
        other => Err(Error::invalid(format!("user kernel `{kernel}`"), format!("no generator for {other}"))),
    }
}
