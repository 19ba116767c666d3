//! The CPU form of user scans whose combining expression is not one
//! standard operation from its neutral element (those run natively, see
//! `host_scan_op.rs`), in two passes over chunks of [`SPAN`] elements. A
//! chunk is cut into up to [`LANES`] consecutive runs, scanned side by
//! side, so the map and the combining expression run as column programs
//! over one element of every run at once.
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

use crate::expr::fold::Fold;
use crate::expr::host::eval::Machine;
use crate::expr::host::fold::{Combiner, identity};
use crate::expr::host::inputs::{Inputs, scan_internal};
use crate::expr::host::{Col, Elem, Slice, SliceMut};
use crate::scan::ScanKind;

/// Elements per chunk.
const SPAN: usize = LANES * 32;
/// Runs scanned side by side in a chunk, at most: not a power of two, so
/// the rows of a transposed chunk do not all fall in one cache set.
const LANES: usize = 1000;
/// Chunks each thread takes in a block.
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

/// `dst[c * rows + r] = src[r * cols + c]` (through the `transpose` crate's
/// cache-blocked transpose), `pad` past the end of `src`.
fn transpose<T: Elem>(src: &[T], (rows, cols): (usize, usize), pad: T, spare: &mut Vec<T>, dst: &mut Vec<T>) {
    let len = rows * cols;
    dst.clear();
    dst.resize(len, pad);
    let src = match src.get(..len) {
        Some(whole) => whole,
        None => {
            spare.clear();
            spare.extend_from_slice(src);
            spare.resize(len, pad);
            spare
        }
    };
    transpose::transpose(src, dst, cols, rows);
}

/// `values` as `runs` rows of `step` transposed into `out`: row `j` of
/// `out` holds element `j` of every run (the identity `pad` past the end).
fn by_step(values: Slice<'_>, r: Runs, pad: &Col, spare: &mut Col, out: &mut Col) -> Result<()> {
    fn go<T: Elem>(v: &[T], r: Runs, pad: &Col, spare: &mut Col, out: &mut Col) -> Option<()> {
        let pad = T::col(pad)?.first().copied()?;
        transpose(v, (r.runs, r.step), pad, T::col_mut(spare)?, T::col_mut(out)?);
        Some(())
    }
    let done = match values {
        Slice::I32(v) => go(v, r, pad, spare, out),
        Slice::U32(v) => go(v, r, pad, spare, out),
        Slice::I64(v) => go(v, r, pad, spare, out),
        Slice::U64(v) => go(v, r, pad, spare, out),
        Slice::F32(v) => go(v, r, pad, spare, out),
        Slice::F64(v) => go(v, r, pad, spare, out),
        // Accumulators are never 16-bit (`fold_check.rs`).
        Slice::Half(..) => None,
    };
    done.ok_or_else(|| scan_internal("a chunk's runs"))
}

/// The inverse of [`by_step`]: `rows` (`step` rows of `runs`) back in the
/// element order, into the chunk's output.
fn by_run(rows: &Col, r: Runs, spare: &mut Col, scratch: &mut Col, out: &mut SliceMut<'_>) -> Result<()> {
    fn go<T: Elem>(rows: &Col, r: Runs, spare: &mut Col, scratch: &mut Col) -> Option<()> {
        let v = T::col(rows)?;
        transpose(v, (r.step, r.runs), *v.first()?, T::col_mut(spare)?, T::col_mut(scratch)?);
        Some(())
    }
    let done = match rows {
        Col::I32(_) => go::<i32>(rows, r, spare, scratch),
        Col::U32(_) => go::<u32>(rows, r, spare, scratch),
        Col::I64(_) => go::<i64>(rows, r, spare, scratch),
        Col::U64(_) => go::<u64>(rows, r, spare, scratch),
        Col::F32(_) => go::<f32>(rows, r, spare, scratch),
        Col::F64(_) => go::<f64>(rows, r, spare, scratch),
        Col::B(_) => None,
    };
    done.ok_or_else(|| scan_internal("a chunk's output"))?;
    crate::expr::host::copy_into(scratch.slice()?.sub(0, r.len), out)
}

