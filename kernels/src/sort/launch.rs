//! The sort's passes: compiling their kernels, their scratch memory, and
//! their launches with the SAFETY notes.

use kiln_core::{Args, Backend, Buffer, Error, Kernel, LaunchConfig, Result, Stream, View, ViewMut};

use super::onesweep::Onesweep;
use super::plan::{Build, THREADS, three_phase_tile};
use super::program::phase_program;
use super::types::Io;
use super::{SortKey, SortOrder};
use crate::launch::index_width;

/// The three compiled phases of one key type and order.
pub(super) struct Phases<B: Backend> {
    upsweep: Kernel<B>,
    scan: Kernel<B>,
    downsweep: Kernel<B>,
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
pub(super) struct Scratch<B: Backend> {
    hist: Buffer<B, u32>,
    totals: Buffer<B, u32>,
    tiles: u32,
    n: usize,
}

impl<B: Backend> Scratch<B> {
    fn new(stream: &Stream<B>, n: usize, what: &str) -> Result<Self> {
        let tile = three_phase_tile::<B>(n);
        let tiles = n.div_ceil(tile);
        let tiles = u32::try_from(tiles)
            .map_err(|_| Error::invalid(what, format!("{tiles} tiles of {tile} keys exceed 32-bit counters")))?;
        Ok(Scratch { hist: stream.alloc(256 * tiles as usize)?, totals: stream.alloc(256)?, tiles, n })
    }
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
        let args = args.length(index_width(stream), scratch.n, kernel.name())?.arg(tiles).arg(8 * index).arg(flags);
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
pub(super) enum Passes<B: Backend> {
    /// Three kernels per pass (kernel.cu, kernel.wgsl, cpu.rs).
    ThreePhase(Phases<B>, Scratch<B>),
    /// One kernel per pass after one digit count (onesweep.cu, onesweep.wgsl).
    Onesweep(Onesweep<B>),
}

impl<B: Backend> Passes<B> {
    /// Ready to sort `keys` (the first pass's input; more than one key),
    /// moving values with them when `values`.
    pub(super) fn new<K: SortKey>(
        stream: &Stream<B>,
        keys: &impl View<B, K>,
        order: SortOrder,
        values: bool,
        what: &str,
    ) -> Result<Self> {
        let n = keys.view().len();
        if let Some(build) = Build::for_device(stream.device(), n, values) {
            return Ok(Passes::Onesweep(Onesweep::new(stream, keys, order, values, build)?));
        }
        Ok(Passes::ThreePhase(Phases::compile::<K>(stream, order)?, Scratch::new(stream, n, what)?))
    }

    /// Run pass `index` (digit `index`: bits 8 index..8 index + 8) with `flags`.
    pub(super) fn run<K: SortKey>(
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
