//! Stream compaction: copy the elements that satisfy a predicate, in order,
//! and count them (Thrust's `copy_if`, NumPy's `x[x > 0]` and `nonzero`).
//!
//! # Semantics, the same on every backend
//! - Types: `i32`, `u32`, `f32` and `f64` (`f16` is `Err(Unsupported)`).
//! - The kept elements (or their indices) go to the front of the output in
//!   their original order (a stable compaction); the count is returned (or
//!   left on the device). Elements of the output past the count are not
//!   written: they keep whatever they held.
//! - The output must hold at least as many elements as the input.
//! - Comparisons are IEEE: NaN satisfies only [`Predicate::NotEqualTo`] and
//!   [`Predicate::NonZero`]; `-0.0 == 0.0`, so `NonZero` drops both zeros.
//!
//! # How
//! CUDA: one pass with decoupled look-back on the counts (the scan's
//! machinery): each block loads a tile with 16-byte vectors, counts what it
//! keeps, learns how many earlier tiles kept, stages its kept elements
//! contiguously in shared memory and writes them with coalesced stores.
//! Memory-bound at one read per element and one write per kept element.
//! WGSL, which promises no forward progress between workgroups: the scan's
//! tiles over the counts, each tile learning how many earlier tiles kept
//! by decoupled look-back and decoupled fallback (a workgroup that finds an
//! earlier tile's count missing counts that tile itself) below 1 Mi
//! elements, and from carries (a pass counting each tile, then an
//! exclusive scan of the counts) from there on; the kept 4-byte elements
//! gathered in workgroup memory and written with coalesced stores.
//!
//! # Examples
//! ```
//! use kiln_core::Device;
//! use kiln_cpu::Cpu;
//! use kiln_kernels::compact::{copy_if, Predicate};
//! # fn main() -> kiln_core::Result<()> {
//! let dev = Device::<Cpu>::open(0)?;
//! let s = dev.stream();
//! let x = s.upload(&[3.0f32, -1.0, 0.5, -2.0, 8.0])?;
//! let mut out = s.upload(&[9.0f32; 5])?;
//! let kept = copy_if(&s, &x, Predicate::GreaterThan(0.0), &mut out)?;
//! assert_eq!(kept, 3);
//! assert_eq!(out.to_vec()?, vec![3.0, 0.5, 8.0, 9.0, 9.0]);   // the tail is untouched
//! # Ok(()) }
//! ```

mod cpu;
#[cfg(target_arch = "x86_64")]
mod cpu_x86;
mod fallback;

use std::sync::Arc;

use kiln_core::{
    Args, Backend, BufferView, BufferViewMut, Element, Error, HostFn, LaunchConfig, Program, Result, Stream, View,
    ViewMut,
};

use crate::Number;
use crate::launch::{check_dtype, cuda_source, host_fn, index_width, program, wgsl_preamble};
use crate::reduce::{check_numeric, wgsl_is_nan};
use crate::scan::LOOKBACK_CUH;
use crate::scan::plan::{CUDA_MIN_BLOCKS, CUDA_VECTORS, cuda_items, one_pass_tiles, runs_one_pass};

/// Which elements a compaction keeps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Predicate<T> {
    /// `x > value`.
    GreaterThan(T),
    /// `x < value`.
    LessThan(T),
    /// `x == value`.
    EqualTo(T),
    /// `x != value` (true for NaN).
    NotEqualTo(T),
    /// `x != 0` (true for NaN, false for both zeros).
    NonZero,
}

impl<T> Predicate<T> {
    /// The predicate of a kernel's `PRED` code (see `code`), or `None` for
    /// a code no predicate has.
    pub(crate) fn from_code(code: u8, value: T) -> Option<Self> {
        match code {
            0 => Some(Predicate::GreaterThan(value)),
            1 => Some(Predicate::LessThan(value)),
            2 => Some(Predicate::EqualTo(value)),
            3 => Some(Predicate::NotEqualTo(value)),
            4 => Some(Predicate::NonZero),
            _ => None,
        }
    }

    /// [`from_code`](Self::from_code), with an unknown code as an
    /// `InvalidArgument` error naming `what` (the kernel that got it).
    #[inline]
    pub(crate) fn decode(code: u8, value: T, what: &str) -> Result<Self> {
        Self::from_code(code, value).ok_or_else(|| {
            Error::invalid(
                what,
                format!(
                    "predicate code {code} names no predicate \
                     (0 greater_than, 1 less_than, 2 equal_to, 3 not_equal_to, 4 non_zero)"
                ),
            )
        })
    }
}

