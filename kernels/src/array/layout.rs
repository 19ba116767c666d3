//! Shapes, strides and offsets: how an n-d array's elements sit in a flat
//! buffer, and the views that change only that (slices, axes, broadcasts).

use kiln_core::{Error, Result};
use ndarray::SliceInfoElem;

/// Where an array's elements are: element `(i0, i1, ...)` is at
/// `offset + i0 * strides[0] + i1 * strides[1] + ...` of its buffer.
/// Strides are in elements and may be negative (reversed views) or zero
/// (broadcast dimensions).
///
/// Every layout's arithmetic fits `isize`, as NumPy requires: its shape's
/// extents other than 0 multiply to at most `isize::MAX`, and each method
/// computes strides and offsets with checked arithmetic, answering `Err`
/// (naming the operation, the layout and what overflowed) rather than
/// wrapping or panicking.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    shape: Vec<usize>,
    strides: Vec<isize>,
    offset: usize,
}

/// Row-major strides of `shape`, or `None` where its extents other than 0
/// multiply past `isize::MAX` (the leading extent included, so that every
/// element's index fits too).
fn standard_strides(shape: &[usize]) -> Option<Vec<isize>> {
    let mut strides = vec![0isize; shape.len()];
    let mut step = 1isize;
    for (s, &n) in strides.iter_mut().zip(shape).rev() {
        *s = step;
        step = step.checked_mul(isize::try_from(n.max(1)).ok()?)?;
    }
    Some(strides)
}

fn fail(what: impl Into<String>, why: impl Into<String>) -> Error {
    Error::invalid(what, why)
}

/// The number of elements of `shape`, or `Err` naming `what` where its
/// extents other than 0 multiply past `isize::MAX` (NumPy's limit: strides
/// and offsets are `isize`): every shape an array holds passes here first,
/// so products of its extents, and its row-major strides, fit afterwards.
pub(crate) fn checked_len(shape: &[usize], what: &str) -> Result<usize> {
    if standard_strides(shape).is_none() {
        return Err(too_big(shape, what));
    }
    Ok(shape.iter().product())
}

fn too_big(shape: &[usize], what: &str) -> Error {
    let why =
        format!("the extents of shape {shape:?} multiply past isize::MAX ({}), the most a stride steps", isize::MAX);
    fail(what, why)
}

/// `x` as an `isize`, or `Err` naming `what` where it does not fit.
fn signed(x: usize, what: &dyn Fn() -> String) -> Result<isize> {
    isize::try_from(x).map_err(|_| fail(what(), format!("{x} is past isize::MAX")))
}

/// `index` (negative counts from the end) within an axis of `len`, or `None`.
fn absolute(index: isize, len: usize) -> Option<usize> {
    if index < 0 { len.checked_sub(index.unsigned_abs()) } else { Some(index as usize).filter(|&i| i <= len) }
}

impl Layout {
    /// The row-major layout of `shape` from element 0; `Err` where the
    /// extents other than 0 multiply past `isize::MAX`.
    ///
    /// # Examples
    /// ```
    /// use kiln_kernels::array::Layout;
    /// assert_eq!(Layout::standard(&[2, 3, 4])?.strides(), [12, 4, 1]);
    /// assert!(Layout::standard(&[1 << 40, 1 << 40]).is_err());
    /// # Ok::<(), kiln_core::Error>(())
    /// ```
    pub fn standard(shape: &[usize]) -> Result<Self> {
        let strides = standard_strides(shape).ok_or_else(|| too_big(shape, "the row-major layout"))?;
        Ok(Layout { shape: shape.to_vec(), strides, offset: 0 })
    }

    /// This layout of complex elements seen as their parts: twice the
    /// offset and strides, and a last axis of the two parts; `Err` where
    /// that overflows `isize`.
    pub(crate) fn parts(&self) -> Result<Self> {
        let what = || format!("the parts of the layout {self:?}");
        let twice = |v: isize| v.checked_mul(2).ok_or_else(|| fail(what(), format!("{v} x 2 overflows isize")));
        let mut strides = self.strides.iter().map(|&s| twice(s)).collect::<Result<Vec<_>>>()?;
        strides.push(1);
        let mut shape = self.shape.clone();
        shape.push(2);
        let offset = self.offset.checked_mul(2).ok_or_else(|| fail(what(), "the offset overflows"))?;
        Ok(Layout { shape, strides, offset })
    }

