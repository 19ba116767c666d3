//! Scans (prefix sums): inclusive and exclusive, of any length, in place or
//! not, and segmented by a flag array (Thrust's `inclusive_scan`,
//! `exclusive_scan` and `inclusive_scan_by_key`; NumPy's `cumsum`).
//!
//! # Semantics, the same on every backend
//! - Types: `i32`, `u32`, `f32`, `f64`, `f16` and `bf16`. The 16-bit floats
//!   accumulate in `f32`: each prefix is the `f32` scan's of the widened
//!   values, rounded once to the input's type (a prefix past its range is
//!   infinite).
//! - Inclusive: `y[i] = x[0] + ... + x[i]`; exclusive: `y[i] = x[0] + ... +
//!   x[i - 1]`, so `y[0] = 0`.
//! - Segmented: a nonzero `flags[i]` starts a new segment at `i`, where the
//!   sums restart: inclusive `y[i] = x[s] + ... + x[i]` for the segment's
//!   start `s`; exclusive gives 0 at each start.
//! - `i32` and `u32` wrap: the results are exact modulo 2^32.
//! - Floats follow IEEE (a NaN makes every later sum of its segment NaN).
//!   Each backend adds in its own order, so output `i` agrees with the exact
//!   prefix to within a few `eps * log2(n) * (|x[0]| + ... + |x[i]|)`, not
//!   bit for bit (the CPU accumulates `f32` in f64 and `f64` with
//!   compensation, so it is the closest).
//!
//! # How
//! CUDA: one pass, decoupled look-back (Merrill & Garland 2016). Each block
//! scans a tile of 8192 four-byte (4096 eight-byte) elements held in
//! registers, loaded and stored as 16-byte vectors through a
//! shared-memory transpose, and learns the sum of all earlier tiles from
//! their published aggregates and prefixes (a 4-byte value travels with its
//! state in one 64-bit word, so each look-back step is one L2 round trip):
//! memory-bound at one read and one write per element. WGSL promises no
//! forward progress between workgroups (`Features::forward_progress`), so
//! a workgroup must never wait on another without bound. Its scans run on
//! tiles of up to 4096 elements (2048 carried), loaded and stored coalesced through
//! workgroup memory, the invocations' parts scanned by subgroup operations
//! where the adapter has them. A tile learns the sum of the tiles before
//! it in one of two ways. Short 4-byte scans that do not write their input
//! (below 1 Mi elements), and segmented ones, take one pass with decoupled
//! look-back and decoupled fallback (Smith, Levien and Owens, SPAA 2025: a
//! workgroup that finds an earlier tile's state missing after a few reads
//! reduces that tile from the input itself), the walk back done by one
//! subgroup where the adapter has subgroup operations (by the whole
//! workgroup, 256 tiles a step, where not). Long ones, scans in place and
//! `f64` scans (WGSL cannot take an f64's bits apart) are carried
//! (reduce-then-scan): a pass writes each tile's total, an exclusive scan
//! of those (recursively) gives each tile's carry, and the tile pass reads
//! it; one more read per element, but no workgroup waits on another, which
//! on NVIDIA's Vulkan driver, whose atomic loads are slow, is faster from 1
//! Mi elements on. Segmented `f64` scans and segmented scans in place run
//! in three passes over tiles of 1024 (tile sums, a scan of those,
//! recursively, then each tile from its carry). The CPU scans chunks in parallel in one pass over
//! memory: each chunk's sum as it is read, then, once the prefix entering
//! it is known, the chunk from cache (segmented scans: two passes).
//!
//! # Examples
//! ```
//! use kiln_core::Device;
//! use kiln_cpu::Cpu;
//! use kiln_kernels::scan::{scan, ScanKind};
//! # fn main() -> kiln_core::Result<()> {
//! let dev = Device::<Cpu>::open(0)?;
//! let s = dev.stream();
//! let x = s.upload(&[1u32, 2, 3, 4])?;
//! let mut y = s.alloc::<u32>(4)?;
//! scan(&s, ScanKind::Inclusive, &x, &mut y)?;
//! assert_eq!(y.to_vec()?, vec![1, 3, 6, 10]);
//! scan(&s, ScanKind::Exclusive, &x, &mut y)?;
//! assert_eq!(y.to_vec()?, vec![0, 1, 3, 6]);
//! # Ok(()) }
//! ```

