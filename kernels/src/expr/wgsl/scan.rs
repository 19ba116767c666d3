//! WGSL for user scans, in passes, as WGSL promises no forward progress
//! between workgroups (kiln's long scans take the same route on wgpu): the
//! fold of each tile (256 invocations x [`items`] elements), the fold of
//! everything before each tile from those (the same two passes over the
//! tile sums, recursively, in place), then each tile scanned from its
//! carry. A tile is loaded and stored coalesced, through workgroup memory,
//! each invocation folding consecutive elements. Every step keeps the
//! elements' order: a tree over adjacent ranges for a tile's fold, a
//! Hillis-Steele scan over its invocations' totals.

use crate::expr::check::Role;
use crate::expr::fold::{Fold, ScanPass};
use crate::expr::ty::Vt;
use crate::expr::wgsl::fold::{fold_parts, module};
use crate::expr::wgsl::{Helpers, interface, w_type};
use crate::scan::ScanKind;
use kiln_core::DType;

/// Elements per invocation of a tile for accumulators of `acc`: 8, or 4
/// for 8-byte ones, so that the tile in workgroup memory (padded one slot
/// in 32) and the invocations' totals stay within the 16 KiB every adapter
/// gives.
pub(crate) fn items(acc: DType) -> usize {
    if acc.size() > 4 { 4 } else { 8 }
}

/// Elements per tile: 256 invocations x [`items`].
pub(crate) fn tile(acc: DType) -> usize {
    256 * items(acc)
}

/// Whether `pass` maps the user's elements (else it reads accumulator values).
fn maps(pass: ScanPass) -> bool {
    matches!(pass, ScanPass::Sums | ScanPass::Tiles(_))
}

/// The bindings and `params` of `pass`, in the order of its launch's
/// arguments: the user's arguments, raw lengths and the element count when
/// it maps; then the pass's own buffers and, for the last passes, whether
/// carries are given (`kx_carry`, 0 for a single tile).
fn declarations(fold: &Fold, pass: ScanPass) -> String {
    let acc = w_type(Vt::Num(fold.acc));
    let mut buffers = Vec::new();
    let mut fields = Vec::new();
    if maps(pass) {
        for (p, role) in fold.roles.iter().enumerate() {
            let t = w_type(Vt::Num(fold.map.dtypes[p]));
            match role {
                Role::Scalar => fields.push(format!("a{p}: {t},")),
                _ => buffers.push(format!("var<storage, read> a{p}: array<{t}>")),
            }
        }
        for (p, role) in fold.roles.iter().enumerate() {
            if *role == Role::Raw {
                fields.push(format!("kx_len{p}: u32,"));
            }
        }
    }
    fields.push("kx_n: u32,".into());
    match pass {
        ScanPass::Sums => buffers.push(format!("var<storage, read_write> kx_part: array<{acc}>")),
        ScanPass::LevelSums => {
            buffers.push(format!("var<storage, read> kx_src: array<{acc}>"));
            buffers.push(format!("var<storage, read_write> kx_part: array<{acc}>"));
        }
        ScanPass::Tiles(_) => {
            buffers.push(format!("var<storage, read> kx_carries: array<{acc}>"));
            buffers.push(format!("var<storage, read_write> kx_dst: array<{acc}>"));
            fields.push("kx_carry: u32,".into());
        }
        ScanPass::LevelTiles => {
            buffers.push(format!("var<storage, read> kx_carries: array<{acc}>"));
            buffers.push(format!("var<storage, read_write> kx_dst: array<{acc}>"));
            fields.push("kx_carry: u32,".into());
        }
        ScanPass::One(_) => {}
    }
    interface(&buffers, &fields)
}

/// The identity, the combining expression and `kx_elem(i)`: element `i`
/// mapped, or read from the level being scanned.
fn parts(fold: &Fold, pass: ScanPass, h: &mut Helpers) -> String {
    let acc = w_type(Vt::Num(fold.acc));
    let mut out = fold_parts(fold, maps(pass).then_some("kx_elem"), h);
    match pass {
        ScanPass::Sums | ScanPass::Tiles(_) => {}
        ScanPass::LevelSums => out.push_str(&format!("fn kx_elem(i: u32) -> {acc} {{ return kx_src[i]; }}\n")),
        _ => out.push_str(&format!("fn kx_elem(i: u32) -> {acc} {{ return kx_dst[i]; }}\n")),
    }
    out.push_str(&format!("var<workgroup> kx_sh: array<{acc}, 256>;\n"));
    let items = items(fold.acc);
    out.push_str(&format!(
        "const KX_ITEMS: u32 = {items}u;\nconst KX_TILE: u32 = {}u;\n\
         var<workgroup> kx_tile: array<{acc}, {}>;\n\
         fn kx_slot(i: u32) -> u32 {{ return i + i / 32u; }}\n",
        256 * items,
        256 * items + 256 * items / 32
    ));
    // Tile t into kx_tile, coalesced, the identity past the end; unrolled,
    // so that every load is issued before the first store.
    out.push_str("fn kx_load(t: u32, lid: u32) {\n    let base = t * KX_TILE + lid;\n");
    for k in 0..items {
        out.push_str(&format!(
            "    var v{k} = kx_identity();\n    if (base + {0}u < params.kx_n) {{ v{k} = kx_elem(base + {0}u); }}\n",
            256 * k
        ));
    }
    for k in 0..items {
        out.push_str(&format!("    kx_tile[kx_slot(lid + {}u)] = v{k};\n", 256 * k));
    }
    out.push_str("}\n");
    out
}