/// One thread's machines: the map's and the combining expression's.
struct Work<'f> {
    fold: &'f Fold,
    map: Machine<'f>,
    comb: Combiner<'f>,
    /// The chunk's runs by step, the output by step, a transpose's
    /// output and a padded input.
    steps: Col,
    rows: Col,
    scratch: Col,
    spare: Col,
}

impl<'f> Work<'f> {
    fn new(fold: &'f Fold, id: &Col) -> Self {
        Work {
            fold,
            map: Machine::new(&fold.map),
            comb: Combiner::new(fold),
            steps: id.range(0, 0),
            rows: id.range(0, 0),
            scratch: id.range(0, 0),
            spare: id.range(0, 0),
        }
    }

    /// The fold of the runs before each run, and the chunk's total.
    fn totals(&mut self, inputs: &Inputs<'_>, id: &Col, start: usize, len: usize, n: usize) -> Result<(Col, Col)> {
        let r = Runs::of(len);
        let exec = inputs.exec(start, len, n);
        self.map.run(&exec)?;
        let values = self.map.values(Fold::result(&self.fold.map), &exec)?;
        by_step(values, r, id, &mut self.spare, &mut self.steps)?;
        let steps = self.steps.slice()?;
        let mut acc = Col::of(steps.sub(0, r.runs));
        for j in 1..r.step {
            self.comb.fold_into(&mut acc, steps.sub(j * r.runs, (j + 1) * r.runs))?;
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
        let carries = carry.repeat(r.runs);
        let mut acc = self.comb.apply(carries.slice()?, before.slice()?)?;
        let exec = inputs.exec(start, r.len, n);
        self.map.run(&exec)?;
        let values = self.map.values(Fold::result(&self.fold.map), &exec)?;
        by_step(values, r, id, &mut self.spare, &mut self.steps)?;
        let steps = self.steps.slice()?;
        self.rows.truncate(0);
        for j in 0..r.step {
            if kind == ScanKind::Exclusive {
                self.rows.extend(acc.slice()?)?;
            }
            self.comb.fold_into(&mut acc, steps.sub(j * r.runs, (j + 1) * r.runs))?;
            if kind == ScanKind::Inclusive {
                self.rows.extend(acc.slice()?)?;
            }
        }
        by_run(&self.rows, r, &mut self.spare, &mut self.scratch, out)
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
    let mut out = SliceMut::output(args, out_index, fold.acc)?;
    if crate::expr::host::scan_op::scan(fold, kind, &inputs, &id, n, &mut out)? {
        return Ok(());
    }
    let mut outs = out.chunks_of(SPAN);
    // One worker per thread, each taking a run of chunks of every block.
    let threads = rayon::current_num_threads().max(1);
    let mut works: Vec<Work<'_>> = (0..threads).map(|_| Work::new(fold, &id)).collect();
    let block = threads * PER_THREAD;
    let mut carry = id.clone();
    let mut comb = Combiner::new(fold);
    for (b, outs) in outs.chunks_mut(block).enumerate() {
        let first = b * block;
        let parts: Vec<Vec<(Col, Col)>> = works
            .par_iter_mut()
            .enumerate()
            .map(|(t, w)| {
                (t * PER_THREAD..((t + 1) * PER_THREAD).min(outs.len()))
                    .map(|k| {
                        let start = (first + k) * SPAN;
                        w.totals(&inputs, &id, start, SPAN.min(n - start), n)
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<_>>()?;
        let parts: Vec<(Col, Col)> = parts.into_iter().flatten().collect();
        let mut carries = Vec::with_capacity(parts.len());
        for (_, total) in &parts {
            carries.push(carry.clone());
            carry = comb.apply(carry.slice()?, total.slice()?)?;
        }
        let mut outs: Vec<&mut SliceMut<'_>> = outs.iter_mut().collect();
        let mut pieces = Vec::with_capacity(threads);
        for t in (0..threads).rev() {
            pieces.push(outs.split_off((t * PER_THREAD).min(outs.len())));
        }
        pieces.reverse();
        works.par_iter_mut().zip(pieces).enumerate().try_for_each(|(t, (w, piece))| {
            piece.into_iter().enumerate().try_for_each(|(i, out)| {
                let k = t * PER_THREAD + i;
                w.finish((&inputs, kind, &id), ((first + k) * SPAN, n), &carries[k], &parts[k].0, out)
            })
        })?;
    }
    Ok(())
}