pub(crate) mod cpu;
#[cfg(target_arch = "x86_64")]
mod cpu_f32;
pub(crate) mod cpu_pass;
pub(crate) mod fallback;
pub(crate) mod plan;
pub(crate) mod prefix;

use std::sync::Arc;

use kiln_core::{
    Args, Backend, BufferView, BufferViewMut, DType, Error, HostFn, LaunchConfig, Program, Result, Stream, View,
    ViewMut,
};

use crate::Number;
use crate::launch::{check_dtype, cuda_source, index_width, program, wgsl_preamble};
use crate::reduce::check_numeric;
use crate::widen::{check_widened, is_half, narrow, widen};
use plan::{CUDA_MIN_BLOCKS, CUDA_VECTORS, SCAN_BLOCK, WGSL_TILE, cuda_items};

/// Whether a scan includes the element itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScanKind {
    /// `y[i] = x[0] + ... + x[i]`.
    Inclusive,
    /// `y[i] = x[0] + ... + x[i - 1]` (`y[0] = 0`).
    Exclusive,
}

impl ScanKind {
    /// Both kinds.
    pub const ALL: [ScanKind; 2] = [ScanKind::Inclusive, ScanKind::Exclusive];

    /// Lower-case name ("inclusive").
    pub const fn name(self) -> &'static str {
        match self {
            ScanKind::Inclusive => "inclusive",
            ScanKind::Exclusive => "exclusive",
        }
    }
}

impl std::fmt::Display for ScanKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The single-pass building blocks (look-back), for kernels that scan.
pub(crate) const LOOKBACK_CUH: &str = include_str!("lookback.cuh");

fn host<T: Number>(kind: ScanKind, segmented: bool, in_place: bool) -> HostFn {
    match (kind == ScanKind::Exclusive, segmented, in_place) {
        (false, false, false) => cpu::scan::<T, false, false, false>,
        (false, false, true) => cpu::scan::<T, false, false, true>,
        (false, true, false) => cpu::scan::<T, false, true, false>,
        (false, true, true) => cpu::scan::<T, false, true, true>,
        (true, false, false) => cpu::scan::<T, true, false, false>,
        (true, false, true) => cpu::scan::<T, true, false, true>,
        (true, true, false) => cpu::scan::<T, true, true, false>,
        (true, true, true) => cpu::scan::<T, true, true, true>,
    }
}

/// The one-pass program: CUDA's look-back, and the CPU's host fn.
fn single_pass_program<T: Number>(kind: ScanKind, segmented: bool, in_place: bool) -> Arc<Program> {
    let name = format!(
        "kiln_scan_{kind}{}{}_{}",
        if segmented { "_segmented" } else { "" },
        if in_place { "_inplace" } else { "" },
        T::DTYPE
    );
    program(&name, || {
        let mut p = Program::new(&name)
            .cuda(cuda_source(T::DTYPE, &format!("{LOOKBACK_CUH}\n{}", include_str!("kernel.cu"))))
            .host(host::<T>(kind, segmented, in_place))
            .define("KERNEL", &name)
            .define("KILN_ITEMS", cuda_items(T::DTYPE))
            .define("KILN_SCAN_VPL", CUDA_VECTORS)
            .define("KILN_SCAN_MIN_BLOCKS", CUDA_MIN_BLOCKS)
            .define("EXCLUSIVE", u8::from(kind == ScanKind::Exclusive));
        if segmented {
            p = p.define("SEGMENTED", 1);
        }
        if in_place {
            p = p.define("IN_PLACE", 1);
        }
        p
    })
}

/// The operands of one scan: `x` (absent in place), the segment flags, `y`.
struct Operands<'a, B: Backend, T: Number> {
    x: Option<BufferView<'a, B, T>>,
    flags: Option<BufferView<'a, B, u32>>,
    y: BufferViewMut<'a, B, T>,
}

