//! [`Wgsl`]: the user kernels' WGSL, reductions and scans in several
//! passes (workgroups cannot wait on each other).

use std::sync::Arc;

use kiln_core::{BackendKind, DType, Error, IndexWidth, Program, Result};

use crate::expr::check::{Role, Typed};
use crate::expr::check_op;
use crate::expr::fold::{Fold, Pass, ScanPass};
use crate::expr::generate::Generator;
use crate::scan::ScanKind;

/// The WGSL generator.
pub(crate) struct Wgsl;

impl Generator for Wgsl {
    /// WGSL has no 8- or 64-bit integers and no bf16, and Vulkan's
    /// transcendental functions take 32-bit floats only.
    fn supports(&self, kernel: &str, bodies: &mut dyn Iterator<Item = &Typed>) -> Result<()> {
        let what = || format!("user kernel `{kernel}`");
        for body in bodies {
            for d in body.dtypes.iter().copied().chain(body.nodes.iter().filter_map(|n| n.ty.dtype())) {
                if d.wgsl_name().is_none() {
                    return Err(Error::unsupported(BackendKind::Wgpu, what(), format!("WGSL has no {d}")));
                }
            }
            for n in &body.nodes {
                if n.ty.dtype() == Some(DType::F64)
                    && let Some(f) = check_op::transcendental(&n.op)
                {
                    return Err(Error::unsupported(
                        BackendKind::Wgpu,
                        what(),
                        format!("Vulkan offers {f} on 32-bit floats only, not f64"),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Four: see [`elementwise`](super::elementwise).
    fn per_thread(&self, _roles: &[Role], _body: &Typed) -> usize {
        4
    }

    fn elementwise(
        &self,
        _kernel: &str,
        entry: &str,
        roles: &[Role],
        body: &Arc<Typed>,
        _width: IndexWidth,
    ) -> Result<Program> {
        Ok(Program::new(entry).wgsl(super::elementwise(entry, roles, body)))
    }

    fn fold(
        &self,
        _kernel: &str,
        base: &str,
        entry: &str,
        fold: &Fold,
        pass: Pass,
        _width: IndexWidth,
    ) -> Result<Program> {
        let enables = super::enables(fold.map.dtypes.iter().copied().chain([fold.out]));
        Ok(Program::new(entry).wgsl(format!("{enables}{}", super::fold::fold(base, fold, pass))))
    }

    fn scan_passes(&self) -> Vec<ScanPass> {
        let mut v = vec![ScanPass::Sums, ScanPass::LevelSums, ScanPass::LevelTiles];
        v.extend(ScanKind::ALL.map(ScanPass::Tiles));
        v
    }

    fn scan(
        &self,
        _kernel: &str,
        base: &str,
        entry: &str,
        fold: &Fold,
        pass: ScanPass,
        _width: IndexWidth,
    ) -> Result<Program> {
        let enables = super::enables(fold.map.dtypes.iter().copied());
        Ok(Program::new(entry).wgsl(format!("{enables}{}", super::scan::scan(base, fold, pass))))
    }
}
