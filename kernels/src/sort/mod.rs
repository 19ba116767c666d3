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
//! CUDA (up to 2^30 - 1 keys): onesweep (Adinets & Merrill 2022, CUB's
//! `DeviceRadixSort`). One kernel counts all four digit histograms in one
//! read of the keys; then each pass is one kernel in which a block ranks a
//! tile of 7680 keys, learns where each digit's run goes from the tiles
//! before it (decoupled look-back) and scatters: 8 bytes moved per key and
//! pass (16 with values), plus 4 per key for the counts. WGSL has no
//! forward-progress guarantee between workgroups, so it (and the CPU, and
//! CUDA past 2^30 - 1 keys) runs each pass in three kernels: per-tile digit
//! histograms, an exclusive scan of the counts (per digit, over tiles), and
//! a stable scatter: 12 bytes per key and pass (20 with values).
//!
//! Scratch memory, allocated on the stream for each call: a second array of
//! keys (and of values; argsort takes two of keys and one of positions),
//! and on CUDA `4 x 256 x ceil(n / 7680)` look-back words (4 bytes each:
//! about 0.53 bytes per key), elsewhere `256 x ceil(n / tile)` counters.

mod cpu;
mod onesweep;

use std::sync::Arc;

use kiln_core::{
    Args, Backend, BackendKind, Buffer, Element, Error, Kernel, LaunchConfig, Program, Result, Stream, View, ViewMut,
};

use crate::launch::{cuda_source, program, push_len};

/// Keys per tile of the three-phase kernels on CUDA (256 threads x 16 keys).
const CUDA_TILE: usize = 4096;
/// Keys per tile on WGSL (one per invocation).
const WGSL_TILE: usize = 256;
/// Keys per tile on the CPU.
pub(crate) const CPU_TILE: usize = 4096;
/// Threads per block of every phase.
const THREADS: u32 = 256;

pub(crate) const FLAG_MAP: u32 = 1;
pub(crate) const FLAG_UNMAP: u32 = 2;
pub(crate) const FLAG_VALUES: u32 = 4;
pub(crate) const FLAG_GEN_INDEX: u32 = 8;
pub(crate) const FLAG_NO_KEYS: u32 = 16;

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
    /// `KEY_KIND` of the kernels: 0 u32, 1 i32, 2 f32.
    #[doc(hidden)]
    const KIND: u32;
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
    const KIND: u32 = 0;
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
    const KIND: u32 = 1;
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
    const KIND: u32 = 2;
    fn raw(self) -> u32 {
        self.to_bits()
    }
    fn from_raw(bits: u32) -> f32 {
        f32::from_bits(bits)
    }
    fn map(raw: u32) -> u32 {
        let raw = if raw & 0x7fff_ffff > 0x7f80_0000 { 0x7fc0_0000 } else { raw };
        if raw & 0x8000_0000 != 0 {
            !raw
        } else {
            raw | 0x8000_0000
        }
    }
    fn unmap(pattern: u32) -> u32 {
        if pattern & 0x8000_0000 != 0 {
            pattern & 0x7fff_ffff
        } else {
            !pattern
        }
    }
}

/// kiln_map and kiln_unmap, which both CUDA sorts start with.
const KEYS_CUH: &str = include_str!("keys.cuh");

/// The three compiled phases of one key type and order.
struct Phases<B: Backend> {
    upsweep: Kernel<B>,
    scan: Kernel<B>,
    downsweep: Kernel<B>,
}

fn phase_program<K: SortKey>(phase: u8, order: SortOrder) -> Arc<Program> {
    let entry = ["UPSWEEP", "SCAN", "DOWNSWEEP"][phase as usize];
    let name = format!("kiln_radix_{}_{}_{}", entry.to_ascii_lowercase(), K::DTYPE, order.name());
    program(&name, || {
        let host = match (phase, order) {
            (0, SortOrder::Ascending) => cpu::upsweep::<K, false>,
            (0, SortOrder::Descending) => cpu::upsweep::<K, true>,
            (1, _) => cpu::scan,
            (_, SortOrder::Ascending) => cpu::downsweep::<K, false>,
            (_, SortOrder::Descending) => cpu::downsweep::<K, true>,
        };
        Program::new(&name)
            .cuda(cuda_source(K::DTYPE, &format!("{KEYS_CUH}\n{}", include_str!("kernel.cu"))))
            .wgsl(include_str!("kernel.wgsl"))
            .host(host)
            .define("KERNEL", &name)
            .define(entry, &name)
            .define("PHASE", phase)
            .define("KEY_KIND", K::KIND)
            .define("DESCENDING", u8::from(order == SortOrder::Descending))
    })
}