fn run<B: Backend, T: Number>(stream: &Stream<B>, kind: ScanKind, ops: Operands<'_, B, T>) -> Result<()> {
    if is_half(T::DTYPE) {
        return half(stream, kind, ops);
    }
    check_numeric::<B, T>(&format!("{kind} scan"))?;
    check_dtype(stream, T::DTYPE, &format!("{kind} scan"))?;
    if ops.y.is_empty() {
        return Ok(());
    }
    let one_pass = single_pass_program::<T>(kind, ops.flags.is_some(), ops.x.is_none());
    if plan::runs_one_pass(stream.device(), &one_pass) {
        single_pass(stream, kind, &one_pass, ops)
    } else if let Some(prefix) = fallback::prefix::<B, T>(ops.y.len(), ops.x.is_some(), ops.flags.is_some()) {
        fallback::one_pass(stream, kind, prefix, ops)
    } else {
        let mode = if kind == ScanKind::Exclusive { Mode::Exclusive } else { Mode::Inclusive };
        multi_pass(stream, mode, ops)
    }
}

/// A scan of 16-bit floats: widened to `f32` (exactly), scanned by the
/// `f32` plan into a second `f32` buffer (out of place, which every backend
/// scans in one pass), each prefix rounded once to `T`: 20 bytes moved per
/// element where a one-pass 16-bit scan would move 4, for sums as accurate
/// as `f32` ones.
fn half<B: Backend, T: Number>(stream: &Stream<B>, kind: ScanKind, mut ops: Operands<'_, B, T>) -> Result<()> {
    check_widened::<B>(stream, T::DTYPE, &format!("{kind} scan"))?;
    if ops.y.is_empty() {
        return Ok(());
    }
    let wide = match ops.x {
        Some(x) => widen(stream, x)?,
        None => widen(stream, ops.y.view())?,
    };
    let mut sums = stream.alloc::<f32>(wide.len())?;
    run(stream, kind, Operands { x: Some(wide.view()), flags: ops.flags, y: sums.view_mut() })?;
    narrow(stream, sums.view(), ops.y.view_mut())
}

fn single_pass<B: Backend, T: Number>(
    stream: &Stream<B>,
    kind: ScanKind,
    prog: &Program,
    ops: Operands<'_, B, T>,
) -> Result<()> {
    let n = ops.y.len();
    let tiles = plan::one_pass_tiles::<B>(n, T::DTYPE);
    let grid = u32::try_from(tiles)
        .map_err(|_| Error::invalid(format!("{kind} scan of {n} elements"), "more tiles than a grid can hold"))?;
    let kernel = stream.device().kernel(prog)?;
    // The look-back state: status words and the tile counter zeroed; 4-byte
    // values travel inside the status words, wider ones in aggs and incls
    // (uninitialised).
    let mut status = stream.alloc_zeroed::<u64>(tiles + 1)?;
    let spill = if T::DTYPE.size() == 4 { 1 } else { tiles };
    let mut aggs = stream.alloc::<T>(spill)?;
    let mut incls = stream.alloc::<T>(spill)?;
    let mut args = Args::new();
    match ops.x {
        Some(x) => {
            args.push(x);
            if let Some(f) = ops.flags {
                args.push(f);
            }
            args.push(ops.y);
        }
        None => {
            args.push(ops.y);
            if let Some(f) = ops.flags {
                args.push(f);
            }
        }
    }
    let args = args.arg(status.view_mut()).arg(aggs.view_mut()).arg(incls.view_mut());
    let args = args.length(index_width(stream), n, prog.name())?;
    // SAFETY: block b scans tile b of x[0..n) (and flags[0..n)) into
    // y[0..n), all of length n; it writes status[b] and status[tiles] (the
    // counter), and, for 8-byte T only, aggs[b] and incls[b], sized for
    // `tiles` then.
    unsafe { stream.launch(&kernel, LaunchConfig::new(grid, SCAN_BLOCK), args) }
}

/// What the last WGSL pass writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Inclusive = 0,
    Exclusive = 1,
    /// The sum before each element, segment starts included: the carries
    /// of a level of tile sums.
    RawExclusive = 2,
}

/// What the WGSL tile passes (sums.wgsl, kernel.wgsl) share.
const TILES_WGSL: &str = include_str!("tiles.wgsl");