    /// The extent of each dimension.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The step between neighbours along each dimension, in elements.
    pub fn strides(&self) -> &[isize] {
        &self.strides
    }

    /// The buffer index of the first element.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements (at most `isize::MAX`: every shape is
    /// checked when its layout is made).
    pub fn len(&self) -> usize {
        self.shape.iter().fold(1usize, |n, &e| n.saturating_mul(e))
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the elements are in row-major order, one after another
    /// (dimensions of extent 1 may have any stride).
    pub fn is_standard(&self) -> bool {
        standard_strides(&self.shape)
            .is_some_and(|want| self.shape.iter().zip(&self.strides).zip(&want).all(|((&n, &s), &w)| n <= 1 || s == w))
    }

    /// The lowest and one past the highest buffer index the elements use
    /// (`offset..offset` when there are none); `Err` where an index
    /// overflows `isize` or falls below 0 (a layout made by these methods
    /// never does).
    pub fn span(&self) -> Result<(usize, usize)> {
        if self.is_empty() {
            return Ok((self.offset, self.offset));
        }
        let what = || format!("the span of the layout {self:?}");
        let overflow = |part: String| fail(what(), format!("{part} overflows isize"));
        let (mut lo, mut hi) = (signed(self.offset, &what)?, signed(self.offset, &what)?);
        for (d, (&n, &s)) in self.shape.iter().zip(&self.strides).enumerate() {
            let reach = signed(n - 1, &what)?
                .checked_mul(s)
                .ok_or_else(|| overflow(format!("axis {d}'s reach {} x stride {s}", n - 1)))?;
            let end = if reach < 0 { &mut lo } else { &mut hi };
            *end = end.checked_add(reach).ok_or_else(|| overflow(format!("the index reached along axis {d}")))?;
        }
        let lo = usize::try_from(lo).map_err(|_| fail(what(), format!("its lowest index is {lo}, below 0")))?;
        // hi >= 0 here and below isize::MAX, so one past it fits usize.
        Ok((lo, hi.unsigned_abs() + 1))
    }

    /// Dimensions merged where one steps over the next exactly (and
    /// extent-1 dimensions dropped): the same elements in the same order,
    /// with as few dimensions as possible (at least one).
    pub fn collapsed(&self) -> Layout {
        let mut shape: Vec<usize> = Vec::new();
        let mut strides: Vec<isize> = Vec::new();
        for (&n, &s) in self.shape.iter().zip(&self.strides) {
            if n == 1 {
                continue;
            }
            // Checked: a product that overflows merges nothing.
            let over = isize::try_from(n).ok().and_then(|n| s.checked_mul(n));
            match (shape.last_mut(), strides.last_mut()) {
                (Some(pn), Some(ps)) if Some(*ps) == over && pn.checked_mul(n).is_some() => {
                    *pn *= n;
                    *ps = s;
                }
                _ => {
                    shape.push(n);
                    strides.push(s);
                }
            }
        }
        if shape.is_empty() || self.is_empty() {
            return Layout { shape: vec![self.len()], strides: vec![1], offset: self.offset };
        }
        Layout { shape, strides, offset: self.offset }
    }

    fn axis(&self, axis: usize, what: &str) -> Result<()> {
        if axis >= self.ndim() {
            return Err(fail(what, format!("axis {axis} is out of range for an array of {} dimensions", self.ndim())));
        }
        Ok(())
    }

    /// The view `info` selects, with ndarray's `s![]` rules: a range with a
    /// step (negative steps walk the range backwards), an index (the axis
    /// goes), or a new axis of extent 1; negative bounds count from the end.
    /// Axes past the last given are kept whole.
    pub fn slice(&self, info: &[SliceInfoElem]) -> Result<Layout> {
        let what = |axis: usize| format!("slice of an array of shape {:?}, axis {axis}", self.shape);
        let taken = info.iter().filter(|e| !matches!(e, SliceInfoElem::NewAxis)).count();
        if taken > self.ndim() {
            return Err(fail(
                format!("slice of an array of shape {:?}", self.shape),
                format!("{taken} axes are sliced and the array has {}", self.ndim()),
            ));
        }
        let mut out = Layout { shape: Vec::new(), strides: Vec::new(), offset: self.offset };
        let mut axis = 0;
        let whole = || format!("slice of an array of shape {:?}", self.shape);
        let mut offset = signed(self.offset, &whole)?;
        // `offset + at * s`, checked.
        let moved = |offset: isize, at: usize, s: isize, axis: usize| {
            signed(at, &|| what(axis))?
                .checked_mul(s)
                .and_then(|step| offset.checked_add(step))
                .ok_or_else(|| fail(what(axis), format!("offset {offset} + {at} x stride {s} overflows isize")))
        };
        for e in info {
            match *e {
                SliceInfoElem::NewAxis => {
                    out.shape.push(1);
                    out.strides.push(0);
                }
                SliceInfoElem::Index(i) => {
                    let (n, s) = (self.shape[axis], self.strides[axis]);
                    let at = absolute(i, n)
                        .filter(|&a| a < n)
                        .ok_or_else(|| fail(what(axis), format!("index {i} is out of range for extent {n}")))?;
                    offset = moved(offset, at, s, axis)?;
                    axis += 1;
                }
                SliceInfoElem::Slice { start, end, step } => {
                    let (n, s) = (self.shape[axis], self.strides[axis]);
                    if step == 0 {
                        return Err(fail(what(axis), "the step is 0"));
                    }
                    let range = |b: isize| {
                        absolute(b, n)
                            .ok_or_else(|| fail(what(axis), format!("bound {b} is out of range for extent {n}")))
                    };
                    let lo = range(start)?;
                    let hi = match end {
                        Some(b) => range(b)?,
                        None => n,
                    }
                    .max(lo);
                    let len = (hi - lo).div_ceil(step.unsigned_abs());
                    if len > 0 {
                        offset = moved(offset, if step < 0 { hi - 1 } else { lo }, s, axis)?;
                    }
                    // As ndarray: an axis of one element or none steps nowhere, so
                    // a step past the axis (`s![..;isize::MAX]`) is no overflow.
                    let stride = if len <= 1 {
                        0
                    } else {
                        s.checked_mul(step)
                            .ok_or_else(|| fail(what(axis), format!("stride {s} x step {step} overflows isize")))?
                    };
                    out.shape.push(len);
                    out.strides.push(stride);
                    axis += 1;
                }
            }
        }
        out.shape.extend_from_slice(&self.shape[axis..]);
        out.strides.extend_from_slice(&self.strides[axis..]);
        out.offset = usize::try_from(offset)
            .map_err(|_| fail(whole(), format!("the first element would be at {offset}, below 0")))?;
        Ok(out)
    }

    /// The axes in the order `axes` gives (a permutation of `0..ndim`).
    pub fn permuted(&self, axes: &[usize]) -> Result<Layout> {
        let mut seen = vec![false; self.ndim()];
        let ok =
            axes.len() == self.ndim() && axes.iter().all(|&a| a < seen.len() && !std::mem::replace(&mut seen[a], true));
        if !ok {
            return Err(fail(
                format!("permuting the axes of an array of shape {:?}", self.shape),
                format!("{axes:?} is not a permutation of 0..{}", self.ndim()),
            ));
        }
        Ok(Layout {
            shape: axes.iter().map(|&a| self.shape[a]).collect(),
            strides: axes.iter().map(|&a| self.strides[a]).collect(),
            offset: self.offset,
        })
    }

    /// The axes reversed (a matrix transposed).
    pub fn transposed(&self) -> Layout {
        Layout {
            shape: self.shape.iter().rev().copied().collect(),
            strides: self.strides.iter().rev().copied().collect(),
            offset: self.offset,
        }
    }

    /// A new axis of extent 1 before `axis` (`axis == ndim` appends one).
    pub fn insert_axis(&self, axis: usize) -> Result<Layout> {
        if axis > self.ndim() {
            return Err(fail(
                format!("inserting an axis into an array of shape {:?}", self.shape),
                format!("axis {axis} is past {}", self.ndim()),
            ));
        }
        let mut out = self.clone();
        out.shape.insert(axis, 1);
        out.strides.insert(axis, 0);
        Ok(out)
    }

    /// Axis `axis` removed; it must have extent 1.
    pub fn remove_axis(&self, axis: usize) -> Result<Layout> {
        let what = format!("removing axis {axis} of an array of shape {:?}", self.shape);
        self.axis(axis, &what)?;
        if self.shape[axis] != 1 {
            return Err(fail(what, format!("its extent is {}, not 1", self.shape[axis])));
        }
        let mut out = self.clone();
        out.shape.remove(axis);
        out.strides.remove(axis);
        Ok(out)
    }

    /// This layout seen as `shape` under NumPy's broadcasting rules
    /// (dimensions aligned at the end; an extent-1 or missing dimension
    /// repeats with stride 0).
    pub fn broadcast_to(&self, shape: &[usize]) -> Result<Layout> {
        let refuse = || {
            fail(
                format!("broadcasting an array of shape {:?}", self.shape),
                format!("it does not broadcast to shape {shape:?}"),
            )
        };
        if shape.len() < self.ndim() {
            return Err(refuse());
        }
        checked_len(shape, &format!("broadcasting an array of shape {:?}", self.shape))?;
        let lead = shape.len() - self.ndim();
        let mut strides = vec![0isize; shape.len()];
        for (d, (&n, &s)) in self.shape.iter().zip(&self.strides).enumerate() {
            match (n, shape[lead + d]) {
                (a, b) if a == b => strides[lead + d] = s,
                (1, _) => strides[lead + d] = 0,
                _ => return Err(refuse()),
            }
        }
        Ok(Layout { shape: shape.to_vec(), strides, offset: self.offset })
    }

    /// This layout with `shape` (the same number of elements) as a view,
    /// where the elements keep their row-major order without a copy: always
    /// for a standard layout, and for others where the merged dimensions
    /// allow it. `None` where a copy is needed; `Err` where the element
    /// counts differ.
    pub fn reshaped(&self, shape: &[usize]) -> Result<Option<Layout>> {
        let n = checked_len(shape, &format!("reshaping an array of shape {:?}", self.shape))?;
        if n != self.len() {
            return Err(fail(
                format!("reshaping an array of shape {:?}", self.shape),
                format!("shape {shape:?} holds {n} elements, the array {}", self.len()),
            ));
        }
        if self.is_standard() || n == 0 {
            return Ok(Some(Layout { offset: self.offset, ..Layout::standard(shape)? }));
        }
        // NumPy's no-copy reshape: group old and new dimensions into runs
        // of equal element counts; each old run must be contiguous in itself.
        let (od, os): (Vec<usize>, Vec<isize>) =
            self.shape.iter().zip(&self.strides).filter(|&(&n, _)| n != 1).map(|(&n, &s)| (n, s)).unzip();
        let mut strides = vec![0isize; shape.len()];
        let (mut oi, mut oj, mut ni, mut nj) = (0, 1, 0, 1);
        while ni < shape.len() && oi < od.len() {
            let (mut np, mut op) = (shape[ni], od[oi]);
            while np != op {
                if np < op {
                    np *= shape[nj];
                    nj += 1;
                } else {
                    op *= od[oj];
                    oj += 1;
                }
            }
            // A product that overflows is no match: the run is not contiguous.
            let steps_over =
                |k: usize| isize::try_from(od[k + 1]).ok().and_then(|n| n.checked_mul(os[k + 1])) == Some(os[k]);
            if !(oi..oj - 1).all(steps_over) {
                return Ok(None);
            }
            strides[nj - 1] = os[oj - 1];
            for k in (ni + 1..nj).rev() {
                strides[k - 1] =
                    isize::try_from(shape[k]).ok().and_then(|n| strides[k].checked_mul(n)).ok_or_else(|| {
                        fail(
                            format!("reshaping the layout {self:?} to shape {shape:?}"),
                            format!("stride {} x extent {} overflows isize", strides[k], shape[k]),
                        )
                    })?;
            }
            ni = nj;
            nj += 1;
            oi = oj;
            oj += 1;
        }
        Ok(Some(Layout { shape: shape.to_vec(), strides, offset: self.offset }))
    }
}

/// The shape two arrays of shapes `a` and `b` broadcast to (NumPy's rules);
/// `Err` naming both shapes where they do not.
pub fn broadcast_shapes(a: &[usize], b: &[usize]) -> Result<Vec<usize>> {
    let n = a.len().max(b.len());
    let at = |s: &[usize], d: usize| if d + s.len() >= n { s[d + s.len() - n] } else { 1 };
    let shape = (0..n)
        .map(|d| match (at(a, d), at(b, d)) {
            (x, y) if x == y => Ok(x),
            (1, y) => Ok(y),
            (x, 1) => Ok(x),
            _ => Err(fail("broadcasting", format!("shapes {a:?} and {b:?} do not broadcast together"))),
        })
        .collect::<Result<Vec<usize>>>()?;
    checked_len(&shape, &format!("broadcasting shapes {a:?} and {b:?}"))?;
    Ok(shape)
}

#[cfg(test)]
mod tests;