impl<B: Backend> Phases<B> {
    fn compile<K: SortKey>(stream: &Stream<B>, order: SortOrder) -> Result<Self> {
        let device = stream.device();
        Ok(Phases {
            upsweep: device.kernel(&phase_program::<K>(0, order))?,
            scan: device.kernel(&phase_program::<K>(1, order))?,
            downsweep: device.kernel(&phase_program::<K>(2, order))?,
        })
    }
}

/// The counters shared by the passes of one sort.
struct Scratch<B: Backend> {
    hist: Buffer<B, u32>,
    totals: Buffer<B, u32>,
    tiles: u32,
    n: usize,
}

impl<B: Backend> Scratch<B> {
    fn new(stream: &Stream<B>, n: usize, what: &str) -> Result<Self> {
        let tile = match B::KIND {
            BackendKind::Cuda => CUDA_TILE,
            BackendKind::Wgpu => WGSL_TILE,
            BackendKind::Cpu => CPU_TILE,
        };
        let tiles = n.div_ceil(tile);
        let tiles = u32::try_from(tiles)
            .map_err(|_| Error::invalid(what, format!("{tiles} tiles of {tile} keys exceed 32-bit counters")))?;
        Ok(Scratch { hist: stream.alloc(256 * tiles as usize)?, totals: stream.alloc(256)?, tiles, n })
    }
}

/// The buffers one pass reads and writes.
struct Io<'r, KI, VI, KO, VO> {
    keys_in: &'r KI,
    vals_in: &'r VI,
    keys_out: &'r mut KO,
    vals_out: &'r mut VO,
}

/// Run pass `index` (digit `index`: bits 8 index..8 index + 8) with `flags`: its three kernels.
fn run_pass<B: Backend, K: SortKey>(
    stream: &Stream<B>,
    phases: &Phases<B>,
    scratch: &mut Scratch<B>,
    index: u32,
    flags: u32,
    io: Io<'_, impl View<B, K>, impl View<B, u32>, impl ViewMut<B, K>, impl ViewMut<B, u32>>,
) -> Result<()> {
    let max = stream.device().info().limits.max_grid[0];
    let tiles = scratch.tiles;
    let grid = |blocks: u32| LaunchConfig::new(blocks.min(max).max(1), THREADS);
    let steps = [(&phases.upsweep, grid(tiles)), (&phases.scan, grid(256)), (&phases.downsweep, grid(tiles))];
    for (kernel, config) in steps {
        let args = Args::new()
            .arg(io.keys_in.view())
            .arg(io.vals_in.view())
            .arg(io.keys_out.view_mut())
            .arg(io.vals_out.view_mut())
            .arg(&mut scratch.hist)
            .arg(&mut scratch.totals);
        let args = push_len(args, scratch.n, kernel.name())?.arg(tiles).arg(8 * index).arg(flags);
        // SAFETY: every phase reads keys_in[0..n) (and vals_in[0..n) when
        // moving values), writes keys_out[0..n) and vals_out[0..n) (only
        // with the flags that say so; the others may be one-element
        // placeholders), and hist[0..256 tiles) and totals[0..256); every
        // key and value range holds n elements, checked by the callers.
        unsafe { stream.launch(kernel, config, args)? };
    }
    Ok(())
}

/// The kernels and scratch state of one sort: how its four passes run.
enum Passes<B: Backend> {
    /// Three kernels per pass (kernel.cu, kernel.wgsl, cpu.rs).
    ThreePhase(Phases<B>, Scratch<B>),
    /// One kernel per pass after one digit count (onesweep.cu).
    Onesweep(onesweep::Onesweep<B>),
}

impl<B: Backend> Passes<B> {
    /// Ready to sort `keys` (the first pass's input; more than one key),
    /// moving values with them when `values`.
    fn new<K: SortKey>(
        stream: &Stream<B>,
        keys: &impl View<B, K>,
        order: SortOrder,
        values: bool,
        what: &str,
    ) -> Result<Self> {
        let n = keys.view().len();
        if B::KIND == BackendKind::Cuda && n <= onesweep::MAX_KEYS {
            return Ok(Passes::Onesweep(onesweep::Onesweep::new(stream, keys, order, values)?));
        }
        Ok(Passes::ThreePhase(Phases::compile::<K>(stream, order)?, Scratch::new(stream, n, what)?))
    }

    /// Run pass `index` (digit `index`: bits 8 index..8 index + 8) with `flags`.
    fn run<K: SortKey>(
        &mut self,
        stream: &Stream<B>,
        index: u32,
        flags: u32,
        io: Io<'_, impl View<B, K>, impl View<B, u32>, impl ViewMut<B, K>, impl ViewMut<B, u32>>,
    ) -> Result<()> {
        match self {
            Passes::ThreePhase(phases, scratch) => run_pass(stream, phases, scratch, index, flags, io),
            Passes::Onesweep(onesweep) => onesweep.run_pass(stream, index, flags, io),
        }
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
