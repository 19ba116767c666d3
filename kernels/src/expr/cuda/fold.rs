//! CUDA C++ for user reductions: the parts of a [`Fold`] as device
//! functions, and one kernel per [`Pass`].
//!
//! Blocks are 256 threads (32 x 8 for [`Pass::Tile`]). A whole-array pass
//! keeps four accumulators per thread, so four elements' loads are in
//! flight, folds its threads with warp shuffles and writes one partial per
//! block; [`Pass::Fold`] folds those in one block. The order in which
//! elements are combined is not the array's order: the combining
//! expression must be commutative as well as associative.

use kiln_core::IndexWidth;

use crate::expr::check::{Role, Typed};
use crate::expr::cuda::{PRELUDE, c_type, len_type, statements, storage, to_storage};
use crate::expr::fold::{Fold, Pass};
use crate::expr::ty::Vt;

/// `fn_head { statements; return v; }` for a part.
pub(crate) fn function(head: &str, body: &Typed) -> String {
    format!(
        "__device__ __forceinline__ {head} {{\n{}    return v{};\n}}\n",
        statements(body, "    ", |p| format!("a{p}")),
        Fold::result(body)
    )
}

/// The user's arguments as parameters, then each raw input's length.
fn map_params(fold: &Fold, l: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (p, role) in fold.roles.iter().enumerate() {
        let t = storage(fold.map.dtypes[p]);
        out.push(match role {
            Role::Scalar => format!("{t} a{p}"),
            _ => format!("const {t}* __restrict__ a{p}"),
        });
    }
    for (p, role) in fold.roles.iter().enumerate() {
        if *role == Role::Raw {
            out.push(format!("{l} kx_len{p}"));
        }
    }
    out
}

/// The names `map_params` declares, to pass them on.
fn map_args(fold: &Fold) -> String {
    let mut out: Vec<String> = (0..fold.roles.len()).map(|p| format!("a{p}")).collect();
    for (p, role) in fold.roles.iter().enumerate() {
        if *role == Role::Raw {
            out.push(format!("kx_len{p}"));
        }
    }
    out.push(String::new());
    out.join(", ")
}

/// The user's scalars as parameters, and their names.
fn scalars(fold: &Fold) -> (Vec<String>, String) {
    let mut decl = Vec::new();
    let mut names = String::new();
    for (p, role) in fold.roles.iter().enumerate() {
        if *role == Role::Scalar {
            decl.push(format!("{} a{p}", storage(fold.map.dtypes[p])));
            names.push_str(&format!("a{p}, "));
        }
    }
    (decl, names)
}

/// Elements per 16-byte pack of the plain inputs, where they share one size; 1 otherwise.
fn pack(fold: &Fold) -> usize {
    let mut sizes = fold.roles.iter().zip(&fold.map.dtypes).filter(|(r, _)| **r == Role::Input);
    match sizes.next() {
        Some((_, d)) if sizes.all(|(_, e)| e.size() == d.size()) => 16 / d.size(),
        _ => 1,
    }
}

