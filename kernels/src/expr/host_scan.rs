//! The CPU form of user scans. The map runs as a column program (see
//! `host.rs`) over chunks of [`SPAN`] elements, in parallel; inside a chunk
//! [`LANES`] consecutive runs are scanned side by side, so that the
//! combining expression runs as a column program over one element of every
//! run at once. The runs' totals, then the chunks' totals, are scanned in
//! order (Hillis-Steele over a column), and each element meets its prefix
//! in a last column step. Every step keeps the elements' order; the
//! chunking does not depend on the thread count, so results are
//! deterministic.

use kiln_core::{HostArgs, Result};
use rayon::prelude::*;

use super::fold::Fold;
use super::host::{store, Col, SliceMut};
use super::host_fold::{combine, eval, identity, Inputs};
use crate::scan::ScanKind;

/// Elements per chunk.
const SPAN: usize = 1 << 15;
/// Runs scanned side by side in a chunk.
const LANES: usize = 256;

/// A chunk scanned on its own: `runs` runs of `step` elements (the last
/// padded with the identity), their inclusive scans stored step-major
/// (`scans[j * runs + r]` is run `r`'s element `j`), the fold of the runs
/// before each run, and the chunk's total.
struct Chunk {
    len: usize,
    runs: usize,
    step: usize,
    scans: Col,
    before: Col,
    total: Col,
}

/// `col` repeated `n` times (`col` has one element).
fn repeat(col: &Col, n: usize) -> Col {
    col.gather(&vec![0; n])
}

/// The inclusive scan of a column, in order: log2(len) column steps.
fn inclusive(fold: &Fold, mut v: Col) -> Result<Col> {
    let len = v.len();
    let mut o = 1;
    while o < len {
        let joined = combine(fold, &v.range(0, len - o), &v.range(o, len))?;
        v = Col::concat(&[v.range(0, o), joined])?;
        o *= 2;
    }
    Ok(v)
}

/// The exclusive scan of a non-empty column and its total.
fn exclusive(fold: &Fold, id: &Col, v: Col) -> Result<(Col, Col)> {
    let len = v.len();
    let incl = inclusive(fold, v)?;
    Ok((Col::concat(&[id.clone(), incl.range(0, len - 1)])?, incl.range(len - 1, len)))
}

fn chunk(fold: &Fold, inputs: &Inputs<'_>, id: &Col, start: usize, len: usize, n: usize) -> Result<Chunk> {
    let mapped = eval(&fold.map, inputs, start, len, n)?;
    let step = len.div_ceil(LANES.min(len));
    let runs = len.div_ceil(step);
    let padded = Col::concat(&[mapped, repeat(id, runs * step - len)])?;
    let order: Vec<usize> = (0..step).flat_map(|j| (0..runs).map(move |r| r * step + j)).collect();
    let t = padded.gather(&order);
    let mut acc = t.range(0, runs);
    let mut rows = vec![acc.clone()];
    for j in 1..step {
        acc = combine(fold, &acc, &t.range(j * runs, (j + 1) * runs))?;
        rows.push(acc.clone());
    }
    let (before, total) = exclusive(fold, id, acc)?;
    Ok(Chunk { len, runs, step, scans: Col::concat(&rows)?, before, total })
}

/// The chunk's elements from the fold of every earlier chunk, `carry`.
fn finish(fold: &Fold, kind: ScanKind, id: &Col, carry: &Col, c: &Chunk) -> Result<Col> {
    let prefix = combine(fold, &repeat(carry, c.runs), &c.before)?;
    let count = c.runs * c.step;
    let a = prefix.gather(&(0..count).map(|q| q / c.step).collect::<Vec<_>>());
    let b = match kind {
        ScanKind::Inclusive => {
            c.scans.gather(&(0..count).map(|q| (q % c.step) * c.runs + q / c.step).collect::<Vec<_>>())
        }
        ScanKind::Exclusive => {
            let shifted = Col::concat(&[id.clone(), c.scans.clone()])?;
            let at = |q: usize| if q % c.step == 0 { 0 } else { 1 + (q % c.step - 1) * c.runs + q / c.step };
            shifted.gather(&(0..count).map(at).collect::<Vec<_>>())
        }
    };
    Ok(combine(fold, &a, &b)?.range(0, c.len))
}

/// Run a scan: the user's arguments, each raw input's length, the element
/// count, then the output (of the accumulator's dtype).
pub(crate) fn scan(fold: &Fold, kind: ScanKind, args: &mut HostArgs<'_>) -> Result<()> {
    let (inputs, n) = Inputs::of(fold, args)?;
    if n == 0 {
        return Ok(());
    }
    let id = identity(fold, &inputs)?;
    let chunks: Vec<Chunk> = (0..n.div_ceil(SPAN))
        .into_par_iter()
        .map(|c| chunk(fold, &inputs, &id, c * SPAN, SPAN.min(n - c * SPAN), n))
        .collect::<Result<_>>()?;
    let totals = chunks.iter().map(|c| c.total.clone()).collect::<Vec<_>>();
    let (carries, _) = exclusive(fold, &id, Col::concat(&totals)?)?;
    let out_index = args.len() - 1;
    let outs = SliceMut::output(args, out_index, fold.acc)?.chunks_of(SPAN);
    outs.into_par_iter().zip(chunks).enumerate().try_for_each(|(k, (mut out, c))| {
        let col = finish(fold, kind, &id, &carries.range(k, k + 1), &c)?;
        store(&col, &mut out)
    })
}
