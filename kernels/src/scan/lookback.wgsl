// Decoupled look-back with decoupled fallback (WGSL; Smith, Levien and
// Owens, SPAA 2025), after tile.wgsl: how a one-pass scan of tiles learns
// the sum of every tile before its own without relying on forward
// progress between workgroups. C is a 4-byte type (i32, u32, f32); the
// kernel binds `status` (atomic u32 words, zeroed).
//
// Each tile publishes its aggregate, then walks back over earlier tiles'
// published states, many at a time, adding aggregates until it meets an
// inclusive prefix (or, segmented, a segment start). Where an earlier tile
// has published nothing after SPIN reads, its workgroup may never run
// before this one finishes, so this one reduces that tile itself from the
// input and goes on: no workgroup waits on another without bound. Then it
// publishes its own inclusive prefix (tile_prefix).
//
// Workgroups take tiles in order from a counter, status[0], so that every
// tile a workgroup walks back to has been taken by one that runs.
//
// A tile's state is HALVES words of status[1 + tile * HALVES ..]: the state
// (0 nothing yet, 1 aggregate, 2 inclusive prefix) in bits 30-31, whether
// the tile holds a segment start in bit 16, and 16 bits of the value's bits
// in bits 0-15. WGSL atomics order nothing beyond their own word, so a
// reader takes a state only when all its words carry the same state; a mix
// is read again.

const SPIN: u32 = LOOKBACK_SPIN;
const HALVES: u32 = 2u;
const NOT_READY: u32 = 0u;
const AGGREGATE: u32 = 1u;
const INCLUSIVE: u32 = 2u;

var<workgroup> wg_action: u32;
var<workgroup> wg_next: u32;
var<workgroup> wg_v: C;
var<workgroup> wg_f: u32;

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

// The next tile of this workgroup, from the counter, loaded (take_tile);
// `at` (the grid-stride tile) is not used.
fn claim_tile(lid: u32, at: u32) -> u32 {
    if (lid == 0u) {
        wg_tile = atomicAdd(&status[0], 1u);
    }
    return take_tile(workgroupUniformLoad(&wg_tile), lid);
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
