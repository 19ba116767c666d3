//! WGSL's tile pass of a scan (fallback.wgsl on tile.wgsl): in one pass
//! by decoupled look-back with decoupled fallback, for scans of 4-byte
//! values that do not write their input (a fallback rereads it; WGSL
//! cannot take an f64 apart into the status words' halves), or after a
//! totals pass and a scan of those (reduce-then-scan) for the rest and
//! for long scans.

use std::sync::Arc;

use kiln_core::{
    Args, Backend, Buffer, BufferView, Device, Element, Language, LaunchConfig, Program, Result, Stream, View,
};

use super::{Operands, ScanKind, wgsl_header};
use crate::Number;
use crate::launch::{index_width, program};

/// Reads of an earlier tile's state before a workgroup reduces that tile
/// from the input itself (lookback.wgsl's LOOKBACK_SPIN).
const SPIN: u32 = 64;

/// How a tile of a one-pass WGSL kernel (the scan's, the compaction's:
/// fallback.wgsl on tile.wgsl) learns the sum of the tiles before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Prefix {
    /// Decoupled look-back with decoupled fallback (lookback.wgsl): one
    /// pass, one read and one write per element; the kernel binds `status`.
    LookBack,
    /// Reduce-then-scan (carried.wgsl): a first pass writes each tile's
    /// total (totals.wgsl), an exclusive scan of those gives each tile's
    /// carry, and the tile pass reads it: one more read per element, but no
    /// workgroup reads another's state; the kernel binds `carries`.
    Carried,
    /// A single tile (carried.wgsl): nothing before it.
    Alone,
}

/// How a one-pass WGSL kernel over tiles (on tile.wgsl) is built for a
/// device: elements per invocation; whether the adapter's subgroup
/// builtins are passed in (and subgroup 0 walks back alone,
/// lookback_subgroup.wgsl, where the whole workgroup does without them,
/// lookback_window.wgsl); whether subgroups scan the invocation parts
/// (parts_subgroup.wgsl, where the workgroup's tree does without them,
/// parts.wgsl); and where each tile's prefix comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TileBuild {
    pub(crate) items: usize,
    pub(crate) subgroups: bool,
    subgroup_parts: bool,
    pub(crate) prefix: Prefix,
}

impl TileBuild {
    /// The build for `device` of a kernel over `n` values of `bytes` bytes
    /// whose tiles carry segment flags (`segmented`) or not, its tiles
    /// learning their prefixes as `prefix` says ([`Prefix::Alone`] where
    /// `n` makes one tile).
    pub(crate) fn new<B: Backend>(device: &Device<B>, n: usize, bytes: usize, segmented: bool, prefix: Prefix) -> Self {
        let info = device.info();
        let subgroups = info.features.subgroups;
        // Subgroup scans add 4-byte values, in subgroups that tile the
        // workgroup (at most 64 of them: sg_totals).
        let subgroup_parts =
            subgroups && !segmented && bytes == 4 && info.limits.min_warp_size >= 4 && info.limits.warp_size <= 256;
        let most = if prefix == Prefix::Carried { CARRIED_ITEMS } else { 16 };
        let items = items(device, bytes, segmented, most);
        let prefix = if n <= 256 * items { Prefix::Alone } else { prefix };
        TileBuild { items, subgroups, subgroup_parts, prefix }
    }

    /// Tiles over `n` elements.
    pub(crate) fn tiles(self, n: usize) -> usize {
        n.div_ceil(256 * self.items)
    }

    /// Workgroups of a launch over `n` elements: one per tile, at most a
    /// grid's width (they take tiles grid-stride, or from the counter,
    /// until none is left, so any number covers them all).
    pub(crate) fn groups<B: Backend>(self, stream: &Stream<B>, n: usize) -> u32 {
        self.tiles(n).min(stream.device().info().limits.max_grid[0] as usize) as u32
    }

    /// The binding a tile pass reads its prefixes from: the look-back's
    /// `status` words, the `carries` (of WGSL type `carry`), or none.
    pub(crate) fn prefix_binding(self, carry: &'static str) -> Option<(&'static str, &'static str, bool)> {
        match self.prefix {
            Prefix::LookBack => Some(("status", "atomic<u32>", true)),
            Prefix::Carried => Some(("carries", carry, false)),
            Prefix::Alone => None,
        }
    }

