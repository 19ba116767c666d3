//! [`Cuda`]: the user kernels' CUDA C++, one pass per launch.

use std::sync::Arc;

use kiln_core::{IndexWidth, Program, Result};

use crate::expr::check::{Role, Typed};
use crate::expr::fold::{Fold, Pass, ScanPass};
use crate::expr::generate::Generator;
use crate::scan::ScanKind;

/// The CUDA generator.
pub(crate) struct Cuda;

impl Generator for Cuda {
    fn per_thread(&self, roles: &[Role], body: &Typed) -> usize {
        super::pack(roles, body)
    }

    fn elementwise(
        &self,
        _kernel: &str,
        entry: &str,
        roles: &[Role],
        body: &Arc<Typed>,
        width: IndexWidth,
    ) -> Result<Program> {
        Ok(Program::new(entry).cuda(super::elementwise(entry, roles, body, width)))
    }

    fn fold(
        &self,
        _kernel: &str,
        base: &str,
        entry: &str,
        fold: &Fold,
        pass: Pass,
        width: IndexWidth,
    ) -> Result<Program> {
        Ok(Program::new(entry).cuda(super::fold::fold(base, fold, pass, width)))
    }

    fn scan_passes(&self) -> Vec<ScanPass> {
        ScanKind::ALL.map(ScanPass::One).to_vec()
    }

    fn scan(
        &self,
        _kernel: &str,
        base: &str,
        entry: &str,
        fold: &Fold,
        _pass: ScanPass,
        width: IndexWidth,
    ) -> Result<Program> {
        // One source holds every kind's entry point.
        Ok(Program::new(entry).cuda(super::scan::scan(base, fold, width)))
    }
}
