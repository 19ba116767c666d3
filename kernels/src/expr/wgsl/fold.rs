//! WGSL for user reductions: the parts of a [`Fold`] as functions, and one
//! entry point per [`Pass`], with the plan of the CUDA form (see
//! `cuda_fold.rs`); workgroups fold through workgroup memory, as WGSL
//! offers no portable subgroup operations.

use crate::expr::check::{Role, Typed};
use crate::expr::fold::{Fold, Pass};
use crate::expr::ty::Vt;
use crate::expr::wgsl::{Helpers, Names, interface, statements, w_type};

/// `fn head { statements; return v; }` for a part, its arguments named by `names`.
fn function(head: &str, body: &Typed, h: &mut Helpers, names: &Names<'_>) -> String {
    format!("fn {head} {{\n{}    return v{};\n}}\n", statements(body, h, "    ", names), Fold::result(body))
}

/// Whether `pass` reads the user's buffers (maps elements).
fn maps(pass: Pass) -> bool {
    matches!(pass, Pass::Whole | Pass::Rows | Pass::Split | Pass::Tile)
}

/// The bindings and the uniform `params` of `pass`, in the order of its
/// launch's arguments.
fn declarations(fold: &Fold, pass: Pass) -> String {
    let (acc, res) = (w_type(Vt::Num(fold.acc)), w_type(Vt::Num(fold.out)));
    let mut buffers = Vec::new();
    if maps(pass) {
        for (p, role) in fold.roles.iter().enumerate() {
            if *role != Role::Scalar {
                buffers.push(format!("var<storage, read> a{p}: array<{}>", w_type(Vt::Num(fold.map.dtypes[p]))));
            }
        }
    }
    match pass {
        Pass::Whole | Pass::Split | Pass::Tile => {
            buffers.push(format!("var<storage, read_write> kx_part: array<{acc}>"))
        }
        Pass::Fold | Pass::Cols => {
            buffers.push(format!("var<storage, read> kx_part: array<{acc}>"));
            buffers.push(format!("var<storage, read_write> kx_out: array<{res}>"));
        }
        Pass::Rows => buffers.push(format!("var<storage, read_write> kx_out: array<{res}>")),
    }
    let mut user = Vec::new();
    for (p, role) in fold.roles.iter().enumerate() {
        if *role == Role::Scalar {
            user.push(format!("a{p}: {},", w_type(Vt::Num(fold.map.dtypes[p]))));
        }
    }
    let lens: Vec<String> = if maps(pass) {
        let raws = fold.roles.iter().enumerate().filter(|(_, r)| **r == Role::Raw);
        raws.map(|(p, _)| format!("kx_len{p}: u32,")).collect()
    } else {
        Vec::new()
    };
    let fields: Vec<String> = match pass {
        Pass::Whole => [user, lens, vec!["kx_n: u32,".into()]].concat(),
        Pass::Fold => [vec!["kx_m: u32,".into()], user, vec!["kx_n: u32,".into()]].concat(),
        Pass::Rows => [user, lens, vec!["kx_n: u32, kx_rows: u32, kx_cols: u32,".into()]].concat(),
        Pass::Split => [user, lens, vec!["kx_n: u32, kx_rows: u32, kx_cols: u32, kx_parts: u32,".into()]].concat(),
        Pass::Tile => [user, lens, vec!["kx_n: u32, kx_rows: u32, kx_cols: u32, kx_rpc: u32,".into()]].concat(),
        Pass::Cols => [vec!["kx_chunks: u32,".into()], user, vec!["kx_rows: u32, kx_cols: u32,".into()]].concat(),
    };
    interface(&buffers, &fields)
}

