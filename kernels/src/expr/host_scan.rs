//! The CPU form of user scans, in two passes over chunks of [`SPAN`]
//! elements. A chunk is cut into up to [`LANES`] consecutive runs, scanned
//! side by side, so the map and the combining expression run as column
//! programs over one element of every run at once.
//!
//! The first pass folds each chunk's runs and scans the runs' totals
//! (Hillis-Steele over a column), giving the fold of the runs before each
//! run and the chunk's total. Chunks' totals are then folded in order, and
//! the second pass maps each chunk again and scans its runs from their
//! prefixes, writing the output. Chunks go in blocks of a few per thread,
//! so a block's input is still in the cache when the second pass reads it.
//! Every step keeps the elements' order and the chunking does not depend
//! on the thread count, so results are deterministic.

use kiln_core::{HostArgs, Result};
use rayon::prelude::*;

use super::fold::Fold;
use super::host::{Col, Elem, Slice, SliceMut};
use super::host_eval::Machine;
use super::host_fold::{identity, Combiner, Inputs};
use crate::scan::ScanKind;

/// Elements per chunk.
const SPAN: usize = 1 << 15;
/// Runs scanned side by side in a chunk, at most.
const LANES: usize = 1024;
/// Chunks per thread in a block.
const PER_THREAD: usize = 4;

/// A chunk's runs: `runs` runs of `step` elements (the last may be short).
#[derive(Clone, Copy)]
struct Runs {
    len: usize,
    runs: usize,
    step: usize,
}

impl Runs {
    fn of(len: usize) -> Runs {
        let step = len.div_ceil(LANES.min(len));
        Runs { len, runs: len.div_ceil(step), step }
    }
}

/// Element `j` of every run of `values` into `out`, `pad` past the end.
fn column(values: Slice<'_>, j: usize, r: Runs, pad: &Col, out: &mut Col) -> Result<()> {
    fn go<T: Elem>(v: &[T], j: usize, r: Runs, pad: &Col, out: &mut Col) -> Option<()> {
        let pad = T::col(pad)?.first().copied()?;
        let o = T::col_mut(out)?;
        o.clear();
        o.extend((0..r.runs).map(|k| v.get(k * r.step + j).copied().unwrap_or(pad)));
        Some(())
    }
    let done = match values {
        Slice::I32(v) => go(v, j, r, pad, out),
        Slice::U32(v) => go(v, j, r, pad, out),
        Slice::I64(v) => go(v, j, r, pad, out),
        Slice::U64(v) => go(v, j, r, pad, out),
        Slice::F32(v) => go(v, j, r, pad, out),
        Slice::F64(v) => go(v, j, r, pad, out),
    };
    done.ok_or_else(|| internal("a run's column"))
}

/// Element `k` of `col` to element `j` of run `k` of `out`, inside the chunk.
fn scatter(col: &Col, j: usize, r: Runs, out: &mut SliceMut<'_>) -> Result<()> {
    fn go<T: Elem>(c: &Col, j: usize, r: Runs, o: &mut [T]) -> Option<()> {
        for (k, &v) in T::col(c)?.iter().enumerate() {
            if let Some(slot) = o.get_mut(k * r.step + j) {
                *slot = v;
            }
        }
        Some(())
    }
    let done = match out {
        SliceMut::I32(o) => go(col, j, r, o),
        SliceMut::U32(o) => go(col, j, r, o),
        SliceMut::I64(o) => go(col, j, r, o),
        SliceMut::U64(o) => go(col, j, r, o),
        SliceMut::F32(o) => go(col, j, r, o),
        SliceMut::F64(o) => go(col, j, r, o),
    };
    done.ok_or_else(|| internal("a run's output"))
}

fn internal(what: &str) -> kiln_core::Error {
    kiln_core::Error::invalid("user scan on the CPU", format!("{what}: disagrees with the checked kernel"))
}

/// One thread's machines: the map's and the combining expression's.
struct Work<'f> {
    fold: &'f Fold,
    map: Machine<'f>,
    comb: Combiner<'f>,
    col: Col,
}

impl<'f> Work<'f> {
    fn new(fold: &'f Fold, id: &Col) -> Self {
        Work { fold, map: Machine::new(&fold.map), comb: Combiner::new(fold), col: id.range(0, 0) }
    }

