//! The onesweep passes (Adinets & Merrill 2022): `onesweep.cu` on CUDA,
//! `onesweep.wgsl` (with decoupled fallback) on wgpu adapters with subgroups.
//!
//! One kernel counts the four digit histograms in one read of the keys;
//! then each pass is one kernel that ranks a tile, learns its digits' output
//! starts by decoupled look-back over the tiles before it, and scatters. A
//! pass moves 8 bytes per key (16 with values), where the three-phase sort
//! reads the keys twice.

use std::sync::Arc;

use kiln_core::{Args, Backend, Buffer, Error, Kernel, LaunchConfig, Program, Result, Stream, View, ViewMut};

use super::plan::{Build, ONE_TILE_THREADS};
use super::program::{KEYS_CUH, pass_wgsl, sort_wgsl};
use super::types::{FLAG_VALUES, Io, MAX_KEYS};
use super::{SortKey, SortOrder};
use crate::launch::{cuda_source, index_width, program};

/// Threads per block of the digit-count kernel (its KILN_COUNT_THREADS).
const COUNT_THREADS: u32 = 256;
/// Keys one digit-count thread takes per step: two 16-byte vectors (CUDA),
/// four words (WGSL).
const COUNT_KEYS_PER_STEP: usize = 8;
/// Digit-count blocks per multiprocessor: 1024 threads with 16 KB of
/// shared memory per block, enough loads in flight to stream the keys.
const COUNT_BLOCKS_PER_SM: usize = 4;
/// Digit-count workgroups where the device does not say how many
/// multiprocessors it has (wgpu).
const COUNT_BLOCKS_UNKNOWN: usize = 1024;
/// Reads of an earlier tile's status word before a WGSL workgroup counts
/// that tile's digits itself (onesweep.wgsl's SORT_SPIN).
const SPIN: u32 = 64;
/// The digit-count kernel (onesweep.cu's STEP 0, onesweep_count.wgsl).
fn count_program<K: SortKey>(order: SortOrder) -> Arc<Program> {
    let name = format!("kiln_radix_digit_counts_{}_{}", K::DTYPE, order.name());
    program(&name, || {
        Program::new(&name)
            .cuda(cuda_source(K::DTYPE, &format!("{KEYS_CUH}\n{}", include_str!("onesweep.cu"))))
            .wgsl(sort_wgsl(include_str!("onesweep_count.wgsl")))
            .define("KERNEL", &name)
            .define("STEP", 0)
            .define("VALUES", 0)
            .define("KEY_TYPE", K::KEY_TYPE)
            .define("DESCENDING", u8::from(order == SortOrder::Descending))
    })
}

/// The pass kernel of `build`, keys only or moving values.
fn pass_program<K: SortKey>(order: SortOrder, values: bool, build: Build) -> Arc<Program> {
    let what = if values { "pairs" } else { "keys" };
    let base = format!("kiln_radix_onesweep_{what}_{}_{}", K::DTYPE, order.name());
    let name = match build {
        Build::Cuda { items, min_blocks } => format!("{base}_{items}x{min_blocks}"),
        Build::Wgsl { items, subs } => format!("{base}_wgsl{items}x{subs}"),
    };
    program(&name, || {
        let p = Program::new(&name)
            .define("KERNEL", &name)
            .define("KEY_TYPE", K::KEY_TYPE)
            .define("DESCENDING", u8::from(order == SortOrder::Descending));
        match build {
            Build::Cuda { items, min_blocks } => p
                .cuda(cuda_source(K::DTYPE, &format!("{KEYS_CUH}\n{}", include_str!("onesweep.cu"))))
                .define("STEP", 1)
                .define("KILN_THREADS", build.threads())
                .define("KILN_ITEMS", items)
                .define("KILN_MIN_BLOCKS", min_blocks)
                .define("VALUES", u8::from(values)),
            Build::Wgsl { items, subs } => {
                let unrolled = |body: &str| (0..items).map(|i| body.replace('#', &format!("{i}u"))).collect::<String>();
                let (load_vals, place_vals, store_vals) = if values {
                    (
                        unrolled("val[#] = load_val(base, first, #, count);\n"),
                        unrolled("items[place[#]] = val[#];\n"),
                        unrolled(
                            "if (# * 256u + me < count) { vals_out[to_global[digit[#]] + # * 256u + me] = \
                             items[# * 256u + me]; }\n",
                        ),
                    )
                } else {
                    Default::default()
                };
                p.wgsl(pass_wgsl(include_str!("onesweep.wgsl")))
                    .define("SORT_ITEMS", format!("{items}u"))
                    .define("SORT_SUBS", format!("{subs}u"))
                    .define("SORT_SPIN", format!("{SPIN}u"))
                    .define("SORT_VALUES", values)
                    .define("SORT_LOAD_KEYS", unrolled("key[#] = load_key(base, first, #, count);\n"))
                    .define("SORT_RANK_KEYS", unrolled("place[#] = rank_key(key[#], upto);\n"))
                    .define(
                        "SORT_PLACE_KEYS",
                        unrolled("place[#] = slot_of(key[#], place[#]);\nitems[place[#]] = key[#];\n"),
                    )
                    .define("SORT_STORE_KEYS", unrolled("digit[#] = store_key(# * 256u + me, count);\n"))
                    .define("SORT_LOAD_VALS", load_vals)
                    .define("SORT_PLACE_VALS", place_vals)
                    .define("SORT_STORE_VALS", store_vals)
            }
        }
    })
}