/// `kx_identity()`, `kx_combine(kx_a, kx_b)` and, where `map` names it,
/// the map as `{map}(kx_i)`: the parts every fold and scan pass starts
/// with, all of the accumulator's type.
pub(crate) fn fold_parts(fold: &Fold, map: Option<&str>, h: &mut Helpers) -> String {
    let acc = w_type(Vt::Num(fold.acc));
    let arg = |p: u32| format!("a{p}");
    let params = |p: u32| format!("params.a{p}");
    let mut out = function(
        &format!("kx_identity() -> {acc}"),
        &fold.identity,
        h,
        &Names { arg: &arg, scalar: &params, len: "0u" },
    );
    let pair = |p: u32| (if p == 0 { "kx_a" } else { "kx_b" }).to_string();
    out.push_str(&function(
        &format!("kx_combine(kx_a: {acc}, kx_b: {acc}) -> {acc}"),
        &fold.combine,
        h,
        &Names { arg: &arg, scalar: &pair, len: "0u" },
    ));
    if let Some(map) = map {
        let names = Names { arg: &arg, scalar: &params, len: "params.kx_n" };
        out.push_str(&function(&format!("{map}(kx_i: u32) -> {acc}"), &fold.map, h, &names));
    }
    out
}

/// The functions of the parts `pass` uses.
fn parts(fold: &Fold, pass: Pass, h: &mut Helpers) -> String {
    // A 16-bit result is computed in f32 and stored as f16 (`result`).
    let acc = w_type(Vt::Num(fold.acc));
    let half_out = crate::expr::halves::is_half(fold.out);
    let res = if half_out { "f32" } else { w_type(Vt::Num(fold.out)) };
    let arg = |p: u32| format!("a{p}");
    let mut out = fold_parts(fold, maps(pass).then_some("kx_map"), h);
    if !matches!(pass, Pass::Whole | Pass::Split | Pass::Tile) {
        let a = fold.roles.len() as u32;
        let post_scalar = move |p: u32| if p == a { "kx_a".to_string() } else { format!("params.a{p}") };
        let head = format!("kx_post(kx_a: {acc}, kx_count: u32) -> {res}");
        match &fold.post {
            Some(post) => {
                out.push_str(&function(&head, post, h, &Names { arg: &arg, scalar: &post_scalar, len: "kx_count" }))
            }
            None => out.push_str(&format!("fn {head} {{ return kx_a; }}\n")),
        }
        let (mem, stored) = if half_out { ("f16", "f16(v)") } else { (res, "v") };
        out.push_str(&format!("fn kx_store(v: {res}) -> {mem} {{ return {stored}; }}\n"));
    }
    out.push_str(&format!(
        "var<workgroup> kx_sh: array<{acc}, 256>;\n\
         // The fold of kx_sh[0..256) into kx_sh[0]; every invocation must call it.\n\
         fn kx_tree(lid: u32) {{\n\
         \x20   workgroupBarrier();\n\
         \x20   for (var s = 128u; s > 0u; s = s >> 1u) {{\n\
         \x20       if (lid < s) {{ kx_sh[lid] = kx_combine(kx_sh[lid], kx_sh[lid + s]); }}\n\
         \x20       workgroupBarrier();\n\
         \x20   }}\n\
         }}\n"
    ));
    out
}

/// What a fold or scan pass's module starts with: `declarations`, the
/// helpers its parts call, then the parts, which `parts` writes (noting the
/// helpers it calls).
pub(crate) fn module(declarations: String, parts: impl FnOnce(&mut Helpers) -> String) -> String {
    let mut h = Helpers::default();
    let functions = parts(&mut h);
    let mut out = declarations;
    out.push_str(&h.text());
    out.push('\n');
    out.push_str(&functions);
    out
}