    /// The fold of the runs before each run, and the chunk's total.
    fn totals(&mut self, inputs: &Inputs<'_>, id: &Col, start: usize, len: usize, n: usize) -> Result<(Col, Col)> {
        let r = Runs::of(len);
        let exec = inputs.exec(start, len, n);
        self.map.run(&exec)?;
        let values = self.map.values(Fold::result(&self.fold.map), &exec)?;
        let mut acc = id.range(0, 0);
        column(values, 0, r, id, &mut acc)?;
        for j in 1..r.step {
            column(values, j, r, id, &mut self.col)?;
            self.comb.fold_into(&mut acc, self.col.slice()?)?;
        }
        let incl = self.inclusive(acc)?;
        let before = Col::concat(&[id.clone(), incl.range(0, r.runs - 1)])?;
        Ok((before, incl.range(r.runs - 1, r.runs)))
    }

    /// The inclusive scan of a column, in order: log2(len) column steps.
    fn inclusive(&mut self, mut v: Col) -> Result<Col> {
        let len = v.len();
        let mut o = 1;
        while o < len {
            let s = v.slice()?;
            let mut joined = Col::of(s.sub(0, o));
            joined.extend(self.comb.apply(s.sub(0, len - o), s.sub(o, len))?.slice()?)?;
            v = joined;
            o *= 2;
        }
        Ok(v)
    }

    /// The chunk's output, its runs scanned from `carry` and `before`.
    fn finish(
        &mut self,
        (inputs, kind, id): (&Inputs<'_>, ScanKind, &Col),
        (start, n): (usize, usize),
        carry: &Col,
        before: &Col,
        out: &mut SliceMut<'_>,
    ) -> Result<()> {
        let r = Runs::of(out.len());
        let carries = Col::concat(&vec![carry.clone(); r.runs])?;
        let mut acc = self.comb.apply(carries.slice()?, before.slice()?)?;
        let exec = inputs.exec(start, r.len, n);
        self.map.run(&exec)?;
        let values = self.map.values(Fold::result(&self.fold.map), &exec)?;
        for j in 0..r.step {
            column(values, j, r, id, &mut self.col)?;
            if kind == ScanKind::Exclusive {
                scatter(&acc, j, r, out)?;
            }
            self.comb.fold_into(&mut acc, self.col.slice()?)?;
            if kind == ScanKind::Inclusive {
                scatter(&acc, j, r, out)?;
            }
        }
        Ok(())
    }
}

/// Run a scan: the user's arguments, each raw input's length, the element
/// count, then the output (of the accumulator's dtype).
pub(crate) fn scan(fold: &Fold, kind: ScanKind, args: &mut HostArgs<'_>) -> Result<()> {
    let (inputs, n) = Inputs::of(fold, args)?;
    if n == 0 {
        return Ok(());
    }
    let id = identity(fold, &inputs)?;
    let out_index = args.len() - 1;
    let mut outs = SliceMut::output(args, out_index, fold.acc)?.chunks_of(SPAN);
    let block = rayon::current_num_threads() * PER_THREAD;
    let mut carry = id.clone();
    let mut comb = Combiner::new(fold);
    for (b, outs) in outs.chunks_mut(block).enumerate() {
        let first = b * block;
        let parts: Vec<(Col, Col)> = (0..outs.len())
            .into_par_iter()
            .map_init(
                || Work::new(fold, &id),
                |w, k| {
                    let start = (first + k) * SPAN;
                    w.totals(&inputs, &id, start, SPAN.min(n - start), n)
                },
            )
            .collect::<Result<_>>()?;
        let mut carries = Vec::with_capacity(parts.len());
        for (_, total) in &parts {
            carries.push(carry.clone());
            carry = comb.apply(carry.slice()?, total.slice()?)?;
        }
        outs.par_iter_mut().zip(parts.par_iter().zip(carries.par_iter())).enumerate().try_for_each_init(
            || Work::new(fold, &id),
            |w, (k, (out, ((before, _), carry)))| {
                w.finish((&inputs, kind, &id), ((first + k) * SPAN, n), carry, before, out)
            },
        )?;
    }
    Ok(())
}
