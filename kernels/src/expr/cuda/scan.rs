//! CUDA C++ for user scans: one pass with decoupled look-back, on the
//! building blocks of kiln's own scan (`scan/lookback.cuh`).
//!
//! Each block of 256 threads scans a tile of consecutive elements. Every
//! plain input is loaded as 16-byte vectors through a shared-memory
//! transpose, so that each thread holds [`items`] consecutive elements; the
//! map runs on those in registers (raw inputs are read where it says), the
//! thread scans its values in order, the warp and the block scan the thread
//! totals with shuffles, and the tile learns the fold of every earlier tile
//! from their published aggregates. Every step keeps the elements' order,
//! so the combining expression need only be associative.

use kiln_core::{DType, IndexWidth};

use crate::expr::check::Role;
use crate::expr::cuda::fold::function;
use crate::expr::cuda::{ONE, PRELUDE, c_type, len_type, storage};
use crate::expr::fold::Fold;
use crate::expr::ty::Vt;
use crate::scan::{LOOKBACK_CUH, ScanKind};

/// 16-byte vectors per thread for the widest type a scan loads or stores:
/// kiln's scan measured 8 the fastest on an H100 (see `scan/plan.rs`); with
/// more than one plain input each holds its own registers, so 4.
fn vectors(fold: &Fold) -> usize {
    if inputs(fold).count() > 1 { 4 } else { 8 }
}

/// The plain inputs (read at the element index): argument position and dtype.
fn inputs(fold: &Fold) -> impl Iterator<Item = (usize, DType)> + '_ {
    let dtypes = &fold.map.dtypes;
    fold.roles.iter().enumerate().filter(|(_, r)| **r == Role::Input).map(move |(p, _)| (p, dtypes[p]))
}

/// Elements each thread scans: its vectors of the widest type loaded or stored.
pub(crate) fn items(fold: &Fold) -> usize {
    let widest = inputs(fold).map(|(_, d)| d.size()).chain([fold.acc.size()]).max().unwrap_or(4);
    vectors(fold) * 16 / widest
}

/// Elements per tile (block).
pub(crate) fn tile(fold: &Fold) -> usize {
    256 * items(fold)
}