/// The WGSL source of `pass` of `fold`, its entry point `{name}_{pass}`.
pub(crate) fn fold(name: &str, fold: &Fold, pass: Pass) -> String {
    let mut out = module(declarations(fold, pass), |h| parts(fold, pass, h));
    let entry = format!("{name}_{}", pass.name());
    let head = "@compute @workgroup_size(block_x, block_y, block_z)";
    let builtins = "@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_id) l: vec3<u32>, \
                    @builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, \
                    @builtin(num_workgroups) groups: vec3<u32>";
    let acc = w_type(Vt::Num(fold.acc));
    let body = match pass {
        Pass::Whole => "    var a = kx_identity();
    var b = a;
    var c = a;
    var d = a;
    let stride = groups.x * 256u;
    var i = gid.x;
    // Four elements a step (four loads in flight) while all four are in range.
    for (; i < params.kx_n && params.kx_n - i > 3u * stride; i += 4u * stride) {
        a = kx_combine(a, kx_map(i));
        b = kx_combine(b, kx_map(i + stride));
        c = kx_combine(c, kx_map(i + 2u * stride));
        d = kx_combine(d, kx_map(i + 3u * stride));
    }
    // Stepping stops before the index could wrap past 2^32.
    for (; i < params.kx_n; ) {
        a = kx_combine(a, kx_map(i));
        if (params.kx_n - i <= stride) { break; }
        i += stride;
    }
    kx_sh[lid] = kx_combine(kx_combine(a, b), kx_combine(c, d));
    kx_tree(lid);
    if (lid == 0u) { kx_part[wid.x] = kx_sh[0]; }"
            .to_string(),
        Pass::Fold => "    var a = kx_identity();
    for (var i = lid; i < params.kx_m; i += 256u) { a = kx_combine(a, kx_part[i]); }
    kx_sh[lid] = a;
    kx_tree(lid);
    if (lid == 0u) { kx_out[0] = kx_store(kx_post(kx_sh[0], params.kx_n)); }"
            .to_string(),
        Pass::Rows => "    for (var r = wid.x; r < params.kx_rows; r += groups.x) {
        var a = kx_identity();
        for (var c = lid; c < params.kx_cols; c += 256u) { a = kx_combine(a, kx_map(r * params.kx_cols + c)); }
        kx_sh[lid] = a;
        kx_tree(lid);
        if (lid == 0u) { kx_out[r] = kx_store(kx_post(kx_sh[0], params.kx_cols)); }
        workgroupBarrier();
    }"
        .to_string(),
        Pass::Split => {
            "    let per = params.kx_cols / params.kx_parts + select(0u, 1u, params.kx_cols % params.kx_parts != 0u);
    for (var b = wid.x; b < params.kx_rows * params.kx_parts; b += groups.x) {
        let r = b / params.kx_parts;
        let p = b % params.kx_parts;
        let c1 = min((p + 1u) * per, params.kx_cols);
        var a = kx_identity();
        for (var c = p * per + lid; c < c1; c += 256u) { a = kx_combine(a, kx_map(r * params.kx_cols + c)); }
        kx_sh[lid] = a;
        kx_tree(lid);
        if (lid == 0u) { kx_part[p * params.kx_rows + r] = kx_sh[0]; }
        workgroupBarrier();
    }"
            .to_string()
        }
        Pass::Tile => "    let r0 = wid.y * params.kx_rpc;
    let r1 = min(r0 + params.kx_rpc, params.kx_rows);
    for (var tile = wid.x; tile * 32u < params.kx_cols; tile += groups.x) {
        let c = tile * 32u + l.x;
        var a = kx_identity();
        if (c < params.kx_cols) {
            for (var r = r0 + l.y; r < r1; r += 8u) { a = kx_combine(a, kx_map(r * params.kx_cols + c)); }
        }
        kx_stripe[l.y * 33u + l.x] = a;
        workgroupBarrier();
        if (l.y == 0u) {
            for (var s = 1u; s < 8u; s++) { a = kx_combine(a, kx_stripe[s * 33u + l.x]); }
            if (c < params.kx_cols) { kx_part[wid.y * params.kx_cols + c] = a; }
        }
        workgroupBarrier();
    }"
        .to_string(),
        Pass::Cols => "    for (var c = gid.x; c < params.kx_cols; c += groups.x * 256u) {
        var a = kx_identity();
        for (var k = 0u; k < params.kx_chunks; k++) { a = kx_combine(a, kx_part[k * params.kx_cols + c]); }
        kx_out[c] = kx_store(kx_post(a, params.kx_rows));
    }"
        .to_string(),
    };
    if pass == Pass::Tile {
        out.push_str(&format!("var<workgroup> kx_stripe: array<{acc}, 264>;\n"));
    }
    // The run-time zero (see `wgsl::min_max`), where the pass has the length.
    let zero = if pass == Pass::Cols { "" } else { "    kx_zero = select(0u, 1u, params.kx_n == 0xffffffffu);\n" };
    out.push_str(&format!("{head}\nfn {entry}({builtins}) {{\n{zero}{body}\n}}\n"));
    out
}
