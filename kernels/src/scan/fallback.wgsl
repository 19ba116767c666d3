// Scan in one pass (WGSL): chained scan with decoupled look-back and
// decoupled fallback (Smith, Levien and Owens, SPAA 2025), which stays
// correct where workgroups are not promised forward progress.
//
// Each workgroup takes tiles in order from a counter (status[0]), loads a
// tile of TILE = 256 x ITEMS elements with coalesced loads, transposed
// through workgroup memory so that each invocation folds ITEMS consecutive
// elements, and scans the 256 invocation totals. It publishes the tile's
// aggregate, then walks back over earlier tiles' published states, adding
// aggregates until it meets an inclusive prefix (or, segmented, a segment
// start). Where an earlier tile has published nothing after SPIN reads,
// its workgroup may never run before this one finishes, so this one
// reduces that tile itself from the input and goes on: no workgroup waits
// on another without bound. Then it publishes its own inclusive prefix and
// writes the tile, again through workgroup memory, with coalesced stores.
// One read and one write per element, plus whatever fallbacks reread.
//
// A tile's state is HALVES words of status[1 + tile * HALVES ..]: the state
// (0 nothing yet, 1 aggregate, 2 inclusive prefix) in bits 30-31, whether
// the tile holds a segment start in bit 16, and 16 bits of the value's bits
// in bits 0-15 (half_of / join_halves come with the bindings). WGSL atomics
// order nothing beyond their own word, so a reader takes a state only when
// all its words carry the same state; a mix is read again.
//
// SCAN_MODE 0: inclusive; 1: exclusive (0 at a segment start). flag_at(i),
// store_flag / load_flag (the segment flags staged with the values; no-ops
// when not segmented) come with the bindings. The input is never written
// (a fallback rereads it), so the scan is not in place.
struct Params {
    n: u32,
}
@group(1) @binding(0) var<uniform> params: Params;

override block_x: u32 = 256;
override block_y: u32 = 1;
override block_z: u32 = 1;

const MODE: u32 = SCAN_MODE;
const ITEMS: u32 = SCAN_ITEMS;
const SPIN: u32 = SCAN_SPIN;
const TILE: u32 = 256u * ITEMS;
// One word of padding per 32, so that an invocation's ITEMS consecutive
// slots and a subgroup's strided reads meet different banks.
const SLOTS: u32 = TILE + TILE / 32u;

const NOT_READY: u32 = 0u;
const AGGREGATE: u32 = 1u;
const INCLUSIVE: u32 = 2u;

struct Part {
    v: T,
    f: u32,
}

var<workgroup> buf_v: array<T, SLOTS>;
var<workgroup> part_v: array<T, 256>;
var<workgroup> part_f: array<u32, 256>;
var<workgroup> wg_tile: u32;
var<workgroup> wg_state: u32;
var<workgroup> wg_v: T;
var<workgroup> wg_f: u32;

fn slot(i: u32) -> u32 {
    return i + i / 32u;
}

// `a` then `b` under the segmented sum: a start in `b` discards `a`.
fn join(a: Part, b: Part) -> Part {
    return Part(select(a.v + b.v, b.v, b.f != 0u), a.f | b.f);
}

// Tile t into buf_v (and the flags), coalesced; zeros past n.
fn load_tile(t: u32, lid: u32) {
    for (var k = 0u; k < ITEMS; k += 1u) {
        let j = k * 256u + lid;
        let i = t * TILE + j;
        var v = T(0);
        var f = 0u;
        if (i < params.n) {
            v = src[i];
            f = flag_at(i);
        }
        buf_v[slot(j)] = v;
        store_flag(slot(j), f);
    }
}

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
    var mine = Part(T(0), 0u);
    for (var k = 0u; k < ITEMS; k += 1u) {
        let s = slot(lid * ITEMS + k);
        mine = join(mine, Part(buf_v[s], load_flag(s)));
    }
    return scan_parts(lid, mine);
}

fn publish(t: u32, state: u32, p: Part) {
    for (var h = 0u; h < HALVES; h += 1u) {
        atomicStore(&status[1u + t * HALVES + h], (state << 30u) | (p.f << 16u) | half_of(p.v, h));
    }
}

