//! sort: a stable LSD radix sort of `u32`, `i32` and `f32` keys, alone or
//! with `u32` values, ascending or descending; and argsort.
//!
//! Four passes of 8-bit digits, each a stable counting sort. Keys are
//! sorted as 32-bit patterns that order like the keys: `i32` with the sign
//! bit flipped; `f32` in IEEE total order with -0.0 before 0.0 and NaN last
//! (every NaN comes out as the positive quiet NaN `0x7fc0_0000`);
//! descending complements the pattern (so NaN comes first there). Equal
//! keys keep their input order in both directions.
//!
//! # How
//! On CUDA, up to 7680 keys are sorted whole by one block in one launch
//! (all four passes on the chip, as CUB's single-tile sort).
//!
//! Onesweep (Adinets & Merrill 2022, CUB's `DeviceRadixSort`), up to 2^30 -
//! 1 keys: one kernel counts all four digit histograms in one read of the
//! keys; then each pass is one kernel in which a block ranks a tile of keys,
//! learns where each digit's run goes from the tiles before it (decoupled
//! look-back) and scatters: 8 bytes moved per key and pass (16 with
//! values), plus 4 per key for the counts.
//! - CUDA (any device with forward progress between blocks): tiles of 7680
//!   keys, ranked with warp ballots (`onesweep.cu`).
//! - wgpu adapters with subgroup operations: tiles of 256 x 16 keys (fewer
//!   where workgroup memory is small), ranked with subgroup ballots
//!   (`onesweep.wgsl`). WGSL promises no forward progress between
//!   workgroups, so a workgroup that finds an earlier tile's count missing
//!   after a bounded wait counts that tile's digits from its keys itself
//!   (decoupled fallback, Smith, Levien and Owens 2025): none waits on
//!   another without bound.
//!
//! Elsewhere (wgpu without subgroups, the CPU, more keys) each pass runs in
//! three kernels: per-tile digit histograms, an exclusive scan of the
//! counts (per digit, over tiles), and a stable scatter: 12 bytes per key
//! and pass (20 with values). The CPU cuts the keys into about four tiles
//! per thread, and each tile scatters into the runs of the output that are
//! its own; past 8 Mi keys it writes them a cache line at a time, with
//! non-temporal stores on x86-64.
//!
//! Scratch memory, allocated on the stream for each call: a second array of
//! keys (and of values; argsort takes two of keys and one of positions),
//! and for onesweep `4 x 256 x tiles` look-back words (4 bytes each: about
//! 0.67 bytes per key on CUDA sorting keys alone, 0.53 with values, 1 on
//! wgpu), for three kernels a pass `256 x tiles` counters.

mod cpu;
mod cpu_scatter;
mod launch;
mod onesweep;
mod plan;
mod program;
mod types;

use kiln_core::{Backend, Element, Error, Result, Stream, View, ViewMut};

use launch::Passes;
use onesweep::sort_one_tile;
use types::{FLAG_GEN_INDEX, FLAG_IN_PLACE, FLAG_MAP, FLAG_NO_KEYS, FLAG_UNMAP, FLAG_VALUES, Io};

/// The direction of a sort.
///
/// # Examples
/// ```
/// use kiln_kernels::sort::SortOrder;
/// assert_eq!(SortOrder::default(), SortOrder::Ascending);
/// assert_eq!(SortOrder::Descending.to_string(), "descending");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SortOrder {
    /// Smallest first (NaN last).
    #[default]
    Ascending,
    /// Largest first (NaN first); equal keys still keep their input order.
    Descending,
}

impl SortOrder {
    /// Both orders.
    pub const ALL: [SortOrder; 2] = [SortOrder::Ascending, SortOrder::Descending];

    /// Lower-case name ("ascending").
    pub const fn name(self) -> &'static str {
        match self {
            SortOrder::Ascending => "ascending",
            SortOrder::Descending => "descending",
        }
    }
}

impl std::fmt::Display for SortOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A key type of the radix sort: `u32`, `i32`, `f32`.
///
/// # Examples
/// ```
/// use kiln_kernels::sort::SortKey;
/// // The sortable patterns order like the keys: -0.0 < 0.0 < inf < NaN.
/// let p = |x: f32| f32::map(x.to_bits());
/// assert!(p(-1.0) < p(-0.0) && p(-0.0) < p(0.0) && p(0.0) < p(f32::INFINITY));
/// assert!(p(f32::INFINITY) < p(f32::NAN) && p(-f32::NAN) == p(f32::NAN));
/// assert_eq!(f32::unmap(p(-0.0)), (-0.0f32).to_bits());
/// assert!(i32::map(-1i32 as u32) < i32::map(0));
/// ```
pub trait SortKey: Element + sealed::Sealed {
    /// `KEY_TYPE` of the kernels: 0 u32, 1 i32, 2 f32.
    #[doc(hidden)]
    const KEY_TYPE: u32;
    /// The key's bits.
    fn raw(self) -> u32;
    /// The key with these bits.
    fn from_raw(bits: u32) -> Self;
    /// The ascending sortable pattern of a key's bits (NaNs made the positive quiet NaN).
    fn map(raw: u32) -> u32;
    /// The key bits of an ascending sortable pattern.
    fn unmap(pattern: u32) -> u32;
}

