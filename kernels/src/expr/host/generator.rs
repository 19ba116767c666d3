//! [`Host`]: the user kernels on the CPU, as closures over their checked
//! bodies (each a whole launch in one call).

use std::sync::Arc;

use kiln_core::{Error, HostClosure, IndexWidth, Program, Result};

use crate::expr::check::{Role, Typed};
use crate::expr::fold::{Fold, Pass, ScanPass};
use crate::expr::generate::Generator;
use crate::scan::ScanKind;

use super::fold::Shape;

/// The CPU's generator.
pub(crate) struct Host;

impl Generator for Host {
    fn per_thread(&self, _roles: &[Role], _body: &Typed) -> usize {
        1
    }

    fn elementwise(
        &self,
        kernel: &str,
        entry: &str,
        roles: &[Role],
        body: &Arc<Typed>,
        _width: IndexWidth,
    ) -> Result<Program> {
        let (roles, body) = (roles.to_vec(), body.clone());
        let key = format!("elementwise {kernel} {roles:?}\n{}", body.canonical());
        let run = HostClosure::new(key, move |args| super::elementwise::elementwise(&roles, &body, args));
        Ok(Program::new(entry).host_closure(run))
    }

    fn fold_passes(&self) -> &'static [Pass] {
        &[Pass::Whole, Pass::Rows, Pass::Cols]
    }

    fn fold(
        &self,
        kernel: &str,
        _base: &str,
        entry: &str,
        fold: &Fold,
        pass: Pass,
        _width: IndexWidth,
    ) -> Result<Program> {
        let shape = match pass {
            Pass::Rows => Shape::Rows,
            Pass::Cols => Shape::Cols,
            _ => Shape::Whole,
        };
        let fold = fold.clone();
        let key = format!("reduction {kernel} {shape:?}\n{}", fold.canonical());
        let run = HostClosure::new(key, move |args| super::fold::reduce(&fold, shape, args));
        Ok(Program::new(entry).host_closure(run))
    }

    fn scan_passes(&self) -> Vec<ScanPass> {
        ScanKind::ALL.map(ScanPass::One).to_vec()
    }

    fn scan(
        &self,
        kernel: &str,
        _base: &str,
        entry: &str,
        fold: &Fold,
        pass: ScanPass,
        _width: IndexWidth,
    ) -> Result<Program> {
        let ScanPass::One(kind) = pass else {
            return Err(Error::invalid(
                format!("user kernel `{kernel}`"),
                format!("the CPU runs a scan in one pass, not a {} pass", pass.name()),
            ));
        };
        let fold = fold.clone();
        let key = format!("scan {kernel} {kind}\n{}", fold.canonical());
        let run = HostClosure::new(key, move |args| super::scan::scan(&fold, kind, args));
        Ok(Program::new(entry).host_closure(run))
    }
}