// Tile t's state, with its value in wg_v / wg_f when it has one.
fn read_state(t: u32) -> u32 {
    var w: array<u32, HALVES>;
    for (var h = 0u; h < HALVES; h += 1u) {
        w[h] = atomicLoad(&status[1u + t * HALVES + h]);
    }
    let state = w[0] >> 30u;
    for (var h = 1u; h < HALVES; h += 1u) {
        if ((w[h] >> 30u) != state) {
            return NOT_READY;
        }
    }
    if (state != NOT_READY) {
        wg_v = join_halves(w);
        wg_f = (w[0] >> 16u) & 1u;
    }
    return state;
}

// The sum of every tile before t (t > 0), as a Part. Workgroup-uniform:
// invocation 0 reads the states, and all take the fallback together.
fn look_back(t: u32, lid: u32) -> Part {
    // The value and the flag apart: the flag steers the loop, so it must
    // come from uniform loads only.
    var v = T(0);
    var f = 0u;
    var p = t;
    loop {
        p -= 1u;
        if (lid == 0u) {
            var state = NOT_READY;
            for (var spin = 0u; spin < SPIN && state == NOT_READY; spin += 1u) {
                state = read_state(p);
            }
            wg_state = state;
        }
        let state = workgroupUniformLoad(&wg_state);
        if (state == NOT_READY) {
            let agg = reduce_tile(p, lid);
            if (lid == 0u) {
                wg_v = agg.v;
                wg_f = agg.f;
            }
        }
        let pf = workgroupUniformLoad(&wg_f);
        v = join(Part(wg_v, pf), Part(v, f)).v;
        f = f | pf;
        // wg_v is written again by the next step.
        workgroupBarrier();
        if (state == INCLUSIVE || f != 0u || p == 0u) {
            break;
        }
    }
    return Part(v, f);
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(local_invocation_index) lid: u32) {
    let tiles = params.n / TILE + select(0u, 1u, params.n % TILE != 0u);
    loop {
        if (lid == 0u) {
            wg_tile = atomicAdd(&status[0], 1u);
        }
        let t = workgroupUniformLoad(&wg_tile);
        if (t >= tiles) {
            break;
        }
        load_tile(t, lid);
        workgroupBarrier();
        var xs: array<T, ITEMS>;
        var fs: array<u32, ITEMS>;
        var mine = Part(T(0), 0u);
        for (var k = 0u; k < ITEMS; k += 1u) {
            let s = slot(lid * ITEMS + k);
            xs[k] = buf_v[s];
            fs[k] = load_flag(s);
            mine = join(mine, Part(xs[k], fs[k]));
        }
        let total = scan_parts(lid, mine);
        var before = Part(T(0), 0u);
        if (lid > 0u) {
            before = Part(part_v[lid - 1u], part_f[lid - 1u]);
        }
        var prefix = Part(T(0), 0u);
        if (t == 0u) {
            if (lid == 0u) {
                publish(t, INCLUSIVE, total);
            }
        } else {
            if (lid == 0u) {
                publish(t, AGGREGATE, total);
            }
            prefix = look_back(t, lid);
            if (lid == 0u) {
                publish(t, INCLUSIVE, join(prefix, total));
            }
        }
        var acc = prefix.v;
        if (lid > 0u) {
            acc = join(prefix, before).v;
        }
        // Every read of buf_v (this tile's and any fallback's) is done.
        workgroupBarrier();
        for (var k = 0u; k < ITEMS; k += 1u) {
            let last = acc;
            acc = select(acc + xs[k], xs[k], fs[k] != 0u);
            var out = acc;
            if (MODE == 1u) {
                out = select(last, T(0), fs[k] != 0u);
            }
            buf_v[slot(lid * ITEMS + k)] = out;
        }
        workgroupBarrier();
        for (var k = 0u; k < ITEMS; k += 1u) {
            let j = k * 256u + lid;
            let i = t * TILE + j;
            if (i < params.n) {
                dst[i] = buf_v[slot(j)];
            }
        }
        // The next tile overwrites buf_v.
        workgroupBarrier();
    }
}