/// The tile fold: `kx_part[t]` for each tile `t`.
const SUMS: &str = "    let tiles = params.kx_n / KX_TILE + select(0u, 1u, (params.kx_n % KX_TILE) != 0u);
    for (var t = wid.x; t < tiles; t += groups.x) {
        kx_load(t, lid);
        workgroupBarrier();
        var v = kx_tile[kx_slot(lid * KX_ITEMS)];
        for (var k = 1u; k < KX_ITEMS; k += 1u) {
            v = kx_combine(v, kx_tile[kx_slot(lid * KX_ITEMS + k)]);
        }
        kx_sh[lid] = v;
        workgroupBarrier();
        // A tree over adjacent ranges, so the order is kept.
        for (var s = 1u; s < 256u; s <<= 1u) {
            if ((lid & (2u * s - 1u)) == 0u) { kx_sh[lid] = kx_combine(kx_sh[lid], kx_sh[lid + s]); }
            workgroupBarrier();
        }
        if (lid == 0u) { kx_part[t] = kx_sh[0]; }
        workgroupBarrier();
    }";

/// Each tile from its carry; `STORE` writes `acc` (inclusive) or `before`.
/// In place (a level), the whole tile is in workgroup memory before any of
/// it is written.
const TILES: &str = "    let tiles = params.kx_n / KX_TILE + select(0u, 1u, (params.kx_n % KX_TILE) != 0u);
    for (var t = wid.x; t < tiles; t += groups.x) {
        kx_load(t, lid);
        workgroupBarrier();
        var xs: array<ACC, KX_ITEMS>;
        var v = kx_identity();
        for (var k = 0u; k < KX_ITEMS; k += 1u) {
            xs[k] = kx_tile[kx_slot(lid * KX_ITEMS + k)];
            v = kx_combine(v, xs[k]);
        }
        kx_sh[lid] = v;
        workgroupBarrier();
        // Hillis-Steele inclusive scan of the 256 invocation totals.
        for (var o = 1u; o < 256u; o <<= 1u) {
            var nv = kx_sh[lid];
            if (lid >= o) { nv = kx_combine(kx_sh[lid - o], nv); }
            workgroupBarrier();
            kx_sh[lid] = nv;
            workgroupBarrier();
        }
        var acc = kx_identity();
        if (params.kx_carry != 0u) { acc = kx_carries[t]; }
        if (lid > 0u) { acc = kx_combine(acc, kx_sh[lid - 1u]); }
        for (var k = 0u; k < KX_ITEMS; k += 1u) {
            let before = acc;
            acc = kx_combine(acc, xs[k]);
            kx_tile[kx_slot(lid * KX_ITEMS + k)] = STORE;
        }
        workgroupBarrier();
        for (var k = 0u; k < KX_ITEMS; k += 1u) {
            let j = k * 256u + lid;
            let i = t * KX_TILE + j;
            if (i < params.kx_n) { kx_dst[i] = kx_tile[kx_slot(j)]; }
        }
        workgroupBarrier();
    }";

/// The WGSL source of `pass` of `fold`, its entry point `{name}_{pass}`.
pub(crate) fn scan(name: &str, fold: &Fold, pass: ScanPass) -> String {
    let mut out = module(declarations(fold, pass), |h| parts(fold, pass, h));
    let acc = w_type(Vt::Num(fold.acc));
    let body = match pass {
        ScanPass::Sums | ScanPass::LevelSums => SUMS.to_string(),
        ScanPass::Tiles(ScanKind::Inclusive) => TILES.replace("ACC", acc).replace("STORE", "acc"),
        _ => TILES.replace("ACC", acc).replace("STORE", "before"),
    };
    out.push_str(&format!(
        "@compute @workgroup_size(block_x, block_y, block_z)\nfn {name}_{}(@builtin(local_invocation_index) lid: u32, \
         @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {{\n{body}\n}}\n",
        pass.name()
    ));
    out
}
