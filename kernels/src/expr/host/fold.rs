//! The CPU form of user reductions: the map runs on the column machine over
//! chunks (see `host_eval.rs`), and the combining expression runs on it too,
//! over two columns at once (a fold of the whole array or of long rows by
//! one standard operation from its neutral element folds natively instead:
//! `host_fold_op.rs`). A whole fold takes fixed ranges of chunks in
//! parallel: each range folds its chunks into lanes (lane `i` takes element
//! `i` of every chunk, in order), then its lanes in a tree of halves; the
//! ranges' results fold in a tree too. Rows and columns of a 2-D shape fold
//! a column of partial results per step.

use kiln_core::{HostArgs, Result};
use rayon::prelude::*;

use crate::expr::check::{Role, Typed};
use crate::expr::fold::Fold;
use crate::expr::host::eval::{Exec, Machine};
use crate::expr::host::inputs::{Inputs, internal, length, per_row, row_part};
use crate::expr::host::{CHUNK, Col, Slice, SliceMut, store};

/// Columns narrower than this fold along the rows one column at a time.
const NARROW: usize = 64;

/// Evaluate `body` over `[start, start + len)` of `n` and take its stored value.
pub(in crate::expr) fn eval(body: &Typed, inputs: &Inputs<'_>, start: usize, len: usize, n: usize) -> Result<Col> {
    let exec = inputs.exec(start, len, n);
    let mut machine = Machine::new(body);
    machine.run(&exec)?;
    machine.take(Fold::result(body), &exec)
}

/// The combining expression, run elementwise over two columns at once.
pub(in crate::expr) struct Combiner<'f> {
    machine: Machine<'f>,
    result: u32,
    /// The last result, kept for its allocation.
    spare: Option<Col>,
}

impl<'f> Combiner<'f> {
    pub(in crate::expr) fn new(fold: &'f Fold) -> Self {
        Combiner { machine: Machine::new(&fold.combine), result: Fold::result(&fold.combine), spare: None }
    }

    /// `combine(a[i], b[i])` for every `i` (the two of one length).
    pub(in crate::expr) fn apply(&mut self, a: Slice<'_>, b: Slice<'_>) -> Result<Col> {
        let inputs = [Some(a), Some(b), None];
        let exec = Exec { start: 0, len: a.len(), n: a.len(), inputs: &inputs, scalars: &[None; 3], local: &[] };
        self.machine.run(&exec)?;
        let values = self.machine.values(self.result, &exec)?;
        let mut out = self.spare.take().unwrap_or_else(|| Col::of(values.sub(0, 0)));
        out.truncate(0);
        out.extend(values)?;
        Ok(out)
    }

    /// `acc[i] = combine(acc[i], b[i])` for `i` below `b`'s length.
    pub(in crate::expr) fn fold_into(&mut self, acc: &mut Col, b: Slice<'_>) -> Result<()> {
        {
            let inputs = [Some(acc.slice()?.sub(0, b.len())), Some(b), None];
            let exec = Exec { start: 0, len: b.len(), n: b.len(), inputs: &inputs, scalars: &[None; 3], local: &[] };
            self.machine.run(&exec)?;
            if !self.machine.owns(self.result) {
                // The result is an operand itself: copied out before `acc` is written.
                let r = Col::of(self.machine.values(self.result, &exec)?);
                return acc.overwrite(r.slice()?);
            }
            self.machine.settle(self.result, &exec)?;
        }
        if b.len() == acc.len() {
            // The whole accumulator: the result's column becomes it, and
            // its old column the machine's for the next run.
            return self.machine.swap_column(self.result, acc);
        }
        acc.overwrite(self.machine.column(self.result).slice()?)
    }