impl<T: Number> Predicate<T> {
    /// Whether `v` is kept, by IEEE comparison.
    ///
    /// # Examples
    /// ```
    /// use kiln_kernels::compact::Predicate;
    /// assert!(Predicate::GreaterThan(1.0f32).test(2.0));
    /// assert!(!Predicate::GreaterThan(1.0f32).test(f32::NAN));
    /// assert!(Predicate::<f64>::NonZero.test(f64::NAN));
    /// assert!(!Predicate::<f64>::NonZero.test(-0.0));
    /// ```
    pub fn test(self, v: T) -> bool {
        match self {
            Predicate::GreaterThan(p) => v > p,
            Predicate::LessThan(p) => v < p,
            Predicate::EqualTo(p) => v == p,
            Predicate::NotEqualTo(p) => v != p,
            Predicate::NonZero => v != T::from_index(0),
        }
    }

    /// Lower-case name ("greater_than").
    pub fn name(self) -> &'static str {
        match self {
            Predicate::GreaterThan(_) => "greater_than",
            Predicate::LessThan(_) => "less_than",
            Predicate::EqualTo(_) => "equal_to",
            Predicate::NotEqualTo(_) => "not_equal_to",
            Predicate::NonZero => "non_zero",
        }
    }

    /// The value compared with (0 for `NonZero`).
    pub fn value(self) -> T {
        match self {
            Predicate::GreaterThan(p) | Predicate::LessThan(p) | Predicate::EqualTo(p) | Predicate::NotEqualTo(p) => p,
            Predicate::NonZero => T::from_index(0),
        }
    }

    fn code(self) -> u8 {
        match self {
            Predicate::GreaterThan(_) => 0,
            Predicate::LessThan(_) => 1,
            Predicate::EqualTo(_) => 2,
            Predicate::NotEqualTo(_) => 3,
            Predicate::NonZero => 4,
        }
    }

    /// The WGSL test of `v`, NaN handled explicitly (WGSL lets an
    /// implementation assume float comparisons never see NaN).
    fn wgsl(self) -> &'static str {
        match self {
            Predicate::GreaterThan(_) => "!is_nan(v) && !is_nan(params.value) && v > params.value",
            Predicate::LessThan(_) => "!is_nan(v) && !is_nan(params.value) && v < params.value",
            Predicate::EqualTo(_) => "!is_nan(v) && !is_nan(params.value) && v == params.value",
            Predicate::NotEqualTo(_) => "is_nan(v) || is_nan(params.value) || v != params.value",
            Predicate::NonZero => "is_nan(v) || v != T(0)",
        }
    }

    fn host(self, indices: bool) -> HostFn {
        match (self.code(), indices) {
            (0, false) => host_fn!(cpu::copy_if::<T, 0>),
            (1, false) => host_fn!(cpu::copy_if::<T, 1>),
            (2, false) => host_fn!(cpu::copy_if::<T, 2>),
            (3, false) => host_fn!(cpu::copy_if::<T, 3>),
            (_, false) => host_fn!(cpu::copy_if::<T, 4>),
            (0, true) => host_fn!(cpu::copy_if_indices::<T, 0>),
            (1, true) => host_fn!(cpu::copy_if_indices::<T, 1>),
            (2, true) => host_fn!(cpu::copy_if_indices::<T, 2>),
            (3, true) => host_fn!(cpu::copy_if_indices::<T, 3>),
            (_, true) => host_fn!(cpu::copy_if_indices::<T, 4>),
        }
    }
}

fn single_pass_program<T: Number>(pred: Predicate<T>, indices: bool) -> Arc<Program> {
    let name = format!("kiln_copy_if_{}{}_{}", pred.name(), if indices { "_indices" } else { "" }, T::DTYPE);
    program(&name, || {
        let mut p = Program::new(&name)
            .cuda(cuda_source(T::DTYPE, &format!("{LOOKBACK_CUH}\n{}", include_str!("kernel.cu"))))
            .host(pred.host(indices))
            .define("KERNEL", &name)
            .define("KILN_ITEMS", cuda_items(T::DTYPE))
            .define("KILN_SCAN_VPL", CUDA_VECTORS)
            .define("KILN_SCAN_MIN_BLOCKS", CUDA_MIN_BLOCKS)
            .define("PRED", pred.code());
        if indices {
            p = p.define("INDICES", 1);
        }
        p
    })
}