/// The WGSL bindings and `flag_at(i)`, which the passes call.
fn wgsl_header(dtype: DType, buffers: &[(&str, &str, bool)], segmented: bool) -> String {
    let mut h = wgsl_preamble(dtype, buffers);
    h.push_str(if segmented {
        "fn flag_at(i: u32) -> u32 { return select(0u, 1u, flags[i] != 0u); }\n"
    } else {
        "fn flag_at(i: u32) -> u32 { return 0u; }\n"
    });
    h
}

fn sums_program<T: Number>(segmented: bool) -> Arc<Program> {
    let name = format!("kiln_scan_sums{}_{}", if segmented { "_segmented" } else { "" }, T::DTYPE);
    program(&name, || {
        let mut buffers = vec![("src", "T", false)];
        if segmented {
            buffers.push(("flags", "u32", false));
        }
        buffers.push(("sums", "T", true));
        if segmented {
            buffers.push(("sum_flags", "u32", true));
        }
        let mut header = wgsl_header(T::DTYPE, &buffers, segmented);
        header.push_str(if segmented {
            "fn put_sum(t: u32, v: T, f: u32) { sums[t] = v; sum_flags[t] = f; }\n"
        } else {
            "fn put_sum(t: u32, v: T, f: u32) { sums[t] = v; }\n"
        });
        Program::new(&name).wgsl(format!("{header}{TILES_WGSL}{}", include_str!("sums.wgsl"))).define("KERNEL", &name)
    })
}

fn tiles_program<T: Number>(mode: Mode, segmented: bool, in_place: bool) -> Arc<Program> {
    let name = format!(
        "kiln_scan_tiles{}{}{}_{}",
        mode as u8,
        if segmented { "_segmented" } else { "" },
        if in_place { "_inplace" } else { "" },
        T::DTYPE
    );
    program(&name, || {
        let mut buffers = Vec::new();
        if !in_place {
            buffers.push(("src", "T", false));
        }
        if segmented {
            buffers.push(("flags", "u32", false));
        }
        buffers.push(("carries", "T", false));
        buffers.push(("dst", "T", true));
        let header = wgsl_header(T::DTYPE, &buffers, segmented);
        let mut p = Program::new(&name)
            .wgsl(format!("{header}{TILES_WGSL}{}", include_str!("kernel.wgsl")))
            .define("KERNEL", &name)
            .define("SCAN_MODE", format!("{}u", mode as u8));
        if in_place {
            p = p.define("src", "dst");
        }
        p
    })
}

/// The WGSL scan: tile sums, their raw exclusive scan (recursively, in
/// place), then each tile from its carry.
fn multi_pass<B: Backend, T: Number>(stream: &Stream<B>, mode: Mode, ops: Operands<'_, B, T>) -> Result<()> {
    let n = ops.y.len();
    let tiles = n.div_ceil(WGSL_TILE);
    let groups = tiles.min(stream.device().info().limits.max_grid[0] as usize) as u32;
    let segmented = ops.flags.is_some();
    let Operands { x, flags, y } = ops;
    let carries = if tiles == 1 {
        stream.alloc_zeroed::<T>(1)?
    } else {
        let mut sums = stream.alloc::<T>(tiles)?;
        let mut sum_flags = if segmented { Some(stream.alloc::<u32>(tiles)?) } else { None };
        let prog = sums_program::<T>(segmented);
        let kernel = stream.device().kernel(&prog)?;
        let mut args = Args::new().arg(x.unwrap_or_else(|| y.view()));
        if let Some(f) = flags {
            args.push(f);
        }
        args.push(sums.view_mut());
        if let Some(sf) = sum_flags.as_mut() {
            args.push(sf.view_mut());
        }
        let args = args.length(index_width(stream), n, prog.name())?;
        // SAFETY: the kernel reads src[0..n) (and flags[0..n)) and writes
        // sums[t] (and sum_flags[t]) for each of the `tiles` tiles.
        unsafe { stream.launch(&kernel, LaunchConfig::new(groups, 256), args)? };
        let level = Operands { x: None, flags: sum_flags.as_ref().map(|b| b.view()), y: sums.view_mut() };
        multi_pass(stream, Mode::RawExclusive, level)?;
        drop(sum_flags);
        sums
    };
    let prog = tiles_program::<T>(mode, segmented, x.is_none());
    let kernel = stream.device().kernel(&prog)?;
    let mut args = Args::new();
    if let Some(x) = x {
        args.push(x);
    }
    if let Some(f) = flags {
        args.push(f);
    }
    let args = args.arg(carries.view()).arg(y).length(index_width(stream), n, prog.name())?;
    // SAFETY: tile t reads src[t * 1024..) (and flags) up to n and
    // carries[t], `carries` holding one element per tile, and writes the
    // same range of dst, all of length n.
    unsafe { stream.launch(&kernel, LaunchConfig::new(groups, 256), args) }
}