/// The one-tile sort (onesweep.cu's STEP 2): `items` keys per thread of
/// [`ONE_TILE_THREADS`], keys only or moving values.
fn one_tile_program<K: SortKey>(order: SortOrder, values: bool, items: u32) -> Arc<Program> {
    let what = if values { "pairs" } else { "keys" };
    let name = format!("kiln_radix_one_tile_{what}_{}_{}_{items}", K::DTYPE, order.name());
    program(&name, || {
        Program::new(&name)
            .cuda(cuda_source(K::DTYPE, &format!("{KEYS_CUH}\n{}", include_str!("onesweep.cu"))))
            .define("KERNEL", &name)
            .define("STEP", 2)
            .define("KILN_THREADS", ONE_TILE_THREADS)
            .define("KILN_ITEMS", items)
            .define("KILN_MIN_BLOCKS", 1)
            .define("VALUES", u8::from(values))
            .define("KEY_TYPE", K::KEY_TYPE)
            .define("DESCENDING", u8::from(order == SortOrder::Descending))
    })
}

/// The whole sort of `n` keys in one launch of one block (n at most
/// [`ONE_TILE_THREADS`] x `items`, from [`one_tile`](super::plan::one_tile);
/// `Err` for more, which the block could not hold): keys_in to keys_out,
/// or in place in keys_out (and vals_out) with
/// [`FLAG_IN_PLACE`](super::types::FLAG_IN_PLACE), with the other flags of
/// a pass (map on reading, unmap on writing, values, positions as values,
/// no keys written).
pub(super) fn sort_one_tile<B: Backend, K: SortKey>(
    stream: &Stream<B>,
    order: SortOrder,
    n: usize,
    items: u32,
    flags: u32,
    io: Io<'_, impl View<B, K>, impl View<B, u32>, impl ViewMut<B, K>, impl ViewMut<B, u32>>,
) -> Result<()> {
    let tile = ONE_TILE_THREADS as usize * items as usize;
    if n > tile {
        return Err(Error::invalid(
            format!("one-tile sort of {n} keys"),
            format!("a block of {ONE_TILE_THREADS} threads x {items} keys holds {tile}"),
        ));
    }
    let values = flags & FLAG_VALUES != 0;
    let kernel = stream.device().kernel(&one_tile_program::<K>(order, values, items))?;
    let args = Args::new()
        .arg(io.keys_in.view())
        .arg(io.vals_in.view())
        .arg(io.keys_out.view_mut())
        .arg(io.vals_out.view_mut())
        .length(index_width(stream), n, kernel.name())?
        .arg(flags);
    // SAFETY: one block of ONE_TILE_THREADS, the shape the kernel was
    // compiled for with `items` keys a thread, holding all n keys (checked
    // above). It reads
    // positions [0, n) of keys_in and vals_in (of keys_out and vals_out
    // with FLAG_IN_PLACE; values only with FLAG_VALUES and not
    // FLAG_GEN_INDEX) and writes positions [0, n) of keys_out (not with
    // FLAG_NO_KEYS) and vals_out (with FLAG_VALUES); the callers pass n-key
    // buffers for every one of those and placeholders for the others.
    unsafe { stream.launch(&kernel, LaunchConfig::new(1, ONE_TILE_THREADS), args) }
}