impl sealed::Sealed for u32 {}
impl SortKey for u32 {
    const KEY_TYPE: u32 = 0;
    fn raw(self) -> u32 {
        self
    }
    fn from_raw(bits: u32) -> u32 {
        bits
    }
    fn map(raw: u32) -> u32 {
        raw
    }
    fn unmap(pattern: u32) -> u32 {
        pattern
    }
}

impl sealed::Sealed for i32 {}
impl SortKey for i32 {
    const KEY_TYPE: u32 = 1;
    fn raw(self) -> u32 {
        self as u32
    }
    fn from_raw(bits: u32) -> i32 {
        bits as i32
    }
    fn map(raw: u32) -> u32 {
        raw ^ 0x8000_0000
    }
    fn unmap(pattern: u32) -> u32 {
        pattern ^ 0x8000_0000
    }
}

impl sealed::Sealed for f32 {}
impl SortKey for f32 {
    const KEY_TYPE: u32 = 2;
    fn raw(self) -> u32 {
        self.to_bits()
    }
    fn from_raw(bits: u32) -> f32 {
        f32::from_bits(bits)
    }
    fn map(raw: u32) -> u32 {
        let raw = if raw & 0x7fff_ffff > 0x7f80_0000 { 0x7fc0_0000 } else { raw };
        if raw & 0x8000_0000 != 0 { !raw } else { raw | 0x8000_0000 }
    }
    fn unmap(pattern: u32) -> u32 {
        if pattern & 0x8000_0000 != 0 { pattern & 0x7fff_ffff } else { !pattern }
    }
}

/// The flags of pass `index` of four: map the keys read first, unmap those written last.
fn edge_flags(index: u32) -> u32 {
    match index {
        0 => FLAG_MAP,
        3 => FLAG_UNMAP,
        _ => 0,
    }
}

/// Why `n` keys cannot be sorted, if they cannot.
fn check_count(n: usize, what: &str) -> Result<()> {
    if n > u32::MAX as usize {
        return Err(Error::invalid(what, format!("{n} keys exceed the sort's 32-bit ranks")));
    }
    Ok(())
}

/// Sort `keys` in place, on `stream`: stable, in `order` (see the module
/// docs for the order of floats).
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_kernels::sort::{sort, SortOrder};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<kiln_cpu::Cpu>::open(0)?;
/// let s = dev.stream();
/// let mut k = s.upload(&[3.0f32, f32::NAN, -0.0, 0.0, -2.5])?;
/// sort(&s, &mut k, SortOrder::Ascending)?;
/// let got: Vec<u32> = k.to_vec()?.iter().map(|x| x.to_bits()).collect();
/// let want: Vec<u32> = [-2.5f32, -0.0, 0.0, 3.0, f32::NAN].iter().map(|x| x.to_bits()).collect();
/// assert_eq!(got, want);
/// # Ok(()) }
/// ```
pub fn sort<B: Backend, K: SortKey>(stream: &Stream<B>, keys: &mut impl ViewMut<B, K>, order: SortOrder) -> Result<()> {
    let what = format!("sort of {} {} keys ({order})", keys.view().len(), K::DTYPE);
    let n = keys.view().len();
    check_count(n, &what)?;
    if n <= 1 {
        return Ok(());
    }
    if let Some(items) = plan::one_tile::<B>(n) {
        let (none, none_in, mut none_out) = (stream.alloc::<K>(1)?, stream.alloc::<u32>(1)?, stream.alloc::<u32>(1)?);
        let io = Io { keys_in: &none, vals_in: &none_in, keys_out: keys, vals_out: &mut none_out };
        return sort_one_tile(stream, order, n, items, FLAG_MAP | FLAG_UNMAP | FLAG_IN_PLACE, io);
    }
    let mut passes = Passes::new(stream, &keys.view(), order, false, &what)?;
    let mut temp = stream.alloc::<K>(n)?;
    let (mut dummy_in, mut dummy_out) = (stream.alloc::<u32>(1)?, stream.alloc::<u32>(1)?);
    dummy_in.fill(0)?;
    // Even passes read the caller's keys and write the temporary; odd passes the reverse.
    for index in 0..4u32 {
        let flags = edge_flags(index);
        if index % 2 == 0 {
            let io = Io { keys_in: &keys.view(), vals_in: &dummy_in, keys_out: &mut temp, vals_out: &mut dummy_out };
            passes.run(stream, index, flags, io)?;
        } else {
            let io = Io { keys_in: &temp, vals_in: &dummy_in, keys_out: keys, vals_out: &mut dummy_out };
            passes.run(stream, index, flags, io)?;
        }
    }
    Ok(())
}

