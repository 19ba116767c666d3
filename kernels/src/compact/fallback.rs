//! WGSL's compaction: one tile pass (compact/fallback.wgsl on
//! scan/tile.wgsl) whose tiles learn how many earlier tiles kept by the
//! scan's decoupled look-back with decoupled fallback over the counts, or,
//! for long inputs, from carries: a totals pass counts each tile, and an
//! exclusive scan of the counts gives each tile's start.

use std::sync::Arc;

use kiln_core::{Args, Backend, BufferView, BufferViewMut, Element, LaunchConfig, Program, Result, Stream};

use super::{Predicate, wgsl_header};
use crate::Number;
use crate::launch::{index_width, program};
use crate::scan::fallback::{CARRIED_FROM, NO_FLAGS, Prefix, TileBuild};

/// Where the tile pass of a compaction finds what it keeps and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tile {
    /// The tile in workgroup memory holds counts (1 for a kept element),
    /// as the look-back's fallback, which sums a tile, needs; a kept value
    /// is read again from memory.
    Counts,
    /// The tile holds the 4-byte values' bits, and the predicate is asked
    /// of them there (carried, or alone: nothing sums the tile).
    Values,
}

/// The tile header of a compaction: `buffers`, the predicate, the tile's
/// values as `tile` says, and `kept_slot(s)`, whether the element in slot
/// s is kept.
fn tile_header<T: Number>(pred: Predicate<T>, buffers: &[(&str, &str, bool)], tile: Tile) -> String {
    let values = match tile {
        Tile::Counts => {
            "fn tile_value(i: u32) -> C { return select(0u, 1u, keep(src[i])); }\n\
             fn kept_slot(s: u32) -> bool { return buf_v[s] != 0u; }\n"
        }
        Tile::Values => {
            "fn tile_value(i: u32) -> C { return bitcast<u32>(src[i]); }\n\
             fn kept_slot(s: u32) -> bool { return keep(bitcast<T>(buf_v[s])); }\n"
        }
    };
    format!(
        "{}alias C = u32;\n{values}fn flag_at(i: u32) -> u32 {{ return 0u; }}\n{NO_FLAGS}",
        wgsl_header(pred, buffers)
    )
}

fn fallback_program<T: Number>(pred: Predicate<T>, indices: bool, build: TileBuild) -> Arc<Program> {
    let name = format!(
        "kiln_copy_if_fallback_{}{}_{}_{}",
        pred.name(),
        if indices { "_indices" } else { "" },
        build.suffix(),
        T::DTYPE
    );
    program(&name, || {
        let out = if indices { "u32" } else { "T" };
        let mut buffers = vec![("src", "T", false), ("dst", out, true), ("count", "u32", true)];
        buffers.extend(build.prefix_binding("u32"));
        let four = T::DTYPE.size() == 4;
        let tile = if four && build.prefix != Prefix::LookBack { Tile::Values } else { Tile::Counts };
        // What out_values gives: indices, values' bits from the tile, or
        // values from memory.
        let outs = if indices || tile == Tile::Values { "u32" } else { "T" };
        let staged = indices || four;
        let stage = format!(
            "const STAGED: bool = {staged};\n\
             fn stage_in(v: {outs}) -> u32 {{ return {}; }}\n\
             fn stage_out(w: u32) -> {out} {{ return {}; }}\n\
             fn out_direct(v: {outs}) -> {out} {{ return bitcast<{out}>(v); }}\n",
            if staged { "bitcast<u32>(v)" } else { "0u" },
            if staged { format!("bitcast<{out}>(w)") } else { format!("{out}(0)") },
        );
        let header =
            format!("{}{stage}{}", tile_header(pred, &buffers, tile), out_values(build.items, indices, tile, outs));
        let program =
            Program::new(&name).wgsl(build.source(&header, include_str!("fallback.wgsl"))).define("KERNEL", &name);
        build.define(program)
    })
}

/// The totals pass of a carried compaction: how many each tile keeps.
fn totals_program<T: Number>(pred: Predicate<T>, build: TileBuild) -> Arc<Program> {
    let name = format!("kiln_copy_if_totals_{}_{}_{}", pred.name(), build.suffix(), T::DTYPE);
    program(&name, || {
        let buffers = [("src", "T", false), ("totals", "u32", true)];
        let header =
            format!("{}struct Params {{\n    value: T,\n    n: u32,\n}}\n", tile_header(pred, &buffers, Tile::Counts));
        build.define(Program::new(&name).wgsl(build.totals_source(&header)).define("KERNEL", &name))
    })
}

/// `out_values(first, lid)`: what the `items` elements from `first` (the
/// ones invocation `lid` folds) write if kept, as `ty`: their indices, their
/// values' bits from the tile in workgroup memory, or their values from
/// memory, every load issued before the first is used (one at a time, each
/// kept element waited for its load). An element past the end reads the
/// last one instead (it is not kept).
fn out_values(items: usize, indices: bool, tile: Tile, ty: &str) -> String {
    let mut f =
        format!("fn out_values(first: u32, lid: u32) -> array<{ty}, {items}> {{\n    let last = params.n - 1u;\n");
    for k in 0..items {
        let value = if indices {
            format!("first + {k}u")
        } else if tile == Tile::Values {
            format!("buf_v[slot(lid * ITEMS + {k}u)]")
        } else {
            format!("src[min(first + {k}u, last)]")
        };
        f.push_str(&format!("    let v{k} = {value};\n"));
    }
    let all: Vec<String> = (0..items).map(|k| format!("v{k}")).collect();
    f.push_str(&format!("    return array<{ty}, {items}>({});\n}}\n", all.join(", ")));
    f
}

/// Compact `x` into `out` and `count` in one WGSL pass.
pub(super) fn one_pass<B: Backend, T: Number, O: Element>(
    stream: &Stream<B>,
    x: BufferView<'_, B, T>,
    pred: Predicate<T>,
    out: BufferViewMut<'_, B, O>,
    count: BufferViewMut<'_, B, u64>,
    indices: bool,
) -> Result<()> {
    let n = x.len();
    let device = stream.device();
    let prefix = if n < CARRIED_FROM { Prefix::LookBack } else { Prefix::Carried };
    let build = TileBuild::new(device, n, 4, false, prefix);
    let prog = fallback_program::<T>(pred, indices, build);
    let kernel = device.kernel(&prog)?;
    let mut prefixes =
        build.prefixes::<B, T, u32>(stream, x, || totals_program::<T>(pred, build), Some(pred.value()))?;
    let mut args = Args::new().arg(x).arg(out).arg(count);
    prefixes.push(&mut args);
    let args = args.scalar(pred.value()).length(index_width(stream), n, prog.name())?;
    // SAFETY: the kernel reads x[0..n), writes out[0..count) with count <=
    // n <= out's length (checked by the caller) and the two words of the
    // u64 count, in tiles of 256 x the elements per invocation it is
    // compiled for, so its workgroup arrays fit; looking back, it reads and
    // writes status[0..1 + 2 tiles), as `status` allocated it; carried, it
    // reads carries[t], one per tile as `carries` wrote them.
    unsafe { stream.launch(&kernel, LaunchConfig::new(build.groups(stream, n), 256), args) }
}
