//! The one comparer: exact for integers, a relative bound for floats,
//! NaN-aware, reporting the first bad index and its neighbours.

use std::fmt;

use crate::Sample;

/// How closely a result must match its expected value.
///
/// Integers are always compared exactly, whatever the tolerance says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tolerance {
    /// Identical bytes: copies and round trips, which must move every bit
    /// (NaN payloads and the sign of zero included).
    Bits,
    /// Identical values: identical bytes, except that any NaN matches any
    /// NaN (a kernel may not keep a payload). `-0.0` and `0.0` differ, so
    /// `fill(-0.0)` must write `-0.0`.
    Exact,
    /// For floats, `|got - expected| <= ulps * epsilon * max(|expected|,
    /// smallest normal)`: a relative bound, whose floor at the smallest
    /// normal keeps it at `ulps` units in the subnormal range. NaN matches NaN only, an infinity only itself, and `-0.0`
    /// matches `0.0`: a fused multiply-add or a different operand order may
    /// change the sign of an exact zero, which IEEE arithmetic does not
    /// otherwise let a result depend on.
    Ulps(u32),
    /// For floats, `|got - expected| <= bound`, with each element's own
    /// absolute bound from [`Expected::within`]: for sums and scans, whose
    /// error grows with the magnitudes summed and with log n. NaN matches
    /// NaN only, an infinity only itself, and `-0.0` matches `0.0`. Without
    /// a bound (in [`close`]) only equal values match.
    Bounded,
}

/// The expected contents of one output, and how to judge them.
///
/// # Examples
/// ```
/// use kiln_conformance::{compare, Expected, Tolerance};
/// let want = Expected::new(vec![1.0f32, 2.0, 3.0], Tolerance::Ulps(1));
/// assert!(compare("y", &want, &[1.0, 2.0, 3.0 + f32::EPSILON]).is_ok());
/// let bad = compare("y", &want, &[1.0, 2.5, 3.0]).unwrap_err();
/// assert_eq!((bad.index, bad.bad), (1, 1));
/// ```
#[derive(Debug, Clone)]
pub struct Expected<T> {
    /// The expected values.
    pub values: Vec<T>,
    /// How closely each element must match.
    pub tolerance: Tolerance,
    /// Other acceptable results, element by element: the result of a fused
    /// multiply-add where the reference rounds twice, or the result computed
    /// as if subnormals were zero on a backend allowed to flush them.
    pub alternatives: Vec<Vec<T>>,
    /// Each element's absolute error bound, for [`Tolerance::Bounded`]
    /// (empty otherwise); alternatives are judged with the same bounds.
    pub bounds: Vec<f64>,
}

impl<T: Sample> Expected<T> {
    /// `values`, judged with `tolerance`.
    pub fn new(values: Vec<T>, tolerance: Tolerance) -> Self {
        Expected { values, tolerance, alternatives: Vec::new(), bounds: Vec::new() }
    }

    /// `values`, each within its absolute `bounds[i]` ([`Tolerance::Bounded`]).
    ///
    /// # Examples
    /// ```
    /// use kiln_conformance::{compare, Expected};
    /// let want = Expected::within(vec![10.0f32, 1.0e6], vec![0.5, 1.0]);
    /// assert!(compare("sums", &want, &[10.25, 1.0e6 - 1.0]).is_ok());
    /// assert!(compare("sums", &want, &[10.75, 1.0e6]).is_err());
    /// assert!(compare("sums", &Expected::within(vec![f32::NAN], vec![1e9]), &[0.0]).is_err());
    /// ```
    pub fn within(values: Vec<T>, bounds: Vec<f64>) -> Self {
        Expected { values, tolerance: Tolerance::Bounded, alternatives: Vec::new(), bounds }
    }

    /// Whether `got` is acceptable where `want` is, at element `i`.
    fn close_at(&self, i: usize, want: T, got: T) -> bool {
        match (self.tolerance, self.bounds.get(i)) {
            (Tolerance::Bounded, Some(&bound)) => within_bound(bound, want, got),
            (tolerance, _) => close(tolerance, want, got),
        }
    }

    /// Also accept `other[i]` at element `i`.
    pub fn or(mut self, other: Vec<T>) -> Self {
        self.alternatives.push(other);
        self
    }

    /// Whether `got` is acceptable at element `i`.
    fn accepts(&self, i: usize, got: T) -> bool {
        self.close_at(i, self.values[i], got)
            || self.alternatives.iter().any(|a| a.get(i).is_some_and(|&v| self.close_at(i, v, got)))
    }
}