/// `sorted` = the keys of `keys` in stable `order`, on `stream`; `keys` is
/// left as it is (the out-of-place form of [`sort`], with no extra copy).
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_kernels::sort::{sort_into, SortOrder};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<kiln_cpu::Cpu>::open(0)?;
/// let s = dev.stream();
/// let k = s.upload(&[3u32, 1, 2])?;
/// let mut out = s.alloc::<u32>(3)?;
/// sort_into(&s, &k, &mut out, SortOrder::Descending)?;
/// assert_eq!((k.to_vec()?, out.to_vec()?), (vec![3, 1, 2], vec![3, 2, 1]));
/// # Ok(()) }
/// ```
pub fn sort_into<B: Backend, K: SortKey>(
    stream: &Stream<B>,
    keys: &impl View<B, K>,
    sorted: &mut impl ViewMut<B, K>,
    order: SortOrder,
) -> Result<()> {
    let n = keys.view().len();
    let what = format!("sort of {n} {} keys into another buffer ({order})", K::DTYPE);
    if sorted.view().len() != n {
        return Err(Error::LengthMismatch {
            what: format!("{what}: output vs keys"),
            expected: n,
            actual: sorted.view().len(),
        });
    }
    check_count(n, &what)?;
    if n <= 1 {
        return stream.copy(keys, sorted);
    }
    if let Some(items) = plan::one_tile::<B>(n) {
        let (none_in, mut none_out) = (stream.alloc::<u32>(1)?, stream.alloc::<u32>(1)?);
        let io = Io { keys_in: keys, vals_in: &none_in, keys_out: sorted, vals_out: &mut none_out };
        return sort_one_tile(stream, order, n, items, FLAG_MAP | FLAG_UNMAP, io);
    }
    let mut passes = Passes::new(stream, keys, order, false, &what)?;
    let mut temp = stream.alloc::<K>(n)?;
    let (mut dummy_in, mut dummy_out) = (stream.alloc::<u32>(1)?, stream.alloc::<u32>(1)?);
    dummy_in.fill(0)?;
    // The caller's keys -> temporary -> output -> temporary -> output.
    let io = Io { keys_in: keys, vals_in: &dummy_in, keys_out: &mut temp, vals_out: &mut dummy_out };
    passes.run(stream, 0, FLAG_MAP, io)?;
    for index in 1..4u32 {
        let flags = edge_flags(index);
        if index % 2 == 1 {
            let io = Io { keys_in: &temp, vals_in: &dummy_in, keys_out: sorted, vals_out: &mut dummy_out };
            passes.run(stream, index, flags, io)?;
        } else {
            let io = Io { keys_in: &sorted.view(), vals_in: &dummy_in, keys_out: &mut temp, vals_out: &mut dummy_out };
            passes.run(stream, index, flags, io)?;
        }
    }
    Ok(())
}

