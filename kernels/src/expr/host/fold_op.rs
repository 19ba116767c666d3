//! User reductions of a whole array, or of each long row of one, that
//! combine by one operation from its neutral element (see `host_op.rs`):
//! each fixed range of chunks maps a chunk at a time on the column machine
//! (or reads the map's input in place) and folds the values natively
//! through the operation's running prefix, the ranges' results then joined
//! in order. Float sums are within
//! about one rounding of the exact sum; integers give the bits of any
//! order; the ranges do not depend on the thread count, so every result is
//! deterministic.

use kiln_core::Result;
use rayon::prelude::*;

use crate::expr::fold::Fold;
use crate::expr::host::eval::Machine;
use crate::expr::host::inputs::{Inputs, internal, per_row, row_part};
use crate::expr::host::op::{WithPrefix, direct, native, with_prefix};
use crate::expr::host::{CHUNK, Col, Elem, Num};
use crate::scan::prefix::{Prefix, parts_total};

/// The fold of all `n` (at least one) elements natively, when the fold's
/// combining expression and identity `id` allow it: one element.
pub(in crate::expr) fn whole(fold: &Fold, inputs: &Inputs<'_>, id: &Col, n: usize) -> Result<Option<Col>> {
    rows(fold, inputs, id, n, (1, n))
}

/// The fold of each row of `rows x cols` (`cols` at least one) of the `n`
/// elements natively, when the fold's combining expression and identity
/// `id` allow it: one element per row. Each row folds in fixed ranges of
/// chunks, every range of every row a task of its own.
pub(in crate::expr) fn rows(
    fold: &Fold,
    inputs: &Inputs<'_>,
    id: &Col,
    n: usize,
    shape: (usize, usize),
) -> Result<Option<Col>> {
    let Some(op) = native(fold, id) else { return Ok(None) };
    with_prefix(op, fold.acc, Rows { fold, inputs, n, shape }).map(Some)
}

/// One native fold's arguments.
struct Rows<'s, 'a> {
    fold: &'s Fold,
    inputs: &'s Inputs<'a>,
    n: usize,
    shape: (usize, usize),
}

impl WithPrefix for Rows<'_, '_> {
    type Out = Col;

    fn run<P>(self, p: &P) -> Result<Col>
    where
        P: Prefix,
        P::T: Num,
    {
        let Rows { fold, inputs, n, shape: (rows, cols) } = self;
        if rows.checked_mul(cols).is_none_or(|m| m > n) {
            return Err(internal("the shape"));
        }
        let result = Fold::result(&fold.map);
        let x = direct::<P::T>(fold, inputs, n);
        let fold_range = |machine: &mut Machine<'_>, t: usize| -> Result<P::Acc> {
            let (start, end) = row_part(t, cols);
            let mut acc = p.zero();
            for at in (start..end).step_by(CHUNK) {
                let len = CHUNK.min(end - at);
                let sums = match x {
                    Some(x) => p.chunk_sums(&x[at..at + len]),
                    None => {
                        let exec = inputs.exec(at, len, n);
                        machine.run(&exec)?;
                        let values = P::T::of(machine.values(result, &exec)?).ok_or_else(|| internal("the map"))?;
                        p.chunk_sums(values)
                    }
                };
                acc = p.join(acc, parts_total(p, &sums));
            }
            Ok(acc)
        };
        let parts: Vec<P::Acc> = (0..rows * per_row(cols))
            .into_par_iter()
            .map_init(|| Machine::new(&fold.map), fold_range)
            .collect::<Result<_>>()?;
        let totals: Vec<P::T> =
            parts.chunks(per_row(cols)).map(|row| p.value(row.iter().fold(p.zero(), |a, &b| p.join(a, b)))).collect();
        Ok(Col::of(P::T::slice(&totals)))
    }
}