/// Whether `got` is acceptable where `expected` is wanted, with `tolerance`.
///
/// # Examples
/// ```
/// use kiln_conformance::{close, Tolerance};
/// assert!(close(Tolerance::Ulps(2), f32::NAN, -f32::NAN));
/// assert!(close(Tolerance::Ulps(2), 0.0f32, -0.0));
/// assert!(!close(Tolerance::Exact, 0.0f32, -0.0));
/// assert!(!close(Tolerance::Ulps(2), f32::INFINITY, f32::MAX));
/// assert!(!close(Tolerance::Ulps(9), 7i32, 8));
/// ```
pub fn close<T: Sample>(tolerance: Tolerance, expected: T, got: T) -> bool {
    if expected.same_as(got) {
        return true;
    }
    if !T::IS_FLOAT || tolerance == Tolerance::Bits {
        return false;
    }
    if expected.is_nan_value() || got.is_nan_value() {
        return expected.is_nan_value() && got.is_nan_value();
    }
    let Tolerance::Ulps(ulps) = tolerance else {
        return false;
    };
    let (e, g) = (expected.to_f64(), got.to_f64());
    if e == g {
        return true; // 0.0 and -0.0
    }
    if !e.is_finite() || !g.is_finite() {
        return false;
    }
    let magnitude = e.abs().max(T::min_normal());
    (g - e).abs() <= ulps as f64 * T::epsilon() * magnitude
}

/// `|got - expected| <= bound` for floats (NaN only with NaN, an infinity
/// only with itself); equality for integers.
fn within_bound<T: Sample>(bound: f64, expected: T, got: T) -> bool {
    if expected.same_as(got) {
        return true;
    }
    if !T::IS_FLOAT {
        return false;
    }
    if expected.is_nan_value() || got.is_nan_value() {
        return expected.is_nan_value() && got.is_nan_value();
    }
    let (e, g) = (expected.to_f64(), got.to_f64());
    if e == g {
        return true;
    }
    e.is_finite() && g.is_finite() && (g - e).abs() <= bound
}

/// The first element that failed a comparison, with the context to debug it.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// What was compared ("output y", "elements after the view").
    pub what: String,
    /// Index of the first bad element.
    pub index: usize,
    /// The expected value there, formatted.
    pub expected: String,
    /// The value found there, formatted.
    pub got: String,
    /// How many elements are bad.
    pub bad: usize,
    /// How many elements were compared.
    pub len: usize,
    /// Expected and found values around the first bad index, one per line.
    pub neighbours: String,
}

impl fmt::Display for Mismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} of {} elements wrong; first at index {}: expected {}, got {}\n{}",
            self.what, self.bad, self.len, self.index, self.expected, self.got, self.neighbours
        )
    }
}

/// How many elements on each side of the first bad one a report shows.
const NEIGHBOURS: usize = 3;

/// Compare `got` with `expected`; the `Err` names the first bad index, the
/// values there and around it, and how many elements are bad.
pub fn compare<T: Sample>(what: &str, expected: &Expected<T>, got: &[T]) -> Result<(), Mismatch> {
    let want = &expected.values;
    if want.len() != got.len() {
        let index = want.len().min(got.len());
        return Err(Mismatch {
            what: what.to_string(),
            index,
            expected: format!("{} elements", want.len()),
            got: format!("{} elements", got.len()),
            bad: want.len().abs_diff(got.len()),
            len: want.len(),
            neighbours: String::new(),
        });
    }
    match mismatch(what, want, got, |i| expected.accepts(i, got[i])) {
        Some(m) => Err(m),
        None => Ok(()),
    }
}

/// The report on the elements of `got` (as long as `want`) that `ok`
/// refuses, by index: the first one, the values around it, how many there
/// are; `None` where `ok` accepts every index.
pub(crate) fn mismatch<T: fmt::Debug>(
    what: &str,
    want: &[T],
    got: &[T],
    ok: impl Fn(usize) -> bool,
) -> Option<Mismatch> {
    let index = (0..got.len()).find(|&i| !ok(i))?;
    let bad = (index..got.len()).filter(|&i| !ok(i)).count();
    let lo = index.saturating_sub(NEIGHBOURS);
    let hi = (index + NEIGHBOURS + 1).min(got.len());
    let neighbours = (lo..hi)
        .map(|i| {
            let mark = if ok(i) { "  " } else { "->" };
            format!("  {mark} [{i}] expected {:?}, got {:?}", want[i], got[i])
        })
        .collect::<Vec<_>>()
        .join("\n");
    Some(Mismatch {
        what: what.to_string(),
        index,
        expected: format!("{:?}", want[index]),
        got: format!("{:?}", got[index]),
        bad,
        len: got.len(),
        neighbours,
    })
}

/// Panic with the comparison's report unless `got` matches `expected`; the
/// panic points at the caller. For tests.
///
/// # Examples
/// ```should_panic
/// use kiln_conformance::{assert_matches, Expected, Tolerance};
/// assert_matches("c", &Expected::new(vec![1u32, 2, 3], Tolerance::Exact), &[1, 2, 4]);
/// ```
#[track_caller]
pub fn assert_matches<T: Sample>(what: &str, expected: &Expected<T>, got: &[T]) {
    if let Err(m) = compare(what, expected, got) {
        panic!("{m}");
    }
}
