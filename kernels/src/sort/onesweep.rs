//! The CUDA sort's passes: onesweep (Adinets & Merrill 2022; `onesweep.cu`).
//!
//! One kernel counts the four digit histograms in one read of the keys;
//! then each pass is one kernel that ranks a tile, learns its digits' output
//! starts by decoupled look-back over the tiles before it, and scatters. A
//! pass moves 8 bytes per key (16 with values), where the three-phase sort
//! reads the keys twice.

use std::sync::Arc;

use kiln_core::{Args, Backend, Buffer, Kernel, LaunchConfig, Program, Result, Stream, View, ViewMut};

use super::launch::Io;
use super::program::{FLAG_VALUES, KEYS_CUH};
use super::{SortKey, SortOrder};
use crate::launch::{cuda_source, index_width, program};

/// Threads per block of the pass kernel (its KILN_THREADS).
const PASS_THREADS: u32 = 384;
/// Keys per tile of the pass kernel: 384 threads x 20 keys (its KILN_TILE).
const TILE: usize = 384 * 20;
/// Threads per block of the digit-count kernel (its KILN_COUNT_THREADS).
const COUNT_THREADS: u32 = 256;
/// Keys one digit-count thread takes per step: two 16-byte vectors.
const COUNT_KEYS_PER_STEP: usize = 8;
/// Digit-count blocks per multiprocessor: 1024 threads with 16 KB of
/// shared memory per block, enough loads in flight to stream the keys.
const COUNT_BLOCKS_PER_SM: usize = 4;
/// The most keys onesweep sorts: its status words count in 30 bits.
pub(super) const MAX_KEYS: usize = (1 << 30) - 1;

/// STEP 0 (digit counts; `values` ignored) or STEP 1 (a pass) of onesweep.cu.
fn onesweep_program<K: SortKey>(step: u8, order: SortOrder, values: bool) -> Arc<Program> {
    let what = match (step, values) {
        (0, _) => "digit_counts",
        (_, false) => "onesweep_keys",
        (_, true) => "onesweep_pairs",
    };
    let name = format!("kiln_radix_{what}_{}_{}", K::DTYPE, order.name());
    program(&name, || {
        Program::new(&name)
            .cuda(cuda_source(K::DTYPE, &format!("{KEYS_CUH}\n{}", include_str!("onesweep.cu"))))
            .define("KERNEL", &name)
            .define("STEP", step)
            .define("VALUES", u8::from(values))
            .define("KEY_TYPE", K::KEY_TYPE)
            .define("DESCENDING", u8::from(order == SortOrder::Descending))
    })
}

/// The pass program (STEP 1), keys only or moving values.
pub(super) fn pass_program<K: SortKey>(order: SortOrder, values: bool) -> Arc<Program> {
    onesweep_program::<K>(1, order, values)
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
}

impl<B: Backend> Onesweep<B> {
    /// Compile the kernels and count the digits of `keys`, the first pass's
    /// input (1 < n <= [`MAX_KEYS`]); passes that move values need `values`.
    pub(super) fn new<K: SortKey>(
        stream: &Stream<B>,
        keys: &impl View<B, K>,
        order: SortOrder,
        values: bool,
    ) -> Result<Self> {
        let keys = keys.view();
        let n = keys.len();
        debug_assert!(n <= MAX_KEYS);
        let device = stream.device();
        let digit_counts = device.kernel(&onesweep_program::<K>(0, order, false))?;
        let pass = device.kernel(&pass_program::<K>(order, values))?;
        let tiles = n.div_ceil(TILE);
        let mut counts = stream.alloc_zeroed::<u32>(4 * 256)?;
        let status = stream.alloc_zeroed::<u32>(4 * tiles * 256 + 4)?;
        let info = device.info();
        let most = (info.compute_units as usize * COUNT_BLOCKS_PER_SM).clamp(1, info.limits.max_grid[0] as usize);
        let blocks = n.div_ceil(COUNT_THREADS as usize * COUNT_KEYS_PER_STEP).clamp(1, most);
        let name = digit_counts.name();
        let args = Args::new().arg(keys).arg(&mut counts).length(index_width(stream), n, name)?;
        // SAFETY: the kernel reads keys[0..n) and adds into counts[0..1024),
        // both of those lengths; the grid loops over any n.
        unsafe { stream.launch(&digit_counts, LaunchConfig::new(blocks as u32, COUNT_THREADS), args)? };
        Ok(Onesweep { pass, values, counts, status, tiles: tiles as u32, n })
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
        // SAFETY: block b takes tile t (a counter in status, each t < tiles
        // taken once, the grid being `tiles` blocks) and reads keys_in and
        // (when moving values) vals_in at t * TILE.. up to n, writes keys_out
        // and vals_out at positions below n (only with the flags that say
        // so; the others may be one-element placeholders), reads counts[0..
        // 1024) and writes status[0..4 * tiles * 256 + 4); every key and
        // value range holds n elements, checked by the callers.
        unsafe { stream.launch(&self.pass, LaunchConfig::new(self.tiles, PASS_THREADS), args) }
    }
}