/// Sort `keys` in place and move `values` with them (a stable sort of
/// key-value pairs), on `stream`.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_kernels::sort::{sort_pairs, SortOrder};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<kiln_cpu::Cpu>::open(0)?;
/// let s = dev.stream();
/// let mut k = s.upload(&[2i32, -7, 2, 0])?;
/// let mut v = s.upload(&[10u32, 11, 12, 13])?;
/// sort_pairs(&s, &mut k, &mut v, SortOrder::Descending)?;
/// assert_eq!(k.to_vec()?, vec![2, 2, 0, -7]);
/// assert_eq!(v.to_vec()?, vec![10, 12, 13, 11]);      // equal keys keep their order
/// # Ok(()) }
/// ```
pub fn sort_pairs<B: Backend, K: SortKey>(
    stream: &Stream<B>,
    keys: &mut impl ViewMut<B, K>,
    values: &mut impl ViewMut<B, u32>,
    order: SortOrder,
) -> Result<()> {
    let n = keys.view().len();
    let what = format!("sort of {n} {} keys with values ({order})", K::DTYPE);
    if values.view().len() != n {
        return Err(Error::LengthMismatch {
            what: format!("{what}: values vs keys"),
            expected: n,
            actual: values.view().len(),
        });
    }
    check_count(n, &what)?;
    if n <= 1 {
        return Ok(());
    }
    if let Some(items) = plan::one_tile::<B>(n) {
        let (none, none_in) = (stream.alloc::<K>(1)?, stream.alloc::<u32>(1)?);
        let io = Io { keys_in: &none, vals_in: &none_in, keys_out: keys, vals_out: values };
        let flags = FLAG_MAP | FLAG_UNMAP | FLAG_VALUES | FLAG_IN_PLACE;
        return sort_one_tile(stream, order, n, items, flags, io);
    }
    let mut passes = Passes::new(stream, &keys.view(), order, true, &what)?;
    let mut temp_keys = stream.alloc::<K>(n)?;
    let mut temp_vals = stream.alloc::<u32>(n)?;
    for index in 0..4u32 {
        let flags = FLAG_VALUES | edge_flags(index);
        if index % 2 == 0 {
            let io = Io {
                keys_in: &keys.view(),
                vals_in: &values.view(),
                keys_out: &mut temp_keys,
                vals_out: &mut temp_vals,
            };
            passes.run(stream, index, flags, io)?;
        } else {
            let io = Io { keys_in: &temp_keys, vals_in: &temp_vals, keys_out: keys, vals_out: values };
            passes.run(stream, index, flags, io)?;
        }
    }
    Ok(())
}

/// `indices` = the positions of `keys` in stable sorted order (`keys[indices[0]]`
/// is the first key in `order`), on `stream`; `keys` is left as it is.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_kernels::sort::{argsort, SortOrder};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<kiln_cpu::Cpu>::open(0)?;
/// let s = dev.stream();
/// let k = s.upload(&[30u32, 10, 20, 10])?;
/// let mut idx = s.alloc::<u32>(4)?;
/// argsort(&s, &k, &mut idx, SortOrder::Ascending)?;
/// assert_eq!(idx.to_vec()?, vec![1, 3, 2, 0]);
/// # Ok(()) }
/// ```
pub fn argsort<B: Backend, K: SortKey>(
    stream: &Stream<B>,
    keys: &impl View<B, K>,
    indices: &mut impl ViewMut<B, u32>,
    order: SortOrder,
) -> Result<()> {
    let n = keys.view().len();
    let what = format!("argsort of {n} {} keys ({order})", K::DTYPE);
    if indices.view().len() != n {
        return Err(Error::LengthMismatch {
            what: format!("{what}: indices vs keys"),
            expected: n,
            actual: indices.view().len(),
        });
    }
    check_count(n, &what)?;
    if n <= 1 {
        return stream.fill(indices, 0);
    }
    if let Some(items) = plan::one_tile::<B>(n) {
        let (none_in, mut none_out) = (stream.alloc::<u32>(1)?, stream.alloc::<K>(1)?);
        let io = Io { keys_in: keys, vals_in: &none_in, keys_out: &mut none_out, vals_out: indices };
        let flags = FLAG_MAP | FLAG_VALUES | FLAG_GEN_INDEX | FLAG_NO_KEYS;
        return sort_one_tile(stream, order, n, items, flags, io);
    }
    let mut passes = Passes::new(stream, keys, order, true, &what)?;
    let (mut keys_a, mut keys_b) = (stream.alloc::<K>(n)?, stream.alloc::<K>(n)?);
    let mut vals_a = stream.alloc::<u32>(n)?;
    let mut no_keys = stream.alloc::<K>(1)?;
    // Keys: caller -> a -> b -> a -> (none written); positions: generated -> a -> caller -> a -> caller.
    let flags = FLAG_MAP | FLAG_VALUES | FLAG_GEN_INDEX;
    let io = Io { keys_in: keys, vals_in: &indices.view(), keys_out: &mut keys_a, vals_out: &mut vals_a };
    passes.run(stream, 0, flags, io)?;
    let io = Io { keys_in: &keys_a, vals_in: &vals_a, keys_out: &mut keys_b, vals_out: indices };
    passes.run(stream, 1, FLAG_VALUES, io)?;
    let io = Io { keys_in: &keys_b, vals_in: &indices.view(), keys_out: &mut keys_a, vals_out: &mut vals_a };
    passes.run(stream, 2, FLAG_VALUES, io)?;
    let io = Io { keys_in: &keys_a, vals_in: &vals_a, keys_out: &mut no_keys, vals_out: indices };
    passes.run(stream, 3, FLAG_VALUES | FLAG_NO_KEYS, io)
}