    /// The fold of a non-empty column, in a tree of halves: one element.
    pub(in crate::expr) fn tree(&mut self, mut col: Col) -> Result<Col> {
        while col.len() > 1 {
            let len = col.len();
            let h = len / 2;
            let s = col.slice()?;
            let mut next = self.apply(s.sub(0, h), s.sub(h, 2 * h))?;
            if len % 2 == 1 {
                next.extend(s.sub(2 * h, len))?;
            }
            self.spare = Some(std::mem::replace(&mut col, next));
        }
        Ok(col)
    }

    /// Fold `parts` (each of one length) elementwise, in order.
    fn in_order(&mut self, parts: Vec<Col>) -> Result<Col> {
        let mut it = parts.into_iter();
        let mut acc = it.next().ok_or_else(|| internal("no partial results"))?;
        for p in it {
            self.fold_into(&mut acc, p.slice()?)?;
        }
        Ok(acc)
    }
}

/// The map of `[start, end)` of `n` folded chunk by chunk into lanes (lane
/// `i` takes element `i` of every chunk, in order), then the lanes in a
/// tree: one element.
fn fold_range(
    (map, comb): &mut (Machine<'_>, Combiner<'_>),
    fold: &Fold,
    inputs: &Inputs<'_>,
    (start, end, n): (usize, usize, usize),
) -> Result<Col> {
    let result = Fold::result(&fold.map);
    let mut acc: Option<Col> = None;
    let mut at = start;
    while at < end {
        let len = CHUNK.min(end - at);
        let exec = inputs.exec(at, len, n);
        map.run(&exec)?;
        let values = map.values(result, &exec)?;
        match &mut acc {
            None => acc = Some(Col::of(values)),
            Some(acc) => comb.fold_into(acc, values)?,
        }
        at += len;
    }
    comb.tree(acc.ok_or_else(|| internal("an empty range"))?)
}

/// How a reduction folds: everything, or along an axis of `rows x cols`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Shape {
    Whole,
    Rows,
    Cols,
}

/// Run a reduction: the user's arguments, each raw input's length, the
/// element count, for `Rows` and `Cols` the rows and columns, then the output.
pub(crate) fn reduce(fold: &Fold, shape: Shape, args: &mut HostArgs<'_>) -> Result<()> {
    let (mut inputs, n) = Inputs::of(fold, args)?;
    let p = fold.roles.len();
    let raws = fold.roles.iter().filter(|r| **r == Role::Raw).count();
    let (rows, cols) = match shape {
        Shape::Whole => (1, n),
        _ => (length(args, p + raws + 1)?, length(args, p + raws + 2)?),
    };
    let out_index = args.len() - 1;
    let (results, count) = match shape {
        Shape::Whole => (whole(fold, &inputs, n)?, n),
        Shape::Rows => (along_rows(fold, &inputs, n, rows, cols)?, cols),
        Shape::Cols => (along_cols(fold, &inputs, n, rows, cols)?, rows),
    };
    let results = post(fold, &mut inputs, results, count)?;
    let mut out = SliceMut::output(args, out_index, fold.out)?;
    store(&results, &mut out, false)
}

pub(in crate::expr) fn identity(fold: &Fold, inputs: &Inputs<'_>) -> Result<Col> {
    eval(&fold.identity, inputs, 0, 1, 1)
}

/// The post-map (if any) of each accumulated value, `count` elements each.
fn post(fold: &Fold, inputs: &mut Inputs<'_>, acc: Col, count: usize) -> Result<Col> {
    let Some(body) = &fold.post else { return Ok(acc) };
    let a = fold.roles.len();
    let len = acc.len();
    let slice = acc.slice()?;
    let mut slices = inputs.slices.clone();
    for (k, s) in slices.iter_mut().enumerate() {
        if k != a {
            *s = None;
        }
    }
    slices[a] = Some(slice);
    let local = Inputs { slices, scalars: inputs.scalars.clone() };
    eval(body, &local, 0, len, count)
}