    /// What the tile pass over the `n` elements of `src` reads its prefixes
    /// from: looking back, the status words (the tile counter, then two
    /// words of state per tile, zeroed: "nothing yet"); carried, the carries
    /// after the totals pass `totals` (see [`carries`](Self::carries),
    /// which `scalar` is passed to).
    pub(crate) fn prefixes<B: Backend, S: Element, C: Number>(
        self,
        stream: &Stream<B>,
        src: BufferView<'_, B, S>,
        totals: impl FnOnce() -> Arc<Program>,
        scalar: Option<S>,
    ) -> Result<Prefixes<B, C>> {
        Ok(match self.prefix {
            Prefix::LookBack => Prefixes::Status(stream.alloc_zeroed::<u32>(1 + self.tiles(src.len()) * 2)?),
            Prefix::Carried => Prefixes::Carries(self.carries(stream, &totals(), src, scalar)?),
            Prefix::Alone => Prefixes::None,
        })
    }

    /// What distinguishes this build in a program's name.
    pub(crate) fn suffix(self) -> String {
        let prefix = match self.prefix {
            Prefix::LookBack => "",
            Prefix::Carried => "_carried",
            Prefix::Alone => "_alone",
        };
        format!(
            "{}{}{}{prefix}",
            self.items,
            if self.subgroups { "_sg" } else { "" },
            if self.subgroup_parts { "p" } else { "" }
        )
    }

    /// What every module on tile.wgsl begins with after its `header`: the
    /// subgroup builtins' variables, the tile, the parts' scan and
    /// `load_tile`.
    fn tile_source(self, header: &str) -> String {
        let sg = if self.subgroups {
            "var<private> sg_lane: u32;\nvar<private> sg_size: u32;\nvar<private> sg_id: u32;\n"
        } else {
            ""
        };
        let parts = if self.subgroup_parts { include_str!("parts_subgroup.wgsl") } else { include_str!("parts.wgsl") };
        format!("{header}{sg}{}{parts}{}", include_str!("tile.wgsl"), load_tile(self.items))
    }

    /// The module: `header` (bindings and the kernel's helpers; `status`
    /// looking back, `carries` carried), the tile, how each tile learns its
    /// prefix, then `main` (the entry point, whose parameters are
    /// TILE_ARGS and whose body begins with TILE_INIT).
    pub(crate) fn source(self, header: &str, main: &str) -> String {
        // (wgpu takes subgroup operations without an `enable` once the
        // device has the feature.)
        let prefix = match self.prefix {
            Prefix::LookBack => {
                let walk = if self.subgroups {
                    include_str!("lookback_subgroup.wgsl")
                } else {
                    include_str!("lookback_window.wgsl")
                };
                format!("{}{walk}", include_str!("lookback.wgsl"))
            }
            Prefix::Carried => include_str!("carried.wgsl").replace("CARRY_AT", "carries[at]"),
            Prefix::Alone => include_str!("carried.wgsl").replace("CARRY_AT", "C(0)"),
        };
        format!("{}{prefix}{main}", self.tile_source(header))
    }

    /// The first pass of a carried build (totals.wgsl): `header` binds
    /// `src` and `totals`, declares Params and gives tile_value and
    /// flag_at.
    pub(crate) fn totals_source(self, header: &str) -> String {
        format!("{}{}{}", self.tile_source(header), tile_sum(self.items), include_str!("totals.wgsl"))
    }

    /// The defines the module needs: TILE_ARGS, the entry point's
    /// parameters (`local`, `wg` and `ng`, and the subgroup builtins where
    /// the adapter has them), and TILE_INIT, which begins its body (the
    /// subgroup variables set, then `lid`, the invocation's rank, and
    /// `tiles`, the tile count).
    pub(crate) fn define(self, program: Program) -> Program {
        let (args, init) = if self.subgroups {
            (
                ", @builtin(subgroup_invocation_id) sg_lane_in: u32, @builtin(subgroup_size) sg_size_in: u32, \
                 @builtin(subgroup_id) sg_id_in: u32",
                "sg_lane = sg_lane_in;\n    sg_size = sg_size_in;\n    sg_id = sg_id_in;\n    ",
            )
        } else {
            ("", "")
        };
        program
            .define("LOOKBACK_ITEMS", format!("{}u", self.items))
            .define("LOOKBACK_SPIN", format!("{SPIN}u"))
            .define(
                "TILE_ARGS",
                format!(
                    "@builtin(local_invocation_index) local: u32, @builtin(workgroup_id) wg: vec3<u32>, \
                     @builtin(num_workgroups) ng: vec3<u32>{args}"
                ),
            )
            .define("TILE_INIT", format!("{init}let lid = rank(local);\n    let tiles = tile_count();"))
    }

