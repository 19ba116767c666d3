//! User scans that combine by one operation from its neutral element (see
//! `host_op.rs`), in one pass over memory through the built-in scans'
//! chunks and chains ([`crate::scan::cpu_pass`]): each chunk mapped by the
//! column machine as it is reached, or read in place when the map is one
//! of the inputs. Each float sum is within about one rounding of the exact
//! prefix; integers give the bits of any order; the chunking does not
//! depend on the thread count, so every result is deterministic.

use std::sync::{Mutex, PoisonError};

use kiln_core::Result;

use crate::expr::fold::Fold;
use crate::expr::host::eval::Machine;
use crate::expr::host::inputs::{Inputs, scan_internal};
use crate::expr::host::op::{WithPrefix, direct, native, with_prefix};
use crate::expr::host::{CHUNK as SPAN, Col, Elem, Num, SliceMut};
use crate::scan::ScanKind;
use crate::scan::cpu_pass::{chunk_of, scan as scan_chunks};
use crate::scan::prefix::{CHUNK, Prefix};

/// Scan natively when the fold's combining expression and identity `id`
/// allow it, into `out` (the output, `n` elements): whether it did.
pub(in crate::expr) fn scan(
    fold: &Fold,
    kind: ScanKind,
    inputs: &Inputs<'_>,
    id: &Col,
    n: usize,
    out: &mut SliceMut<'_>,
) -> Result<bool> {
    let Some(op) = native(fold, id) else { return Ok(false) };
    if out.len() != n {
        return Err(scan_internal("the output's length"));
    }
    let exclusive = kind == ScanKind::Exclusive;
    with_prefix(op, fold.acc, Scan { fold, exclusive, inputs, out: out.sub(0, n) })?;
    Ok(true)
}

/// One native scan's arguments.
struct Scan<'s, 'a> {
    fold: &'s Fold,
    exclusive: bool,
    inputs: &'s Inputs<'a>,
    out: SliceMut<'s>,
}

impl WithPrefix for Scan<'_, '_> {
    type Out = ();

    /// Scan by `p` into the output: each chunk the map's values, read in
    /// place or computed in steps of the column machine's span by one
    /// machine per worker.
    fn run<P>(self, p: &P) -> Result<()>
    where
        P: Prefix,
        P::T: Num,
    {
        let Scan { fold, exclusive, inputs, out } = self;
        let out = P::T::of_mut(out).ok_or_else(|| scan_internal("the output"))?;
        let n = out.len();
        let result = Fold::result(&fold.map);
        if let Some(x) = direct::<P::T>(fold, inputs, n) {
            return scan_chunks(p, exclusive, n, |c| Ok(chunk_of(x, c)), out);
        }
        let machines: Mutex<Vec<Machine<'_>>> = Mutex::new(Vec::new());
        let take = || machines.lock().unwrap_or_else(PoisonError::into_inner).pop();
        let map = |c: usize| -> Result<Vec<P::T>> {
            let mut machine = take().unwrap_or_else(|| Machine::new(&fold.map));
            let (start, end) = (c * CHUNK, n.min((c + 1) * CHUNK));
            let mut xs = Vec::with_capacity(end - start);
            for at in (start..end).step_by(SPAN) {
                let exec = inputs.exec(at, SPAN.min(end - at), n);
                machine.run(&exec)?;
                xs.extend_from_slice(P::T::of(machine.values(result, &exec)?).ok_or_else(|| scan_internal("the map"))?);
            }
            machines.lock().unwrap_or_else(PoisonError::into_inner).push(machine);
            Ok(xs)
        };
        scan_chunks(p, exclusive, n, map, out)
    }
}
