//! WGSL's one-pass scan: decoupled look-back with decoupled fallback
//! (fallback.wgsl), for scans of 4-byte values that do not write their
//! input (a fallback rereads it; WGSL cannot take an f64 apart into the
//! status words' halves).

use std::sync::Arc;

use kiln_core::{Args, Backend, Buffer, Device, Language, LaunchConfig, Program, Result, Stream};

use super::{Operands, ScanKind, wgsl_header};
use crate::Number;
use crate::launch::{index_width, program};

/// Reads of an earlier tile's state before a workgroup reduces that tile
/// from the input itself (lookback.wgsl's LOOKBACK_SPIN).
const SPIN: u32 = 64;

/// How a one-pass WGSL kernel over tiles (on lookback.wgsl) is built for
/// a device: elements per invocation, and whether subgroup 0 walks back
/// alone with subgroup operations (lookback_subgroup.wgsl) or the whole
/// workgroup does (lookback_window.wgsl).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Lookback {
    pub(crate) items: usize,
    pub(crate) subgroups: bool,
}

impl Lookback {
    /// The build for `device` of a kernel whose tiles carry segment flags
    /// (`segmented`) or not.
    pub(crate) fn new<B: Backend>(device: &Device<B>, segmented: bool) -> Self {
        Lookback { items: items(device, segmented), subgroups: device.info().features.subgroups }
    }

    /// Tiles over `n` elements.
    fn tiles(self, n: usize) -> usize {
        n.div_ceil(256 * self.items)
    }

    /// What a launch over `n` elements needs: its status words (the tile
    /// counter, then two words of state per tile, zeroed: "nothing yet")
    /// and its workgroups (they take tiles from the counter until none is
    /// left, so any number covers them all).
    pub(crate) fn state<B: Backend>(self, stream: &Stream<B>, n: usize) -> Result<(Buffer<B, u32>, u32)> {
        let tiles = self.tiles(n);
        let status = stream.alloc_zeroed::<u32>(1 + tiles * 2)?;
        let groups = tiles.min(stream.device().info().limits.max_grid[0] as usize) as u32;
        Ok((status, groups))
    }

    /// What distinguishes this build in a program's name.
    pub(crate) fn suffix(self) -> String {
        format!("{}{}", self.items, if self.subgroups { "_sg" } else { "" })
    }

    /// The module: `header` (bindings and the kernel's helpers), the
    /// look-back, `load_tile`, then `main` (the entry point, whose
    /// parameters end with SG_ARGS and whose body begins with SG_INIT).
    pub(crate) fn source(self, header: &str, main: &str) -> String {
        // (wgpu takes subgroup operations without an `enable` once the
        // device has the feature.)
        let walk =
            if self.subgroups { include_str!("lookback_subgroup.wgsl") } else { include_str!("lookback_window.wgsl") };
        format!("{header}{}{walk}{}{main}", include_str!("lookback.wgsl"), load_tile(self.items))
    }

    /// The defines the module needs.
    pub(crate) fn define(self, program: Program) -> Program {
        let (args, init) = if self.subgroups {
            (
                ", @builtin(subgroup_invocation_id) sg_lane_in: u32, @builtin(subgroup_size) sg_size_in: u32, \
                 @builtin(subgroup_id) sg_id_in: u32",
                "sg_lane = sg_lane_in;\n    sg_size = sg_size_in;\n    sg_id = sg_id_in;",
            )
        } else {
            ("", "")
        };
        program
            .define("LOOKBACK_ITEMS", format!("{}u", self.items))
            .define("LOOKBACK_SPIN", format!("{SPIN}u"))
            .define("SG_ARGS", args)
            .define("SG_INIT", init)
    }
}

/// lookback.wgsl's `load_tile` for `items` elements per invocation,
/// unrolled: every load issued before the first store.
fn load_tile(items: usize) -> String {
    let mut f = String::from("fn load_tile(t: u32, lid: u32) {\n    let base = t * TILE + lid;\n");
    for k in 0..items {
        f.push_str(&format!("    let p{k} = tile_in(base + {}u);\n", 256 * k));
    }
    for k in 0..items {
        f.push_str(&format!(
            "    buf_v[slot(lid + {0}u)] = p{k}.v;\n    store_flag(slot(lid + {0}u), p{k}.f);\n",
            256 * k
        ));
    }
    f.push_str("}\n");
    f
}

