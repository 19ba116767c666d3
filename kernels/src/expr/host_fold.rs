//! The CPU form of user reductions: the map runs as a column program over
//! chunks (see `host.rs`), and the combining expression runs as one too,
//! over two columns at once: a chunk folds in a tree of halves, rows and
//! columns of a 2-D shape fold a column of partial results per step.

use kiln_core::{Error, HostArgs, Result};
use rayon::prelude::*;

use super::check::{Role, Typed};
use super::fold::Fold;
use super::host::{by_dtype, run, scalar_bits, store, Col, Exec, Slice, SliceMut, CHUNK};
use super::value::Value;

/// Columns narrower than this fold along the rows one column at a time.
const NARROW: usize = 64;

/// One arm per column type, each giving a column of the same type.
macro_rules! each_col {
    ($c:expr, $v:ident => $e:expr) => {
        match $c {
            Col::I32($v) => Col::I32($e),
            Col::U32($v) => Col::U32($e),
            Col::I64($v) => Col::I64($e),
            Col::U64($v) => Col::U64($e),
            Col::F32($v) => Col::F32($e),
            Col::F64($v) => Col::F64($e),
            Col::B($v) => Col::B($e),
        }
    };
}

impl Col {
    pub(super) fn len(&self) -> usize {
        match self {
            Col::I32(v) => v.len(),
            Col::U32(v) => v.len(),
            Col::I64(v) => v.len(),
            Col::U64(v) => v.len(),
            Col::F32(v) => v.len(),
            Col::F64(v) => v.len(),
            Col::B(v) => v.len(),
        }
    }

    /// Elements `[start, end)` as a column of their own.
    pub(super) fn range(&self, start: usize, end: usize) -> Col {
        each_col!(self, v => v[start..end].to_vec())
    }

    /// Every `stride`-th element from `start`, `count` of them.
    fn strided(&self, start: usize, stride: usize, count: usize) -> Col {
        each_col!(self, v => v.iter().skip(start).step_by(stride).take(count).copied().collect())
    }

    /// The elements at `idx`, in that order.
    pub(super) fn gather(&self, idx: &[usize]) -> Col {
        each_col!(self, v => idx.iter().map(|&i| v[i]).collect())
    }

    /// The elements, as an argument slice (never for booleans).
    fn slice(&self) -> Result<Slice<'_>> {
        Ok(match self {
            Col::I32(v) => Slice::I32(v),
            Col::U32(v) => Slice::U32(v),
            Col::I64(v) => Slice::I64(v),
            Col::U64(v) => Slice::U64(v),
            Col::F32(v) => Slice::F32(v),
            Col::F64(v) => Slice::F64(v),
            Col::B(_) => return Err(internal("a boolean accumulator")),
        })
    }

    /// `self` followed by the elements of `other`, of the same type.
    pub(super) fn concat(cols: &[Col]) -> Result<Col> {
        let first = cols.first().ok_or_else(|| internal("no partial results"))?;
        let mut out = first.range(0, 0);
        for c in cols {
            match (&mut out, c) {
                (Col::I32(o), Col::I32(v)) => o.extend_from_slice(v),
                (Col::U32(o), Col::U32(v)) => o.extend_from_slice(v),
                (Col::I64(o), Col::I64(v)) => o.extend_from_slice(v),
                (Col::U64(o), Col::U64(v)) => o.extend_from_slice(v),
                (Col::F32(o), Col::F32(v)) => o.extend_from_slice(v),
                (Col::F64(o), Col::F64(v)) => o.extend_from_slice(v),
                _ => return Err(internal("partial results")),
            }
        }
        Ok(out)
    }
}

fn internal(what: &str) -> Error {
    Error::invalid("user reduction on the CPU", format!("{what}: disagrees with the checked kernel"))
}

/// The launch's inputs and scalars, by argument.
pub(super) struct Inputs<'a> {
    slices: Vec<Option<Slice<'a>>>,
    scalars: Vec<Option<Value>>,
}

impl<'a> Inputs<'a> {
    /// The user's arguments of a launch (inputs and scalars), and the
    /// element count after them and each raw input's length.
    pub(super) fn of(fold: &Fold, args: &HostArgs<'a>) -> Result<(Inputs<'a>, usize)> {
        let p = fold.roles.len();
        let mut inputs = Inputs { slices: vec![None; p + 2], scalars: vec![None; p + 2] };
        for (k, role) in fold.roles.iter().enumerate() {
            let d = fold.map.dtypes[k];
            match role {
                Role::Scalar => {
                    let bits = by_dtype!(d, T => scalar_bits::<T>(args, k)?);
                    inputs.scalars[k] = Some(Value::from_bits(d, bits));
                }
                _ => inputs.slices[k] = Some(Slice::input(args, k, d)?),
            }
        }
        let raws = fold.roles.iter().filter(|r| **r == Role::Raw).count();
        Ok((inputs, length(args, p + raws)?))
    }
}