/// The pass kernel and the state its four launches share.
pub(super) struct Onesweep<B: Backend> {
    pass: Kernel<B>,
    /// Whether `pass` was compiled to move values.
    values: bool,
    /// The digit histograms of the keys: `counts[pass * 256 + digit]`.
    counts: Buffer<B, u32>,
    /// Per pass, one look-back word per tile and digit; then the four
    /// passes' tile counters. Zeroed once, before the first pass.
    status: Buffer<B, u32>,
    tiles: u32,
    n: usize,
    build: Build,
}

impl<B: Backend> Onesweep<B> {
    /// Compile the kernels of `build` and count the digits of `keys`, the
    /// first pass's input (1 < n <= [`MAX_KEYS`]); passes that move values
    /// need `values`.
    pub(super) fn new<K: SortKey>(
        stream: &Stream<B>,
        keys: &impl View<B, K>,
        order: SortOrder,
        values: bool,
        build: Build,
    ) -> Result<Self> {
        let keys = keys.view();
        let n = keys.len();
        debug_assert!(n <= MAX_KEYS);
        let device = stream.device();
        let digit_counts = device.kernel(&count_program::<K>(order))?;
        let pass = device.kernel(&pass_program::<K>(order, values, build))?;
        let tiles = n.div_ceil(build.tile());
        let mut counts = stream.alloc_zeroed::<u32>(4 * 256)?;
        let status = stream.alloc_zeroed::<u32>(4 * tiles * 256 + 4)?;
        let info = device.info();
        let per_device = match info.compute_units as usize {
            0 => COUNT_BLOCKS_UNKNOWN,
            units => units * COUNT_BLOCKS_PER_SM,
        };
        let most = per_device.clamp(1, info.limits.max_grid[0] as usize);
        let blocks = n.div_ceil(COUNT_THREADS as usize * COUNT_KEYS_PER_STEP).clamp(1, most);
        let name = digit_counts.name();
        let args = Args::new().arg(keys).arg(&mut counts).length(index_width(stream), n, name)?;
        // SAFETY: the kernel reads keys[0..n) and adds into counts[0..1024),
        // both of those lengths; the grid loops over any n.
        unsafe { stream.launch(&digit_counts, LaunchConfig::new(blocks as u32, COUNT_THREADS), args)? };
        Ok(Onesweep { pass, values, counts, status, tiles: tiles as u32, n, build })
    }

    /// Run pass `index` (bits 8 index..8 index + 8) with `flags`: one launch.
    pub(super) fn run_pass<K: SortKey>(
        &mut self,
        stream: &Stream<B>,
        index: u32,
        flags: u32,
        io: Io<'_, impl View<B, K>, impl View<B, u32>, impl ViewMut<B, K>, impl ViewMut<B, u32>>,
    ) -> Result<()> {
        debug_assert!(self.values || flags & FLAG_VALUES == 0, "a keys-only pass kernel cannot move values");
        let args = Args::new()
            .arg(io.keys_in.view())
            .arg(io.vals_in.view())
            .arg(io.keys_out.view_mut())
            .arg(io.vals_out.view_mut())
            .arg(&self.counts)
            .arg(&mut self.status)
            .length(index_width(stream), self.n, self.pass.name())?
            .arg(self.tiles)
            .arg(index)
            .arg(flags);
        // CUDA: one block per tile. WGSL: workgroups take tiles from the
        // counter until none is left, so any number covers them all.
        let groups = match self.build {
            Build::Cuda { .. } => self.tiles,
            Build::Wgsl { .. } => self.tiles.min(stream.device().info().limits.max_grid[0]),
        };
        // SAFETY: a block takes tile t (a counter in status, each t < tiles
        // taken once) and reads keys_in and (when moving values) vals_in at
        // t * tile.. up to n (and, WGSL, the full tiles before t), writes
        // keys_out and vals_out at positions below n (only with the flags
        // that say so; the others may be one-element placeholders), reads
        // counts[0..1024) and writes status[0..4 * tiles * 256 + 4); every
        // key and value range holds n elements, checked by the callers; the
        // block shape and the tile are those `build` compiled the kernel for.
        unsafe { stream.launch(&self.pass, LaunchConfig::new(groups, self.build.threads()), args) }
    }
}