    /// Launch the totals pass `totals_prog` (built on
    /// [`totals_source`](Self::totals_source)) over the `n` elements of
    /// `src`, then scan the totals into each tile's carry (the sum of the
    /// tiles before it). `scalar` is the kernel's scalar parameter before
    /// n, if it has one.
    fn carries<B: Backend, S: Element, C: Number>(
        self,
        stream: &Stream<B>,
        totals_prog: &Program,
        src: BufferView<'_, B, S>,
        scalar: Option<S>,
    ) -> Result<Buffer<B, C>> {
        let n = src.len();
        let kernel = stream.device().kernel(totals_prog)?;
        let mut totals = stream.alloc::<C>(self.tiles(n))?;
        let mut args = Args::new().arg(src).arg(totals.view_mut());
        if let Some(v) = scalar {
            args = args.scalar(v);
        }
        let args = args.length(index_width(stream), n, totals_prog.name())?;
        // SAFETY: the kernel reads src[0..n) and writes totals[t] for each
        // of the tiles of 256 x `items` elements over n, the elements per
        // invocation it is compiled for, so its workgroup arrays fit.
        unsafe { stream.launch(&kernel, LaunchConfig::new(self.groups(stream, n), 256), args)? };
        super::scan_in_place(stream, ScanKind::Exclusive, &mut totals)?;
        Ok(totals)
    }
}

/// What a tile pass reads its prefixes from ([`TileBuild::prefixes`]),
/// bound where [`TileBuild::prefix_binding`] puts it.
pub(crate) enum Prefixes<B: Backend, C: Element> {
    Status(Buffer<B, u32>),
    Carries(Buffer<B, C>),
    None,
}

impl<B: Backend, C: Element> Prefixes<B, C> {
    /// Pass the buffer, if there is one, as the next argument.
    pub(crate) fn push<'a>(&'a mut self, args: &mut Args<'a, B>) {
        match self {
            Prefixes::Status(s) => {
                args.push(s.view_mut());
            }
            Prefixes::Carries(c) => {
                args.push(c.view());
            }
            Prefixes::None => {}
        }
    }
}

/// The segment-flag helpers of a tile kernel without segments.
pub(crate) const NO_FLAGS: &str = "fn store_flag(s: u32, f: u32) {}\nfn load_flag(s: u32) -> u32 { return 0u; }\n";

/// tile.wgsl's `load_tile` for `items` elements per invocation,
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

/// totals.wgsl's `tile_sum` for `items` elements per invocation,
/// unrolled: every load issued before the first add.
fn tile_sum(items: usize) -> String {
    let mut f = String::from("fn tile_sum(t: u32, lid: u32) -> C {\n    let base = t * TILE + lid;\n");
    for k in 0..items {
        f.push_str(&format!("    let p{k} = tile_in(base + {}u).v;\n", 256 * k));
    }
    let all: Vec<String> = (0..items).map(|k| format!("p{k}")).collect();
    f.push_str(&format!("    return {};\n}}\n", all.join(" + ")));
    f
}

/// The most elements per invocation of a carried tile pass: tiles of 2048.
/// Measured on an H200's Vulkan driver (f32, 64 Mi and 256 Mi, `benches/
/// results/h200-2026-12-03-c-bench-scan-items-*`): the scan took 254 and
/// 921 us with 8, 282 and 1063 with 16, 276 and 974 with 4; the compaction
/// 282 and 1055 with 8, 303 and 1134 with 16. A smaller tile's workgroup
/// arrays let more workgroups share a unit, whose loads and barriers then
/// overlap.
const CARRIED_ITEMS: usize = 8;

/// Elements per invocation of a kernel on tile.wgsl (its LOOKBACK_ITEMS):
/// the most of 16, 8, 4, 2, 1, up to `most`, whose workgroup arrays (the
/// tile of `bytes`-byte values, padded one slot in 32, the segment flags
/// beside them when `segmented`, the 256 invocation parts and the subgroup
/// totals) fit the device's workgroup memory.
fn items<B: Backend>(device: &Device<B>, bytes: usize, segmented: bool, most: usize) -> usize {
    let limit = device.info().limits.max_shared_mem_per_block as usize;
    let per_slot = bytes + if segmented { 4 } else { 0 };
    let need = |items: usize| {
        let tile = 256 * items;
        (tile + tile / 32) * per_slot + 256 * (bytes + 4) + 64 * bytes + 32
    };
    [16, 8, 4, 2].into_iter().find(|&i| i <= most && need(i) <= limit).unwrap_or(1)
}

/// Out-of-place scans of 4-byte values, and compactions, shorter than
/// this look back (one read and one write per element, one launch);
/// longer ones, and every scan in place or of 8-byte values, are carried
/// (a totals pass, a scan of its totals, the tile pass). Measured on an
/// H200's Vulkan driver (f32, time per scan, `benches/results/
/// h200-2026-12-02-q-*`): at 1 Mi both 19 us; at 4 Mi carried 25 us against
/// 38 looking back; at 64 Mi 296 against 401; compaction carried 19 us
/// against 24 at 1 Mi, 503 against 737 at 64 Mi. The look-back's walk, not
/// memory, sets its pace there: its tiles wait on the driver's atomic
/// loads.
pub(crate) const CARRIED_FROM: usize = 1 << 20;

