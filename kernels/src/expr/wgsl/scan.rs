//! WGSL for user scans, in passes, as WGSL promises no forward progress
//! between workgroups (kiln's scan takes the same route on wgpu): the fold
//! of each tile of 1024 elements (256 invocations x 4), the fold of
//! everything before each tile from those (the same two passes over the
//! tile sums, recursively, in place), then each tile scanned from its
//! carry. Every step keeps the elements' order: a tree over adjacent ranges
//! for a tile's fold, a Hillis-Steele scan over its invocations' totals.

use crate::expr::check::Role;
use crate::expr::fold::{Fold, ScanPass};
use crate::expr::ty::Vt;
use crate::expr::wgsl::fold::{fold_parts, module};
use crate::expr::wgsl::{Helpers, interface, w_type};
use crate::scan::ScanKind;

/// Elements per tile: 256 invocations x 4.
pub(crate) const TILE: usize = 1024;

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
    out
}

/// The tile fold: `kx_part[t]` for each tile `t`.
const SUMS: &str = "    let tiles = params.kx_n / 1024u + select(0u, 1u, (params.kx_n & 1023u) != 0u);
    for (var t = wid.x; t < tiles; t += groups.x) {
        var v = kx_identity();
        for (var k = 0u; k < 4u; k += 1u) {
            let i = t * 1024u + lid * 4u + k;
            if (i < params.kx_n) { v = kx_combine(v, kx_elem(i)); }
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
const TILES: &str = "    let tiles = params.kx_n / 1024u + select(0u, 1u, (params.kx_n & 1023u) != 0u);
    for (var t = wid.x; t < tiles; t += groups.x) {
        let first = t * 1024u + lid * 4u;
        var xs: array<ACC, 4>;
        var v = kx_identity();
        for (var k = 0u; k < 4u; k += 1u) {
            let i = first + k;
            xs[k] = kx_identity();
            if (i < params.kx_n) { xs[k] = kx_elem(i); }
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
        for (var k = 0u; k < 4u; k += 1u) {
            let i = first + k;
            let before = acc;
            acc = kx_combine(acc, xs[k]);
            if (i < params.kx_n) { kx_dst[i] = STORE; }
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