/// The whole pass's loop over packs of the plain inputs, when aligned:
/// element k of a pack goes to accumulator k of `a`, `b`, `c`, `d`.
fn packed_loop(fold: &Fold, l: &str) -> String {
    let pack = pack(fold);
    if pack == 1 {
        return String::new();
    }
    let inputs: Vec<usize> = (0..fold.roles.len()).filter(|&p| fold.roles[p] == Role::Input).collect();
    let aligned: Vec<String> = inputs.iter().map(|p| format!("((unsigned long long)a{p} & 15) == 0")).collect();
    // Two packs per thread per step, so that two loads per input are in
    // flight, then one.
    let step = |out: &mut String, packs: &[&str]| {
        for (j, q) in packs.iter().enumerate() {
            for &p in &inputs {
                let t = storage(fold.map.dtypes[p]);
                out.push_str(&format!("            union {{ uint4 w; {t} e[{pack}]; }} p{p}_{j};\n"));
                out.push_str(&format!("            p{p}_{j}.w = ((const uint4*)a{p})[{q}];\n"));
            }
        }
        for (j, q) in packs.iter().enumerate() {
            for k in 0..pack {
                let mut args: Vec<String> = (0..fold.roles.len())
                    .map(|p| match fold.roles[p] {
                        Role::Input => format!("kx_one<{}>{{p{p}_{j}.e[{k}]}}", storage(fold.map.dtypes[p])),
                        _ => format!("a{p}"),
                    })
                    .collect();
                for (p, role) in fold.roles.iter().enumerate() {
                    if *role == Role::Raw {
                        args.push(format!("kx_len{p}"));
                    }
                }
                let acc = ["a", "b", "c", "d"][(j * pack + k) % 4];
                out.push_str(&format!(
                    "            {acc} = kx_combine({acc}, kx_map1({}, ({q}) * {pack} + {k}, kx_n));\n",
                    args.join(", ")
                ));
            }
        }
    };
    let mut out = format!(
        "    if ({}) {{\n        const {l} packs = kx_n / {pack};\n        {l} q = i;\n        for (; q + threads < packs; q += 2 * threads) {{\n",
        aligned.join(" && ")
    );
    step(&mut out, &["q", "q + threads"]);
    out.push_str("        }\n        for (; q < packs; q += threads) {\n");
    step(&mut out, &["q"]);
    out.push_str(&format!("        }}\n        i += packs * {pack};\n    }}\n"));
    out
}