/// Evaluate `body` over `[start, start + len)` of `n` and take its stored value.
pub(super) fn eval(body: &Typed, inputs: &Inputs<'_>, start: usize, len: usize, n: usize) -> Result<Col> {
    let mut cols: Vec<Col> = body.nodes.iter().map(|n| Col::new(n.ty)).collect();
    let exec = Exec { start, len, n, inputs: &inputs.slices, scalars: &inputs.scalars };
    run(&exec, body, &mut cols, &[])?;
    let r = Fold::result(body) as usize;
    Ok(std::mem::replace(&mut cols[r], Col::B(Vec::new())))
}

/// The combining expression over `a[i]` and `b[i]`, elementwise.
pub(super) fn combine(fold: &Fold, a: &Col, b: &Col) -> Result<Col> {
    let inputs = Inputs { slices: vec![Some(a.slice()?), Some(b.slice()?), None], scalars: vec![None; 3] };
    eval(&fold.combine, &inputs, 0, a.len(), a.len())
}

/// The fold of a non-empty column, in a tree of halves: one element.
fn fold_col(fold: &Fold, mut col: Col) -> Result<Col> {
    while col.len() > 1 {
        let h = col.len() / 2;
        let mut next = combine(fold, &col.range(0, h), &col.range(h, 2 * h))?;
        if col.len() % 2 == 1 {
            next = Col::concat(&[next, col.range(2 * h, 2 * h + 1)])?;
        }
        col = next;
    }
    Ok(col)
}

/// Fold `parts` (each of one length) elementwise, in order.
fn fold_in_order(fold: &Fold, parts: Vec<Col>) -> Result<Col> {
    let mut it = parts.into_iter();
    let mut acc = it.next().ok_or_else(|| internal("no partial results"))?;
    for p in it {
        acc = combine(fold, &acc, &p)?;
    }
    Ok(acc)
}

/// A length argument at `index` (u64 or u32, the device's index width).
fn length(args: &HostArgs<'_>, index: usize) -> Result<usize> {
    match args.scalar::<u64>(index) {
        Ok(v) => Ok(v as usize),
        Err(_) => Ok(args.scalar::<u32>(index)? as usize),
    }
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
    store(&results, &mut out)
}

pub(super) fn identity(fold: &Fold, inputs: &Inputs<'_>) -> Result<Col> {
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
    if n == 0 {
        return identity(fold, inputs);
    }
    let parts: Vec<Col> = (0..n.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| {
            let start = c * CHUNK;
            fold_col(fold, eval(&fold.map, inputs, start, CHUNK.min(n - start), n)?)
        })
        .collect::<Result<_>>()?;
    fold_col(fold, Col::concat(&parts)?)
}

fn along_rows(fold: &Fold, inputs: &Inputs<'_>, n: usize, rows: usize, cols: usize) -> Result<Col> {
    if cols == 0 {
        let id = identity(fold, inputs)?;
        return Col::concat(&vec![id; rows.max(1)]).map(|c| c.range(0, rows));
    }
    let parts: Vec<Col> = if cols >= CHUNK {
        (0..rows)
            .into_par_iter()
            .map(|r| {
                let pieces = (0..cols.div_ceil(CHUNK))
                    .map(|k| {
                        let start = k * CHUNK;
                        fold_col(fold, eval(&fold.map, inputs, r * cols + start, CHUNK.min(cols - start), n)?)
                    })
                    .collect::<Result<Vec<_>>>()?;
                fold_col(fold, Col::concat(&pieces)?)
            })
            .collect::<Result<_>>()?
    } else {
        // Groups of whole rows; column j of every row in one step.
        let group = (CHUNK / cols).max(1);
        (0..rows.div_ceil(group))
            .into_par_iter()
            .map(|g| {
                let r0 = g * group;
                let count = group.min(rows - r0);
                let mapped = eval(&fold.map, inputs, r0 * cols, count * cols, n)?;
                let columns = (0..cols).map(|j| mapped.strided(j, cols, count)).collect();
                fold_in_order(fold, columns)
            })
            .collect::<Result<_>>()?
    };
    Col::concat(&parts)
}

fn along_cols(fold: &Fold, inputs: &Inputs<'_>, n: usize, rows: usize, cols: usize) -> Result<Col> {
    if rows == 0 {
        let id = identity(fold, inputs)?;
        return Col::concat(&vec![id; cols.max(1)]).map(|c| c.range(0, cols));
    }
    let group = (CHUNK / cols.max(1)).max(1);
    let parts: Vec<Col> = (0..rows.div_ceil(group))
        .into_par_iter()
        .map(|g| {
            let r0 = g * group;
            let count = group.min(rows - r0);
            let mapped = eval(&fold.map, inputs, r0 * cols, count * cols, n)?;
            if cols >= NARROW {
                fold_in_order(fold, (0..count).map(|r| mapped.range(r * cols, (r + 1) * cols)).collect())
            } else {
                let each =
                    (0..cols).map(|c| fold_col(fold, mapped.strided(c, cols, count))).collect::<Result<Vec<_>>>()?;
                Col::concat(&each)
            }
        })
        .collect::<Result<_>>()?;
    fold_in_order(fold, parts)
}