fn same_len(what: String, expected: usize, actual: usize) -> Result<()> {
    if expected == actual { Ok(()) } else { Err(Error::LengthMismatch { what, expected, actual }) }
}

/// Scan `x` into `y` (same length) on `stream`; returns at once.
///
/// See the [module documentation](self) for the semantics of each kind,
/// integer wrapping and float rounding.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::scan::{scan, ScanKind};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[0.5f64, 0.25, 2.0])?;
/// let mut y = s.alloc::<f64>(3)?;
/// scan(&s, ScanKind::Inclusive, &x, &mut y)?;
/// assert_eq!(y.to_vec()?, vec![0.5, 0.75, 2.75]);
/// assert!(scan(&s, ScanKind::Inclusive, &x, &mut s.alloc::<f64>(2)?).is_err());
/// # Ok(()) }
/// ```
pub fn scan<B: Backend, T: Number>(
    stream: &Stream<B>,
    kind: ScanKind,
    x: &impl View<B, T>,
    y: &mut impl ViewMut<B, T>,
) -> Result<()> {
    let x = x.view();
    same_len(format!("{kind} scan: output y vs input x"), x.len(), y.view().len())?;
    run(stream, kind, Operands { x: Some(x), flags: None, y: y.view_mut() })
}

/// Scan `x` in place on `stream`; returns at once.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::scan::{scan_in_place, ScanKind};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let mut x = s.upload(&[i32::MAX, 1, 5])?;
/// scan_in_place(&s, ScanKind::Inclusive, &mut x)?;
/// assert_eq!(x.to_vec()?, vec![i32::MAX, i32::MIN, i32::MIN + 5]);   // wraps
/// # Ok(()) }
/// ```
pub fn scan_in_place<B: Backend, T: Number>(
    stream: &Stream<B>,
    kind: ScanKind,
    x: &mut impl ViewMut<B, T>,
) -> Result<()> {
    run(stream, kind, Operands { x: None, flags: None, y: x.view_mut() })
}

/// Scan `x` into `y` in segments on `stream`: a nonzero `flags[i]` starts a
/// new segment at `i`, where the sums restart (an exclusive scan gives 0
/// there). `x`, `flags` and `y` have the same length. Returns at once.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::scan::{segmented_scan, ScanKind};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[1i32, 2, 3, 4, 5])?;
/// let flags = s.upload(&[0u32, 0, 1, 0, 7])?;      // segments [1, 2] [3, 4] [5]
/// let mut y = s.alloc::<i32>(5)?;
/// segmented_scan(&s, ScanKind::Inclusive, &x, &flags, &mut y)?;
/// assert_eq!(y.to_vec()?, vec![1, 3, 3, 7, 5]);
/// segmented_scan(&s, ScanKind::Exclusive, &x, &flags, &mut y)?;
/// assert_eq!(y.to_vec()?, vec![0, 1, 0, 3, 0]);
/// # Ok(()) }
/// ```
pub fn segmented_scan<B: Backend, T: Number>(
    stream: &Stream<B>,
    kind: ScanKind,
    x: &impl View<B, T>,
    flags: &impl View<B, u32>,
    y: &mut impl ViewMut<B, T>,
) -> Result<()> {
    let (x, flags) = (x.view(), flags.view());
    same_len(format!("segmented {kind} scan: flags vs input x"), x.len(), flags.len())?;
    same_len(format!("segmented {kind} scan: output y vs input x"), x.len(), y.view().len())?;
    run(stream, kind, Operands { x: Some(x), flags: Some(flags), y: y.view_mut() })
}