/// What a WGSL compaction kernel starts with: the bindings, `is_nan` and `keep(v)`.
fn wgsl_header<T: Number>(pred: Predicate<T>, buffers: &[(&str, &str, bool)]) -> String {
    let mut src = wgsl_preamble(T::DTYPE, buffers);
    src.push_str(wgsl_is_nan(T::DTYPE));
    src.push_str(&format!("fn keep(v: T) -> bool {{ return {}; }}\n", pred.wgsl()));
    src
}

/// Check the output's capacity, the count's length and the dtype.
fn check<B: Backend, T: Number, O: Element>(
    stream: &Stream<B>,
    what: &str,
    n: usize,
    out: &BufferViewMut<'_, B, O>,
    count: &BufferViewMut<'_, B, u64>,
) -> Result<()> {
    check_numeric::<B, T>(what)?;
    if out.len() < n {
        return Err(Error::LengthMismatch {
            what: format!("{what}: output (it must hold as many elements as the input)"),
            expected: n,
            actual: out.len(),
        });
    }
    if count.len() != 1 {
        return Err(Error::LengthMismatch {
            what: format!("{what}: count (one element)"),
            expected: 1,
            actual: count.len(),
        });
    }
    check_dtype(stream, T::DTYPE, what)
}

fn run<B: Backend, T: Number, O: Element>(
    stream: &Stream<B>,
    x: BufferView<'_, B, T>,
    pred: Predicate<T>,
    out: BufferViewMut<'_, B, O>,
    mut count: BufferViewMut<'_, B, u64>,
    indices: bool,
) -> Result<()> {
    let what = format!("copy_if{} {}", if indices { "_indices" } else { "" }, pred.name());
    let n = x.len();
    check::<B, T, O>(stream, &what, n, &out, &count)?;
    if indices && n as u64 > 1 << 32 {
        return Err(Error::invalid(what, format!("{n} elements have indices past u32")));
    }
    if n == 0 {
        return stream.fill(&mut count, 0u64);
    }
    let one_pass = single_pass_program::<T>(pred, indices);
    if runs_one_pass(stream.device(), &one_pass) {
        single_pass(stream, &one_pass, x, pred, out, count)
    } else {
        fallback::one_pass(stream, x, pred, out, count, indices)
    }
}

fn single_pass<B: Backend, T: Number, O: Element>(
    stream: &Stream<B>,
    prog: &Program,
    x: BufferView<'_, B, T>,
    pred: Predicate<T>,
    out: BufferViewMut<'_, B, O>,
    count: BufferViewMut<'_, B, u64>,
) -> Result<()> {
    let n = x.len();
    let tiles = one_pass_tiles::<B>(n, T::DTYPE);
    let grid = u32::try_from(tiles)
        .map_err(|_| Error::invalid(format!("copy_if of {n} elements"), "more tiles than a grid can hold"))?;
    let kernel = stream.device().kernel(prog)?;
    let mut status = stream.alloc_zeroed::<u64>(tiles + 1)?;
    // Counts travel inside the status words: aggs and incls stay unused.
    let mut aggs = stream.alloc::<u64>(1)?;
    let mut incls = stream.alloc::<u64>(1)?;
    let args = Args::new()
        .arg(x)
        .arg(out)
        .arg(count)
        .arg(status.view_mut())
        .arg(aggs.view_mut())
        .arg(incls.view_mut())
        .scalar(pred.value());
    let args = args.length(index_width(stream), n, prog.name())?;
    // SAFETY: block b reads tile b of x[0..n) and writes out[0..count) with
    // count <= n <= out's length (checked), count[0], status[b] and
    // status[tiles] (the counter), sized for `tiles`; the counts travel in
    // the status words, so aggs and incls are never touched.
    unsafe { stream.launch(&kernel, LaunchConfig::new(grid, 256), args) }
}

fn read_count<B: Backend>(stream: &Stream<B>, count: &impl View<B, u64>) -> Result<usize> {
    let mut c = [0u64];
    stream.copy_to_host(count, &mut c)?;
    usize::try_from(c[0]).map_err(|_| Error::invalid("copy_if", format!("count {} does not fit a usize", c[0])))
}

/// Copy the elements of `x` that satisfy `pred` to the front of `out`, in
/// order, and leave their number in `count` (one element) on the device;
/// returns at once. `out` must hold at least `x.len()` elements; those past
/// the count are not written.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::compact::{copy_if_into, Predicate};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[5i32, 0, -3, 0, 2])?;
/// let (mut out, mut count) = (s.alloc::<i32>(5)?, s.alloc::<u64>(1)?);
/// copy_if_into(&s, &x, Predicate::NonZero, &mut out, &mut count)?;
/// assert_eq!(count.to_vec()?, vec![3]);
/// assert_eq!(out.to_vec()?[..3], [5, -3, 2]);
/// # Ok(()) }
/// ```
pub fn copy_if_into<B: Backend, T: Number>(
    stream: &Stream<B>,
    x: &impl View<B, T>,
    pred: Predicate<T>,
    out: &mut impl ViewMut<B, T>,
    count: &mut impl ViewMut<B, u64>,
) -> Result<()> {
    run(stream, x.view(), pred, out.view_mut(), count.view_mut(), false)
}