/// The source of both kinds of scan of `fold`, entry points
/// `{name}_inclusive` and `{name}_exclusive`. Parameters: the user's
/// arguments in order, each raw input's length, the element count, the
/// output, then the look-back state (`tiles + 1` zeroed status words, and
/// an aggregate and an inclusive prefix per tile for 8-byte accumulators).
pub(crate) fn scan(name: &str, fold: &Fold, width: IndexWidth) -> String {
    let l = len_type(width);
    let acc = c_type(Vt::Num(fold.acc));
    let mut out = format!(
        "{PRELUDE}\ntypedef {acc} kx_acc;\n#define KILN_SCAN_VPL {}\n#define KX_ITEMS {}\n",
        vectors(fold),
        items(fold)
    );
    out.push_str(LOOKBACK_CUH);
    out.push_str(ONE);
    out.push_str(&function("kx_acc kx_identity()", &fold.identity));
    out.push_str(&function("kx_acc kx_combine(kx_acc a0, kx_acc a1)", &fold.combine));
    let mut map_params = Vec::new();
    let mut kernel_params = Vec::new();
    for (p, role) in fold.roles.iter().enumerate() {
        let t = storage(fold.map.dtypes[p]);
        match role {
            Role::Input => {
                map_params.push(format!("kx_one<{t}> a{p}"));
                kernel_params.push(format!("const {t}* __restrict__ a{p}"));
            }
            Role::Scalar => {
                map_params.push(format!("{t} a{p}"));
                kernel_params.push(format!("{t} a{p}"));
            }
            _ => {
                map_params.push(format!("const {t}* __restrict__ a{p}"));
                kernel_params.push(format!("const {t}* __restrict__ a{p}"));
            }
        }
    }
    let mut map_args: Vec<String> = fold
        .roles
        .iter()
        .enumerate()
        .map(|(p, role)| {
            if *role == Role::Input {
                format!("kx_one<{}>{{in{p}[k]}}", storage(fold.map.dtypes[p]))
            } else {
                format!("a{p}")
            }
        })
        .collect();
    for (p, role) in fold.roles.iter().enumerate() {
        if *role == Role::Raw {
            map_params.push(format!("{l} kx_len{p}"));
            kernel_params.push(format!("{l} kx_len{p}"));
            map_args.push(format!("kx_len{p}"));
        }
    }
    map_params.push(format!("{l} kx_i, {l} kx_n"));
    map_args.push(format!("({l})(first + k), kx_n"));
    out.push_str(&function(&format!("kx_acc kx_map({})", map_params.join(", ")), &fold.map));
    out.push_str(
        r#"
// The combining expression as the look-back sees it.
struct KxOp : KilnPlainOp<kx_acc> {
    static __device__ __forceinline__ kx_acc identity() { return kx_identity(); }
    static __device__ __forceinline__ kx_acc op(kx_acc earlier, kx_acc later) { return kx_combine(earlier, later); }
};
#define KX_TILE ((kiln_u64)KILN_SCAN_BLOCK * KX_ITEMS)
"#,
    );
    kernel_params.push(format!("{l} kx_n"));
    kernel_params.push("kx_acc* __restrict__ kx_out".into());
    kernel_params.push("kiln_u64* kx_status, kx_acc* kx_aggs, kx_acc* kx_incls".into());
    let mut loads = String::new();
    for (p, d) in inputs(fold) {
        let t = storage(d);
        // The value loads past n take (never used): zero, of a struct for the 16-bit floats.
        let zero = if crate::expr::halves::is_half(d) { format!("{t}{{}}") } else { format!("({t})0") };
        loads.push_str(&format!(
            "    {t} in{p}[KX_ITEMS];\n    kiln_load_blocked<{t}, KX_ITEMS * sizeof({t}) / 16>(a{p}, seg, n, {zero}, ((kiln_u64)a{p} & 15) == 0, sm, in{p});\n"
        ));
    }
    let map_call = format!("kx_map({})", map_args.join(", "));
    for kind in ScanKind::ALL {
        let last = match kind {
            ScanKind::Inclusive => "        items[k] = kx_combine(prefix, items[k]);",
            ScanKind::Exclusive => {
                "        const kx_acc inclusive = kx_combine(prefix, items[k]);\n        items[k] = before;\n        before = inclusive;"
            }
        };
        out.push_str(&format!(
            r#"
extern "C" __global__ void __launch_bounds__(KILN_SCAN_BLOCK, 2) {name}_{kind}({params}) {{
    __shared__ uint4 sm_all[KILN_SCAN_WARPS * KILN_WARP_VECS];
    __shared__ kx_acc warp_total[KILN_SCAN_WARPS];
    __shared__ kx_acc tile_prefix;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    uint4* sm = sm_all + warp * KILN_WARP_VECS;
    const kiln_u64 n = kx_n;
    const kiln_u64 tiles = (n + KX_TILE - 1) / KX_TILE;
    const unsigned tile = kiln_next_tile(reinterpret_cast<unsigned*>(kx_status + tiles));
    const kiln_u64 seg = tile * KX_TILE + (kiln_u64)warp * 32 * KX_ITEMS;
    const kiln_u64 first = seg + (kiln_u64)lane * KX_ITEMS;
{loads}    kx_acc items[KX_ITEMS];
#pragma unroll
    for (int k = 0; k < KX_ITEMS; ++k) items[k] = first + k < n ? {map_call} : kx_identity();
#pragma unroll
    for (int k = 1; k < KX_ITEMS; ++k) items[k] = kx_combine(items[k - 1], items[k]);

    // Across the warp, then across the block's warps, in order.
    const kx_acc incl = kiln_warp_inclusive<kx_acc, KxOp>(items[KX_ITEMS - 1]);
    kx_acc lane_excl = KxOp::shfl_up(incl, 1);
    if (lane == 0) lane_excl = kx_identity();
    if (lane == 31) warp_total[warp] = incl;
    __syncthreads();
    kx_acc warp_excl = kx_identity();
    kx_acc aggregate = kx_identity();
#pragma unroll
    for (int w = 0; w < KILN_SCAN_WARPS; ++w) {{
        if (w == warp) warp_excl = aggregate;
        aggregate = kx_combine(aggregate, warp_total[w]);
    }}

    // Across tiles.
    if (warp == 0) {{
        const kx_acc p = kiln_lookback<kx_acc, KxOp>(tile, aggregate, kx_status, kx_aggs, kx_incls);
        if (lane == 0) tile_prefix = p;
    }}
    __syncthreads();
    const kx_acc prefix = kx_combine(kx_combine(tile_prefix, warp_excl), lane_excl);
    // items[k] holds the thread's inclusive scan up to k; the exclusive
    // value at k is the inclusive one at k - 1.
    kx_acc before = prefix;
#pragma unroll
    for (int k = 0; k < KX_ITEMS; ++k) {{
{last}
    }}
    kiln_store_blocked<kx_acc, KX_ITEMS * sizeof(kx_acc) / 16>(kx_out, seg, n, ((kiln_u64)kx_out & 15) == 0, sm, items);
}}
"#,
            params = kernel_params.join(", ")
        ));
    }
    out
}
