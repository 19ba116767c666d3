//! What a user reduction or scan on the CPU reads: the launch's inputs and
//! scalars, its lengths, the tasks rows are folded in, and its internal
//! error. A leaf of the host's folds and scans (`host_fold.rs`,
//! `host_fold_op.rs`, `host_op.rs`, `host_scan.rs`, `host_scan_op.rs`).

use kiln_core::{Error, HostArgs, Result};

use crate::expr::check::Role;
use crate::expr::fold::Fold;
use crate::expr::host::eval::Exec;
use crate::expr::host::{CHUNK, Slice, TASK_CHUNKS, scalar_value};
use crate::expr::value::Value;

/// An internal error of a user reduction on the CPU.
pub(in crate::expr) fn internal(what: &str) -> Error {
    Error::invalid("user reduction on the CPU", format!("{what}: disagrees with the checked kernel"))
}

/// An internal error of a user scan on the CPU.
pub(in crate::expr) fn scan_internal(what: &str) -> Error {
    Error::invalid("user scan on the CPU", format!("{what}: disagrees with the checked kernel"))
}

/// The launch's inputs and scalars, by argument.
pub(in crate::expr) struct Inputs<'a> {
    pub(in crate::expr) slices: Vec<Option<Slice<'a>>>,
    pub(in crate::expr) scalars: Vec<Option<Value>>,
}

impl<'a> Inputs<'a> {
    /// The user's arguments of a launch (inputs and scalars), and the
    /// element count after them and each raw input's length.
    pub(in crate::expr) fn of(fold: &Fold, args: &HostArgs<'a>) -> Result<(Inputs<'a>, usize)> {
        let p = fold.roles.len();
        let mut inputs = Inputs { slices: vec![None; p + 2], scalars: vec![None; p + 2] };
        for (k, role) in fold.roles.iter().enumerate() {
            let d = fold.map.dtypes[k];
            match role {
                Role::Scalar => inputs.scalars[k] = Some(scalar_value(args, k, d)?),
                _ => inputs.slices[k] = Some(Slice::input(args, k, d)?),
            }
        }
        let raws = fold.roles.iter().filter(|r| **r == Role::Raw).count();
        Ok((inputs, length(args, p + raws)?))
    }

    /// Argument `p`'s elements, when it is an input (not a scalar).
    pub(in crate::expr) fn slice(&self, p: usize) -> Option<Slice<'a>> {
        self.slices.get(p).copied().flatten()
    }

    /// The range `[start, start + len)` of `n`.
    pub(in crate::expr) fn exec(&self, start: usize, len: usize, n: usize) -> Exec<'_> {
        Exec { start, len, n, inputs: &self.slices, scalars: &self.scalars, local: &[] }
    }
}

/// Task `t`'s range `[start, end)` of a fold of each row of `cols`
/// elements in fixed parts of `TASK_CHUNKS` chunks, every part of every row
/// a task of its own (rows of `per_row(cols)` tasks).
pub(in crate::expr) fn row_part(t: usize, cols: usize) -> (usize, usize) {
    let task = CHUNK * TASK_CHUNKS;
    let (r, k) = (t / per_row(cols), t % per_row(cols));
    let start = r * cols + k * task;
    (start, ((r + 1) * cols).min(start + task))
}

/// Tasks per row of [`row_part`].
pub(in crate::expr) fn per_row(cols: usize) -> usize {
    cols.div_ceil(CHUNK * TASK_CHUNKS)
}

/// A length argument at `index` (u64 or u32, the device's index width).
pub(in crate::expr) fn length(args: &HostArgs<'_>, index: usize) -> Result<usize> {
    match args.scalar::<u64>(index) {
        Ok(v) => Ok(v as usize),
        Err(_) => Ok(args.scalar::<u32>(index)? as usize),
    }
}
