// Decoupled look-back with decoupled fallback (WGSL; Smith, Levien and
// Owens, SPAA 2025): what a one-pass scan of tiles needs to learn the sum
// of every tile before its own without relying on forward progress between
// workgroups. The kernels that include it (the scan, the compaction) give
// the bindings `status` (atomic u32 words, zeroed), params.n, the value
// type C with tile_value(i) and flag_at(i), store_flag / load_flag (the
// segment flags staged beside the values; no-ops when not segmented). C
// is a 4-byte type (i32, u32, f32).
//
// Workgroups take tiles in order from a counter (status[0]; claim_tile). A
// tile of TILE = 256 x ITEMS elements is loaded coalesced, transposed
// through workgroup memory so that each invocation folds ITEMS consecutive
// elements, and the 256 invocation totals are scanned (scan_parts). The
// tile publishes its aggregate, then walks back over earlier tiles'
// published states, many at a time, adding aggregates until it meets an
// inclusive prefix (or, segmented, a segment start). Where an earlier tile has published
// nothing after SPIN reads, its workgroup may never run before this one
// finishes, so this one reduces that tile itself from the input and goes
// on: no workgroup waits on another without bound. Then it publishes its
// own inclusive prefix (tile_prefix).
//
// A tile's state is HALVES words of status[1 + tile * HALVES ..]: the state
// (0 nothing yet, 1 aggregate, 2 inclusive prefix) in bits 30-31, whether
// the tile holds a segment start in bit 16, and 16 bits of the value's bits
// in bits 0-15. WGSL atomics order nothing beyond their own word, so a
// reader takes a state only when all its words carry the same state; a mix
// is read again.

const ITEMS: u32 = LOOKBACK_ITEMS;
const SPIN: u32 = LOOKBACK_SPIN;
const TILE: u32 = 256u * ITEMS;
// One word of padding per 32, so that an invocation's ITEMS consecutive
// slots and a subgroup's strided reads meet different banks.
const SLOTS: u32 = TILE + TILE / 32u;

const HALVES: u32 = 2u;
const NOT_READY: u32 = 0u;
const AGGREGATE: u32 = 1u;
const INCLUSIVE: u32 = 2u;

struct Part {
    v: C,
    f: u32,
}

var<workgroup> buf_v: array<C, SLOTS>;
var<workgroup> part_v: array<C, 256>;
var<workgroup> part_f: array<u32, 256>;
var<workgroup> wg_tile: u32;
var<workgroup> wg_action: u32;
var<workgroup> wg_next: u32;
var<workgroup> wg_v: C;
var<workgroup> wg_f: u32;

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

// The inclusive scan of the 256 invocations' parts into part_v / part_f
// (Hillis-Steele, keeping the order); returns the tile's total. Begins
// with a barrier, so earlier readers of part_v are done; every invocation
// must call it.
fn scan_parts(lid: u32, mine: Part) -> Part {
    workgroupBarrier();
    part_v[lid] = mine.v;
    part_f[lid] = mine.f;
    workgroupBarrier();
    for (var o = 1u; o < 256u; o <<= 1u) {
        var p = Part(part_v[lid], part_f[lid]);
        if (lid >= o) {
            p = join(Part(part_v[lid - o], part_f[lid - o]), p);
        }
        workgroupBarrier();
        part_v[lid] = p.v;
        part_f[lid] = p.f;
        workgroupBarrier();
    }
    return Part(part_v[255], part_f[255]);
}

// The fold of tile t from the input, by the whole workgroup.
fn reduce_tile(t: u32, lid: u32) -> Part {
    workgroupBarrier();
    load_tile(t, lid);
    workgroupBarrier();
    var mine = Part(C(0), 0u);
    for (var k = 0u; k < ITEMS; k += 1u) {
        let s = slot(lid * ITEMS + k);
        mine = join(mine, Part(buf_v[s], load_flag(s)));
    }
    return scan_parts(lid, mine);
}

// 16 bits of v's bits: the low half (h = 0) or the high one.
fn half_of(v: C, h: u32) -> u32 {
    return (bitcast<u32>(v) >> (16u * h)) & 0xffffu;
}

fn join_halves(w: array<u32, HALVES>) -> C {
    return bitcast<C>((w[0] & 0xffffu) | ((w[1] & 0xffffu) << 16u));
}

fn publish(t: u32, state: u32, p: Part) {
    for (var h = 0u; h < HALVES; h += 1u) {
        atomicStore(&status[1u + t * HALVES + h], (state << 30u) | (p.f << 16u) | half_of(p.v, h));
    }
}

// Tile t's state (bits 0-1) and segment flag (bit 2), with its value.
struct State {
    s: u32,
    v: C,
}

fn read_state(t: u32) -> State {
    var w: array<u32, HALVES>;
    for (var h = 0u; h < HALVES; h += 1u) {
        w[h] = atomicLoad(&status[1u + t * HALVES + h]);
    }
    let state = w[0] >> 30u;
    for (var h = 1u; h < HALVES; h += 1u) {
        if ((w[h] >> 30u) != state) {
            return State(NOT_READY, C(0));
        }
    }
    return State(state | (((w[0] >> 16u) & 1u) << 2u), join_halves(w));
}

// look_back(t, lid) -> Part, the sum of every tile before t (t > 0),
// comes from lookback_window.wgsl (a window of tiles read by the whole
// workgroup) or lookback_subgroup.wgsl (read by one subgroup, with no
// workgroup barrier between its reads).

// The next tile of this workgroup, the same for every invocation, loaded
// into buf_v (the barrier after it included); params.n / TILE rounded up,
// or more, when none is left.
fn claim_tile(lid: u32) -> u32 {
    if (lid == 0u) {
        wg_tile = atomicAdd(&status[0], 1u);
    }
    let t = workgroupUniformLoad(&wg_tile);
    if (t < params.n / TILE + select(0u, 1u, params.n % TILE != 0u)) {
        load_tile(t, lid);
        workgroupBarrier();
    }
    return t;
}

// The sum of every tile before t, given tile t's total: publishes t's
// aggregate, looks back, publishes t's inclusive prefix. Every invocation
// must call it.
fn tile_prefix(t: u32, lid: u32, total: Part) -> Part {
    if (t == 0u) {
        if (lid == 0u) {
            publish(t, INCLUSIVE, total);
        }
        return Part(C(0), 0u);
    }
    if (lid == 0u) {
        publish(t, AGGREGATE, total);
    }
    let prefix = look_back(t, lid);
    if (lid == 0u) {
        publish(t, INCLUSIVE, join(prefix, total));
    }
    return prefix;
}