/// Elements per invocation of a kernel on lookback.wgsl (its
/// LOOKBACK_ITEMS): the most of 8, 4, 2, 1 whose workgroup arrays (the tile
/// of 4-byte values, padded one word in 32, the segment flags beside them
/// when `segmented`, and the 256 invocation parts) fit the device's
/// workgroup memory.
fn items<B: Backend>(device: &Device<B>, segmented: bool) -> usize {
    let limit = device.info().limits.max_shared_mem_per_block as usize;
    let per_slot = if segmented { 8 } else { 4 };
    let bytes = |items: usize| {
        let tile = 256 * items;
        (tile + tile / 32) * per_slot + 256 * 8 + 32
    };
    [8, 4, 2].into_iter().find(|&i| bytes(i) <= limit).unwrap_or(1)
}

/// Whether a scan of `T` runs here in one pass on a `B` device: WGSL,
/// 4-byte values, not in place.
pub(super) fn runs<B: Backend, T: Number>(has_input: bool) -> bool {
    B::LANGUAGE == Language::Wgsl && T::DTYPE.size() == 4 && has_input
}

fn fallback_program<T: Number>(kind: ScanKind, segmented: bool, lookback: Lookback) -> Arc<Program> {
    let name = format!(
        "kiln_scan_fallback_{kind}{}_{}_{}",
        if segmented { "_segmented" } else { "" },
        lookback.suffix(),
        T::DTYPE
    );
    program(&name, || {
        let mut buffers = vec![("src", "T", false)];
        if segmented {
            buffers.push(("flags", "u32", false));
        }
        buffers.push(("status", "atomic<u32>", true));
        buffers.push(("dst", "T", true));
        let mut header = wgsl_header(T::DTYPE, &buffers, segmented);
        header.push_str(if segmented {
            "var<workgroup> buf_f: array<u32, SLOTS>;\n\
             fn store_flag(s: u32, f: u32) { buf_f[s] = f; }\n\
             fn load_flag(s: u32) -> u32 { return buf_f[s]; }\n"
        } else {
            "fn store_flag(s: u32, f: u32) {}\nfn load_flag(s: u32) -> u32 { return 0u; }\n"
        });
        header.push_str("alias C = T;\nfn tile_value(i: u32) -> C { return src[i]; }\n");
        let program = Program::new(&name)
            .wgsl(lookback.source(&header, include_str!("fallback.wgsl")))
            .define("KERNEL", &name)
            .define("SCAN_MODE", format!("{}u", u8::from(kind == ScanKind::Exclusive)));
        lookback.define(program)
    })
}

/// Scan `ops` (not in place: `ops.x` is present) in one WGSL pass.
pub(super) fn one_pass<B: Backend, T: Number>(
    stream: &Stream<B>,
    kind: ScanKind,
    ops: Operands<'_, B, T>,
) -> Result<()> {
    let n = ops.y.len();
    let device = stream.device();
    let segmented = ops.flags.is_some();
    let lookback = Lookback::new(device, segmented);
    let prog = fallback_program::<T>(kind, segmented, lookback);
    let kernel = device.kernel(&prog)?;
    let (mut status, groups) = lookback.state(stream, n)?;
    let Operands { x, flags, y } = ops;
    let mut args = Args::new();
    if let Some(x) = x {
        args.push(x);
    }
    if let Some(f) = flags {
        args.push(f);
    }
    let args = args.arg(status.view_mut()).arg(y).length(index_width(stream), n, prog.name())?;
    // SAFETY: the kernel reads src[0..n) (and flags[0..n)), writes
    // dst[0..n), all of length n, and status[0..1 + 2 tiles), as
    // allocated by `state` for `lookback`'s tiles over n, the elements per
    // invocation it is compiled for, so its workgroup arrays fit.
    unsafe { stream.launch(&kernel, LaunchConfig::new(groups, 256), args) }
}