/// How a scan of `n` elements of `T` runs on a `B` device in one WGSL tile
/// pass, if it does: segmented scans of 4-byte values that do not write
/// their input look back (a fallback rereads the input; WGSL cannot take
/// an f64 apart into the status words' halves); unsegmented ones look
/// back while short and are carried from [`CARRIED_FROM`] on, in place
/// at any length.
pub(super) fn prefix<B: Backend, T: Number>(n: usize, has_input: bool, segmented: bool) -> Option<Prefix> {
    if B::LANGUAGE != Language::Wgsl {
        return None;
    }
    let four = T::DTYPE.size() == 4;
    if segmented {
        (four && has_input).then_some(Prefix::LookBack)
    } else if four && has_input && n < CARRIED_FROM {
        Some(Prefix::LookBack)
    } else {
        Some(Prefix::Carried)
    }
}

fn fallback_program<T: Number>(kind: ScanKind, segmented: bool, in_place: bool, build: TileBuild) -> Arc<Program> {
    let name = format!(
        "kiln_scan_fallback_{kind}{}{}_{}_{}",
        if segmented { "_segmented" } else { "" },
        if in_place { "_inplace" } else { "" },
        build.suffix(),
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
        buffers.extend(build.prefix_binding("T"));
        buffers.push(("dst", "T", true));
        let mut header = wgsl_header(T::DTYPE, &buffers, segmented);
        header.push_str(if segmented {
            "var<workgroup> buf_f: array<u32, SLOTS>;\n\
             fn store_flag(s: u32, f: u32) { buf_f[s] = f; }\n\
             fn load_flag(s: u32) -> u32 { return buf_f[s]; }\n"
        } else {
            NO_FLAGS
        });
        header.push_str(VALUES);
        let mut program = Program::new(&name)
            .wgsl(build.source(&header, include_str!("fallback.wgsl")))
            .define("KERNEL", &name)
            .define("SCAN_MODE", format!("{}u", u8::from(kind == ScanKind::Exclusive)));
        if in_place {
            program = program.define("src", "dst");
        }
        build.define(program)
    })
}

/// A scan's tile values: its elements.
const VALUES: &str = "alias C = T;\nfn tile_value(i: u32) -> C { return src[i]; }\n";

/// The totals pass of a carried scan of `T` (totals.wgsl).
fn totals_program<T: Number>(build: TileBuild) -> Arc<Program> {
    let name = format!("kiln_scan_totals_{}_{}", build.suffix(), T::DTYPE);
    program(&name, || {
        let buffers = [("src", "T", false), ("totals", "T", true)];
        let mut header = wgsl_header(T::DTYPE, &buffers, false);
        header.push_str("struct Params {\n    n: u32,\n}\n");
        header.push_str(NO_FLAGS);
        header.push_str(VALUES);
        build.define(Program::new(&name).wgsl(build.totals_source(&header)).define("KERNEL", &name))
    })
}

/// Scan `ops` in one WGSL tile pass whose tiles learn their prefixes as
/// `prefix` says (after a totals pass and a scan of those, carried).
pub(super) fn one_pass<B: Backend, T: Number>(
    stream: &Stream<B>,
    kind: ScanKind,
    prefix: Prefix,
    ops: Operands<'_, B, T>,
) -> Result<()> {
    let n = ops.y.len();
    let device = stream.device();
    let segmented = ops.flags.is_some();
    let in_place = ops.x.is_none();
    let build = TileBuild::new(device, n, T::DTYPE.size(), segmented, prefix);
    let prog = fallback_program::<T>(kind, segmented, in_place, build);
    let kernel = device.kernel(&prog)?;
    let Operands { x, flags, y } = ops;
    let src = x.unwrap_or_else(|| y.view());
    let mut prefixes = build.prefixes::<B, T, T>(stream, src, || totals_program::<T>(build), None)?;
    let mut args = Args::new();
    if let Some(x) = x {
        args.push(x);
    }
    if let Some(f) = flags {
        args.push(f);
    }
    prefixes.push(&mut args);
    let args = args.arg(y).length(index_width(stream), n, prog.name())?;
    // SAFETY: the kernel reads src[0..n) (dst in place; and flags[0..n))
    // and writes dst[0..n), all of length n, in tiles of 256 x the
    // elements per invocation it is compiled for, so its workgroup arrays
    // fit; looking back, it reads and writes status[0..1 + 2 tiles), as
    // `status` allocated it; carried, it reads carries[t], one per tile as
    // `carries` wrote them. In place, each tile is read whole into
    // workgroup memory before any of it is written, and no other
    // workgroup reads it.
    unsafe { stream.launch(&kernel, LaunchConfig::new(build.groups(stream, n), 256), args) }
}