/// The device functions every pass shares.
fn parts(fold: &Fold, l: &str) -> String {
    // The post-map computes a 16-bit result in f32 (`kx_res`); it is
    // stored as the 16-bit type (`kx_res_mem`, through KX_RES).
    let half_out = crate::expr::halves::is_half(fold.out);
    let acc = c_type(Vt::Num(fold.acc));
    let res = if half_out { "float" } else { c_type(Vt::Num(fold.out)) };
    let mut out = format!(
        "{PRELUDE}\n#define KX_BLOCK 256\ntypedef {acc} kx_acc;\ntypedef {res} kx_res;\ntypedef {} kx_res_mem;\n#define KX_RES(v) {}\n",
        storage(fold.out),
        to_storage(fold.out, "(v)")
    );
    out.push_str(&function("kx_acc kx_identity()", &fold.identity));
    out.push_str(&function("kx_acc kx_combine(kx_acc a0, kx_acc a1)", &fold.combine));
    let mut head = map_params(fold, l);
    head.push(format!("{l} kx_i"));
    head.push(format!("{l} kx_n"));
    out.push_str(&function(&format!("kx_acc kx_map({})", head.join(", ")), &fold.map));
    if pack(fold) > 1 {
        // The same map over plain inputs' elements already loaded (packs).
        let mut head = Vec::new();
        for (p, role) in fold.roles.iter().enumerate() {
            let t = storage(fold.map.dtypes[p]);
            head.push(match role {
                Role::Scalar => format!("{t} a{p}"),
                Role::Input => format!("kx_one<{t}> a{p}"),
                _ => format!("const {t}* __restrict__ a{p}"),
            });
        }
        for (p, role) in fold.roles.iter().enumerate() {
            if *role == Role::Raw {
                head.push(format!("{l} kx_len{p}"));
            }
        }
        head.push(format!("{l} kx_i, {l} kx_n"));
        out.push_str(crate::expr::cuda::ONE);
        out.push_str(&function(&format!("kx_acc kx_map1({})", head.join(", ")), &fold.map));
    }
    let (mut decl, _) = scalars(fold);
    let a = fold.roles.len();
    decl.push(format!("kx_acc a{a}"));
    decl.push(format!("{l} kx_n"));
    match &fold.post {
        Some(post) => out.push_str(&function(&format!("kx_res kx_post({})", decl.join(", ")), post)),
        None => out
            .push_str(&format!("__device__ __forceinline__ kx_res kx_post({}) {{ return a{a}; }}\n", decl.join(", "))),
    }
    out.push_str(
        r#"
// The fold of the warp's 32 values, in every lane.
__device__ __forceinline__ kx_acc kx_warp_fold(kx_acc v) {
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) v = kx_combine(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// The fold of the block's values, in thread 0; every thread must call it.
__device__ __forceinline__ kx_acc kx_block_fold(kx_acc v) {
    __shared__ kx_acc kx_warps[KX_BLOCK / 32];
    v = kx_warp_fold(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) kx_warps[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < KX_BLOCK / 32 ? kx_warps[lane] : kx_identity();
        v = kx_warp_fold(v);
    }
    return v;
}
"#,
    );
    out
}

/// The CUDA source of `pass` of `fold`, its entry point `{name}_{pass}`.
pub(crate) fn fold(name: &str, fold: &Fold, pass: Pass, width: IndexWidth) -> String {
    let l = len_type(width);
    let mut out = parts(fold, l);
    let entry = format!("{name}_{}", pass.name());
    let m = map_args(fold);
    let (sdecl, snames) = scalars(fold);
    let with = |mut v: Vec<String>, more: &[String]| {
        v.extend(more.iter().cloned());
        v.join(", ")
    };
    let s = |v: &str| v.to_string();
    // A first pass over a 2-D shape writing partials: the map's arguments,
    // the count, the shape, how it is cut (`cut`), the partials.
    let partial_params = |cut: &str| {
        let shape = [format!("{l} kx_n"), format!("{l} kx_rows"), format!("{l} kx_cols"), format!("{l} {cut}")];
        with(map_params(fold, l), &[&shape[..], &[s("kx_acc* __restrict__ kx_part")]].concat())
    };
    let kernel = match pass {
        Pass::Whole => format!(
            r#"extern "C" __global__ void __launch_bounds__(KX_BLOCK) {entry}({params}) {{
    const {l} threads = ({l})gridDim.x * KX_BLOCK;
    {l} i = ({l})blockIdx.x * KX_BLOCK + threadIdx.x;
    kx_acc a = kx_identity(), b = a, c = a, d = a;
{packed}    for (; i + 3 * threads < kx_n; i += 4 * threads) {{
        a = kx_combine(a, kx_map({m}i, kx_n));
        b = kx_combine(b, kx_map({m}i + threads, kx_n));
        c = kx_combine(c, kx_map({m}i + 2 * threads, kx_n));
        d = kx_combine(d, kx_map({m}i + 3 * threads, kx_n));
    }}
    for (; i < kx_n; i += threads) a = kx_combine(a, kx_map({m}i, kx_n));
    a = kx_block_fold(kx_combine(kx_combine(a, b), kx_combine(c, d)));
    if (threadIdx.x == 0) kx_part[blockIdx.x] = a;
}}
"#,
            params = with(map_params(fold, l), &[format!("{l} kx_n"), s("kx_acc* __restrict__ kx_part")]),
            packed = packed_loop(fold, l)
        ),
        Pass::Fold => format!(
            r#"extern "C" __global__ void __launch_bounds__(KX_BLOCK) {entry}({params}) {{
    kx_acc a = kx_identity();
    for ({l} i = threadIdx.x; i < kx_m; i += KX_BLOCK) a = kx_combine(a, kx_part[i]);
    a = kx_block_fold(a);
    if (threadIdx.x == 0) kx_out[0] = KX_RES(kx_post({snames}a, kx_n));
}}
"#,
            params = with(
                vec![s("const kx_acc* __restrict__ kx_part"), format!("{l} kx_m")],
                &[sdecl.clone(), vec![format!("{l} kx_n"), s("kx_res_mem* __restrict__ kx_out")]].concat()
            )
        ),
        Pass::Rows => format!(
            r#"extern "C" __global__ void __launch_bounds__(KX_BLOCK) {entry}({params}) {{
    const int lane = threadIdx.x & 31;
    const {l} warps = ({l})gridDim.x * (KX_BLOCK / 32);
    // The bound is the same for the warp's 32 lanes: the shuffles see whole warps.
    for ({l} r = ({l})blockIdx.x * (KX_BLOCK / 32) + (threadIdx.x >> 5); r < kx_rows; r += warps) {{
        kx_acc a = kx_identity();
        for ({l} c = lane; c < kx_cols; c += 32) a = kx_combine(a, kx_map({m}r * kx_cols + c, kx_n));
        a = kx_warp_fold(a);
        if (lane == 0) kx_out[r] = KX_RES(kx_post({snames}a, kx_cols));
    }}
}}
"#,
            params = with(
                map_params(fold, l),
                &[
                    format!("{l} kx_n"),
                    format!("{l} kx_rows"),
                    format!("{l} kx_cols"),
                    s("kx_res_mem* __restrict__ kx_out")
                ]
            )
        ),
        Pass::Split => format!(
            r#"extern "C" __global__ void __launch_bounds__(KX_BLOCK) {entry}({params}) {{
    const {l} per = kx_cols / kx_parts + (kx_cols % kx_parts != 0);
    // The bound is the same for the whole block: every thread meets the block fold.
    for ({l} b = blockIdx.x; b < kx_rows * kx_parts; b += gridDim.x) {{
        const {l} r = b / kx_parts, p = b % kx_parts;
        const {l} c1 = (p + 1) * per < kx_cols ? (p + 1) * per : kx_cols;
        {l} c = p * per + threadIdx.x;
        kx_acc a = kx_identity(), e = a, f = a, g = a;
        for (; c + 3 * KX_BLOCK < c1; c += 4 * KX_BLOCK) {{
            a = kx_combine(a, kx_map({m}r * kx_cols + c, kx_n));
            e = kx_combine(e, kx_map({m}r * kx_cols + c + KX_BLOCK, kx_n));
            f = kx_combine(f, kx_map({m}r * kx_cols + c + 2 * KX_BLOCK, kx_n));
            g = kx_combine(g, kx_map({m}r * kx_cols + c + 3 * KX_BLOCK, kx_n));
        }}
        for (; c < c1; c += KX_BLOCK) a = kx_combine(a, kx_map({m}r * kx_cols + c, kx_n));
        a = kx_block_fold(kx_combine(kx_combine(a, e), kx_combine(f, g)));
        if (threadIdx.x == 0) kx_part[p * kx_rows + r] = a;
        __syncthreads();
    }}
}}
"#,
            params = partial_params("kx_parts")
        ),
        Pass::Tile => format!(
            r#"extern "C" __global__ void __launch_bounds__(KX_BLOCK) {entry}({params}) {{
    __shared__ kx_acc stripe[8][33];
    const {l} r0 = ({l})blockIdx.y * kx_rpc;
    const {l} r1 = r0 + kx_rpc < kx_rows ? r0 + kx_rpc : kx_rows;
    for ({l} tile = blockIdx.x; tile * 32 < kx_cols; tile += gridDim.x) {{
        const {l} c = tile * 32 + threadIdx.x;
        kx_acc a = kx_identity();
        if (c < kx_cols)
            for ({l} r = r0 + threadIdx.y; r < r1; r += 8) a = kx_combine(a, kx_map({m}r * kx_cols + c, kx_n));
        stripe[threadIdx.y][threadIdx.x] = a;
        __syncthreads();
        if (threadIdx.y == 0) {{
#pragma unroll
            for (int s = 1; s < 8; ++s) a = kx_combine(a, stripe[s][threadIdx.x]);
            if (c < kx_cols) kx_part[({l})blockIdx.y * kx_cols + c] = a;
        }}
        __syncthreads();
    }}
}}
"#,
            params = partial_params("kx_rpc")
        ),
        Pass::Cols => format!(
            r#"extern "C" __global__ void __launch_bounds__(KX_BLOCK) {entry}({params}) {{
    for ({l} c = ({l})blockIdx.x * KX_BLOCK + threadIdx.x; c < kx_cols; c += ({l})gridDim.x * KX_BLOCK) {{
        kx_acc a = kx_identity();
        for ({l} k = 0; k < kx_chunks; ++k) a = kx_combine(a, kx_part[k * kx_cols + c]);
        kx_out[c] = KX_RES(kx_post({snames}a, kx_rows));
    }}
}}
"#,
            params = with(
                vec![s("const kx_acc* __restrict__ kx_part"), format!("{l} kx_chunks")],
                &[sdecl, vec![format!("{l} kx_rows"), format!("{l} kx_cols"), s("kx_res_mem* __restrict__ kx_out")]]
                    .concat()
            )
        ),
    };
    out.push_str(&kernel);
    out
}