/// Copy the elements of `x` that satisfy `pred` to the front of `out`, in
/// order, and return how many; blocks until the count is on the host.
/// `out` must hold at least `x.len()` elements; those past the count are
/// not written.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::compact::{copy_if, Predicate};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[1.0f64, f64::NAN, 2.0])?;
/// let mut out = s.alloc::<f64>(3)?;
/// assert_eq!(copy_if(&s, &x, Predicate::NotEqualTo(2.0), &mut out)?, 2);   // 1.0 and NaN
/// assert!(copy_if(&s, &x, Predicate::NonZero, &mut s.alloc::<f64>(2)?).is_err());
/// # Ok(()) }
/// ```
pub fn copy_if<B: Backend, T: Number>(
    stream: &Stream<B>,
    x: &impl View<B, T>,
    pred: Predicate<T>,
    out: &mut impl ViewMut<B, T>,
) -> Result<usize> {
    let mut count = stream.alloc::<u64>(1)?;
    copy_if_into(stream, x, pred, out, &mut count)?;
    read_count(stream, &count)
}

/// Write the indices (as `u32`) of the elements of `x` that satisfy `pred`
/// to the front of `indices`, in order, and leave their number in `count`
/// on the device; returns at once. `indices` must hold at least `x.len()`
/// elements, and `x` at most 2^32.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::compact::{copy_if_indices_into, Predicate};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[4u32, 7, 4, 1])?;
/// let (mut at, mut count) = (s.alloc::<u32>(4)?, s.alloc::<u64>(1)?);
/// copy_if_indices_into(&s, &x, Predicate::EqualTo(4), &mut at, &mut count)?;
/// assert_eq!((count.to_vec()?[0], &at.to_vec()?[..2]), (2, &[0, 2][..]));
/// # Ok(()) }
/// ```
pub fn copy_if_indices_into<B: Backend, T: Number>(
    stream: &Stream<B>,
    x: &impl View<B, T>,
    pred: Predicate<T>,
    indices: &mut impl ViewMut<B, u32>,
    count: &mut impl ViewMut<B, u64>,
) -> Result<()> {
    run(stream, x.view(), pred, indices.view_mut(), count.view_mut(), true)
}

/// Write the indices of the elements of `x` that satisfy `pred` to the
/// front of `indices`, in order (NumPy's `nonzero`), and return how many;
/// blocks until the count is on the host.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::compact::{copy_if_indices, Predicate};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[-1.0f32, 2.0, -3.0])?;
/// let mut at = s.alloc::<u32>(3)?;
/// assert_eq!(copy_if_indices(&s, &x, Predicate::LessThan(0.0), &mut at)?, 2);
/// assert_eq!(at.to_vec()?[..2], [0, 2]);
/// # Ok(()) }
/// ```
pub fn copy_if_indices<B: Backend, T: Number>(
    stream: &Stream<B>,
    x: &impl View<B, T>,
    pred: Predicate<T>,
    indices: &mut impl ViewMut<B, u32>,
) -> Result<usize> {
    let mut count = stream.alloc::<u64>(1)?;
    copy_if_indices_into(stream, x, pred, indices, &mut count)?;
    read_count(stream, &count)
}

#[cfg(test)]
mod tests {
    use super::Predicate;
    use kiln_core::Error;

    #[test]
    fn codes_round_trip_and_unknown_codes_are_refused() {
        let all = [
            Predicate::GreaterThan(2.0f32),
            Predicate::LessThan(2.0),
            Predicate::EqualTo(2.0),
            Predicate::NotEqualTo(2.0),
            Predicate::NonZero,
        ];
        for pred in all {
            assert_eq!(Predicate::from_code(pred.code(), 2.0f32), Some(pred));
        }
        for code in [5, u8::MAX] {
            assert_eq!(Predicate::from_code(code, 2.0f32), None);
            let err = Predicate::decode(code, 2.0f32, "copy_if test").unwrap_err();
            assert!(matches!(err, Error::InvalidArgument { .. }), "{err}");
        }
    }
}