fn whole(fold: &Fold, inputs: &Inputs<'_>, n: usize) -> Result<Col> {
    let id = identity(fold, inputs)?;
    if n == 0 {
        return Ok(id);
    }
    if let Some(total) = crate::expr::host::fold_op::whole(fold, inputs, &id, n)? {
        return Ok(total);
    }
    // Fixed ranges (not one per thread), so the result is the same on every
    // run: the parts of one row of `n`.
    let parts: Vec<Col> = (0..per_row(n))
        .into_par_iter()
        .map_init(
            || (Machine::new(&fold.map), Combiner::new(fold)),
            |m, t| {
                let (start, end) = row_part(t, n);
                fold_range(m, fold, inputs, (start, end, n))
            },
        )
        .collect::<Result<_>>()?;
    Combiner::new(fold).tree(Col::concat(&parts)?)
}

fn along_rows(fold: &Fold, inputs: &Inputs<'_>, n: usize, rows: usize, cols: usize) -> Result<Col> {
    if cols == 0 {
        let id = identity(fold, inputs)?;
        return Ok(id.repeat(rows));
    }
    if cols >= CHUNK {
        let id = identity(fold, inputs)?;
        if let Some(each) = crate::expr::host::fold_op::rows(fold, inputs, &id, n, (rows, cols))? {
            return Ok(each);
        }
        let parts: Vec<Col> = (0..rows * per_row(cols))
            .into_par_iter()
            .map_init(
                || (Machine::new(&fold.map), Combiner::new(fold)),
                |m, t| {
                    let (start, end) = row_part(t, cols);
                    fold_range(m, fold, inputs, (start, end, n))
                },
            )
            .collect::<Result<_>>()?;
        let mut comb = Combiner::new(fold);
        let each = parts.chunks(per_row(cols)).map(|row| comb.tree(Col::concat(row)?)).collect::<Result<Vec<_>>>()?;
        return Col::concat(&each);
    }
    // Groups of whole rows; column j of every row in one step.
    let parts = by_row_groups(fold, inputs, (n, rows, cols), |comb, mapped, count| {
        comb.in_order((0..cols).map(|j| mapped.strided(j, cols, count)).collect())
    })?;
    Col::concat(&parts)
}

/// Groups of whole rows of `rows x cols`, as many as fill a chunk, in
/// parallel: each group's map (`count` rows of `cols`) given to `f`.
fn by_row_groups(
    fold: &Fold,
    inputs: &Inputs<'_>,
    (n, rows, cols): (usize, usize, usize),
    f: impl Fn(&mut Combiner<'_>, Col, usize) -> Result<Col> + Sync,
) -> Result<Vec<Col>> {
    let group = (CHUNK / cols.max(1)).max(1);
    (0..rows.div_ceil(group))
        .into_par_iter()
        .map_init(
            || (Machine::new(&fold.map), Combiner::new(fold)),
            |(map, comb), g| {
                let r0 = g * group;
                let count = group.min(rows - r0);
                let exec = inputs.exec(r0 * cols, count * cols, n);
                map.run(&exec)?;
                let mapped = map.take(Fold::result(&fold.map), &exec)?;
                f(comb, mapped, count)
            },
        )
        .collect()
}

fn along_cols(fold: &Fold, inputs: &Inputs<'_>, n: usize, rows: usize, cols: usize) -> Result<Col> {
    if rows == 0 {
        let id = identity(fold, inputs)?;
        return Ok(id.repeat(cols));
    }
    let parts = by_row_groups(fold, inputs, (n, rows, cols), |comb, mapped, count| {
        if cols >= NARROW {
            comb.in_order((0..count).map(|r| mapped.range(r * cols, (r + 1) * cols)).collect())
        } else {
            let each = (0..cols).map(|c| comb.tree(mapped.strided(c, cols, count))).collect::<Result<Vec<_>>>()?;
            Col::concat(&each)
        }
    })?;
    Combiner::new(fold).in_order(parts)
}
