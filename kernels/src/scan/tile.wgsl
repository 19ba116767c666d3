// What the one-pass tile kernels (the scan and the compaction, in
// fallback.wgsl) share, whether a tile learns the sum of the tiles before
// it by decoupled look-back (lookback.wgsl) or reads it from the carries a
// reduce pass and a scan of its totals left (carried.wgsl). The kernels
// that include it give params.n, the value type C with tile_value(i) and
// flag_at(i), and store_flag / load_flag (the segment flags staged beside
// the values; no-ops when not segmented).
//
// Workgroups take tiles (claim_tile: in order from a counter, looking
// back; the grid-stride tile `at` otherwise). A tile of
// TILE = 256 x ITEMS elements is loaded coalesced, transposed through
// workgroup memory so that each invocation folds ITEMS consecutive
// elements, and the 256 invocation totals are scanned (scan_parts, from
// parts.wgsl or parts_subgroup.wgsl, in the order of rank(i)).

const ITEMS: u32 = LOOKBACK_ITEMS;
const TILE: u32 = 256u * ITEMS;
// One word of padding per 32, so that an invocation's ITEMS consecutive
// slots and a subgroup's strided reads meet different banks.
const SLOTS: u32 = TILE + TILE / 32u;

struct Part {
    v: C,
    f: u32,
}

var<workgroup> buf_v: array<C, SLOTS>;
var<workgroup> part_v: array<C, 256>;
var<workgroup> part_f: array<u32, 256>;
var<workgroup> wg_tile: u32;

fn slot(i: u32) -> u32 {
    return i + i / 32u;
}

// `a` then `b` under the segmented sum: a start in `b` discards `a`.
fn join(a: Part, b: Part) -> Part {
    return Part(select(a.v + b.v, b.v, b.f != 0u), a.f | b.f);
}

// Element i as a Part: its value and flag, zeros past n.
fn tile_in(i: u32) -> Part {
    if (i < params.n) {
        return Part(tile_value(i), flag_at(i));
    }
    return Part(C(0), 0u);
}

// load_tile(t, lid), which puts tile t into buf_v (and the flags),
// coalesced, comes from the host unrolled: all ITEMS loads are issued
// before any is stored (a loop stores each before it loads the next, and
// NVIDIA's Vulkan driver then keeps one load in flight).

// Tiles over params.n elements.
fn tile_count() -> u32 {
    return params.n / TILE + select(0u, 1u, params.n % TILE != 0u);
}

// Tile t (the same for every invocation) loaded into buf_v, the barrier
// after it included, if there is one (t below tile_count()); returns t.
// claim_tile(lid, at), from the prefix's file, chooses t.
fn take_tile(t: u32, lid: u32) -> u32 {
    if (t < tile_count()) {
        load_tile(t, lid);
        workgroupBarrier();
    }
    return t;
}
