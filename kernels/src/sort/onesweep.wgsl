// sort (WGSL): one onesweep pass (onesweep.cu's STEP 1) for adapters with
// subgroup operations, with decoupled look-back made safe without forward
// progress between workgroups by decoupled fallback (Smith, Levien and
// Owens, SPAA 2025), as the one-pass scan does.
//
// Workgroups of 256 invocations take tiles of TILE = 256 x ITEMS keys in
// order from a counter (after the four passes' status words), until none is
// left. For each tile:
//
//   1. Subgroup g holds keys g * sg_size * ITEMS + sg_size * i + lane (i <
//      ITEMS): its rows in order, each row coalesced. A key's place among
//      its subgroup's keys of its digit is the count of them in earlier rows
//      (the subgroup's counter of the digit) plus those in lower lanes of
//      its row: eight ballots find the lanes of the same digit, the last of
//      them advances the counter (16-bit counters, two digits a word).
//   2. Per digit: the subgroups' counts become each subgroup's start within
//      the digit's run in the tile; their sum is the tile's count of the
//      digit, published at once (AGGREGATE). One workgroup scan over the
//      digits gives each run's start in the tile, and the digit's start in
//      the output (the exclusive sum of the pass's digit counts).
//   3. Look-back, one invocation per digit: the tiles before this one are
//      read one at a time, their counts added until a PREFIX (the keys of
//      the digit up to and including that tile, plus the digit's output
//      start); each invocation walks alone, with no barrier between reads.
//      Where a tile has published nothing after SPIN reads, its workgroup
//      may not run before this one ends, so the whole workgroup counts that
//      tile's digits from its keys, and the invocations stuck there go on
//      behind it. Then the tile publishes its PREFIX.
//   4. The keys go to workgroup memory in digit order, then out: slot s of
//      the tile to the digit's output start plus s less the run's start in
//      the tile (consecutive invocations write consecutive keys of a run).
//      Values take the same way after the keys.
//
// Status words, per pass: one per tile and digit, the state in the top two
// bits (0 nothing yet, AGGREGATE, PREFIX), the count in the low 30; both
// travel in one atomic word, and nothing else is published through them.
// 30 bits count up to 2^30 - 1 keys. Past the last key a tile is padded
// with the pattern whose every digit is 255: pads rank after every key, so
// they take the slots from `count` on and move nothing; only digit 255's
// published count leaves them out.
//
// flags as kernel.wgsl's: 1 map keys read, 2 unmap keys written, 4 move
// values, 8 values are input positions (argsort), 16 write no keys. The
// keys and values are io.wgsl's bindings, which the host puts first.
struct Params {
    n: u32,
    tiles: u32,
    pass_index: u32,
    flags: u32,
}
@group(0) @binding(4) var<storage, read> counts: array<u32>;
@group(0) @binding(5) var<storage, read_write> status: array<atomic<u32>>;
const ITEMS: u32 = SORT_ITEMS;
// The most subgroups a workgroup holds: 256 over the adapter's smallest subgroup.
const SUBS: u32 = SORT_SUBS;
const SPIN: u32 = SORT_SPIN;
const VALUES: bool = SORT_VALUES;
const TILE: u32 = 256u * ITEMS;
const AGGREGATE: u32 = 0x40000000u;
const PREFIX: u32 = 0x80000000u;
const COUNT_MASK: u32 = 0x3fffffffu;
const PAD: u32 = 0xffffffffu;

// The tile in digit order (keys, then values).
var<workgroup> items: array<u32, TILE>;
// Subgroup g's counter of digit d: bits 16 (d & 1).. of word g * 128 + d / 2.
var<workgroup> sub_counts: array<atomic<u32>, SUBS * 128u>;
// Per digit: the tile's count of it, then the start of its run in the tile.
var<workgroup> local_start: array<u32, 256>;
// Per digit: its output start less its run's start in the tile (modulo 2^32).
var<workgroup> to_global: array<u32, 256>;
var<workgroup> fallback: array<atomic<u32>, 256>;
var<workgroup> sub_sums: array<vec2<u32>, SUBS>;
var<workgroup> wg_tile: u32;
var<workgroup> wg_word: u32;
var<workgroup> wg_max: atomic<u32>;

var<private> sg_lane: u32;
var<private> sg_size: u32;
var<private> sg_id: u32;
var<private> lid: u32;
// This invocation's digit in the per-digit steps: the invocations in
// subgroup order, so that subgroup scans run in digit order.
var<private> me: u32;

fn digit_of(b: u32) -> u32 {
    return (b >> (8u * params.pass_index)) & 255u;
}

// The largest `v` of the workgroup's (uniform). Every invocation must call it.
fn workgroup_max(v: u32) -> u32 {
    atomicMax(&wg_max, v);
    workgroupBarrier();
    if (lid == 0u) {
        wg_word = atomicExchange(&wg_max, 0u);
    }
    return workgroupUniformLoad(&wg_word);
}

// Exclusive sums over the 256 digits of two counts per digit (this
// invocation's digit `me` holds `v`). Every invocation must call it.
fn digit_scan(v: vec2<u32>) -> vec2<u32> {
    let incl = subgroupInclusiveAdd(v);
    if (sg_lane == sg_size - 1u) {
        sub_sums[sg_id] = incl;
    }
    workgroupBarrier();
    var before = vec2<u32>(0u);
    for (var g = 0u; g < sg_id; g += 1u) {
        before += sub_sums[g];
    }
    // sub_sums is read before the next scan writes it.
    workgroupBarrier();
    return before + incl - v;
}

// Tile t's count of every digit, from its keys (a full tile), into
// `fallback`. Every invocation must call it.
fn count_tile(t: u32) {
    atomicStore(&fallback[me], 0u);
    workgroupBarrier();
    let base = t * TILE;
    for (var j = 0u; j < ITEMS; j += 1u) {
        var b = keys_in[base + j * 256u + me];
        if ((params.flags & 1u) != 0u) {
            b = map_key(b);
        }
        atomicAdd(&fallback[digit_of(b)], 1u);
    }
    workgroupBarrier();
}

// The keys of digit `me` in the tiles before `tile`, plus the digit's
// output start `start`. Each invocation walks back alone, one tile a read,
// until a PREFIX or a tile that stays silent for SPIN reads; then, if any
// is stuck, the whole workgroup counts the latest tile one is stuck at, the
// invocations stuck there take its counts and walk on. Every invocation
// must call it.
fn look_back(tile: u32, start: u32, sbase: u32) -> u32 {
    if (tile == 0u) {
        return start;
    }
    var sum = 0u;
    var done = false;
    // Tiles [0, t) are still to be added.
    var t = tile;
    loop {
        if (!done) {
            loop {
                var w = 0u;
                for (var s = 0u; s < SPIN; s += 1u) {
                    w = atomicLoad(&status[sbase + (t - 1u) * 256u + me]);
                    if (w != 0u) {
                        break;
                    }
                }
                if (w == 0u) {
                    break;
                }
                sum += w & COUNT_MASK;
                t -= 1u;
                if ((w & PREFIX) != 0u) {
                    done = true;
                    break;
                }
            }
        }
        // Tile 0 always ends a walk, so an invocation not done has t >= 1.
        let top = workgroup_max(select(t, 0u, done));
        if (top == 0u) {
            break;
        }
        count_tile(top - 1u);
        if (!done && t == top) {
            sum += atomicLoad(&fallback[me]);
            t -= 1u;
            if (t == 0u) {
                sum += start;
                done = true;
            }
        }
    }
    return sum;
}

fn count_bits(m: vec4<u32>) -> u32 {
    let c = countOneBits(m);
    return c.x + c.y + c.z + c.w;
}

fn last_lane(m: vec4<u32>) -> u32 {
    for (var k = 3u; k > 0u; k -= 1u) {
        if (m[k] != 0u) {
            return 32u * k + firstLeadingBit(m[k]);
        }
    }
    return firstLeadingBit(m[0]);
}

// The lanes up to and including this one, as a ballot.
fn lanes_upto() -> vec4<u32> {
    let w = sg_lane / 32u;
    let bits = (2u << (sg_lane & 31u)) - 1u;
    var m = vec4<u32>(0u);
    for (var k = 0u; k < 4u; k += 1u) {
        m[k] = select(select(0u, bits, k == w), 0xffffffffu, k < w);
    }
    return m;
}

// Key `i` of this lane's rows (pattern; PAD past the tile's `count`).
fn load_key(base: u32, first: u32, i: u32, count: u32) -> u32 {
    let local = first + i * sg_size;
    if (local >= count) {
        return PAD;
    }
    let raw = keys_in[base + local];
    return select(raw, map_key(raw), (params.flags & 1u) != 0u);
}

// The value of key `i` of this lane's rows.
fn load_val(base: u32, first: u32, i: u32, count: u32) -> u32 {
    let local = first + i * sg_size;
    if (local >= count) {
        return 0u;
    }
    return select(vals_in[base + local], base + local, (params.flags & 8u) != 0u);
}

// The place of pattern `b` among this subgroup's keys of its digit so far
// (rows in order); advances the subgroup's counter. Every lane of the
// subgroup must call it.
fn rank_key(b: u32, upto: vec4<u32>) -> u32 {
    let d = digit_of(b);
    var peers = subgroupBallot(true);
    for (var k = 0u; k < 8u; k += 1u) {
        let bit = ((d >> k) & 1u) != 0u;
        let vote = subgroupBallot(bit);
        peers &= select(~vote, vote, bit);
    }
    let below = count_bits(peers & upto);
    let leader = last_lane(peers);
    var before = 0u;
    if (sg_lane == leader) {
        let sh = 16u * (d & 1u);
        before = (atomicAdd(&sub_counts[sg_id * 128u + d / 2u], below << sh) >> sh) & 0xffffu;
    }
    return subgroupShuffle(before, leader) + below - 1u;
}

// Slot `slot` of the tile in digit order to the output (unless flag 16
// says no keys); returns its digit (0 past `count`).
fn store_key(slot: u32, count: u32) -> u32 {
    if (slot >= count) {
        return 0u;
    }
    let b = items[slot];
    let d = digit_of(b);
    if ((params.flags & 16u) == 0u) {
        keys_out[to_global[d] + slot] = select(b, unmap_key(b), (params.flags & 2u) != 0u);
    }
    return d;
}

// The tile slot of pattern `b`, whose place among its subgroup's keys of
// its digit is `place`.
fn slot_of(b: u32, place: u32) -> u32 {
    let d = digit_of(b);
    let sh = 16u * (d & 1u);
    return place + local_start[d] + ((atomicLoad(&sub_counts[sg_id * 128u + d / 2u]) >> sh) & 0xffffu);
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(
    @builtin(local_invocation_index) lid_in: u32,
    @builtin(subgroup_invocation_id) sg_lane_in: u32,
    @builtin(subgroup_size) sg_size_in: u32,
    @builtin(subgroup_id) sg_id_in: u32,
) {
    lid = lid_in;
    sg_lane = sg_lane_in;
    sg_size = sg_size_in;
    sg_id = sg_id_in;
    me = sg_id * sg_size + sg_lane;
    let subs = 256u / sg_size;
    let n = params.n;
    let tiles = params.tiles;
    let flags = params.flags;
    let sbase = params.pass_index * tiles * 256u;
    let upto = lanes_upto();
    var key: array<u32, ITEMS>;
    var place: array<u32, ITEMS>;
    var val: array<u32, ITEMS>;
    var digit: array<u32, ITEMS>;
    loop {
        if (lid == 0u) {
            wg_tile = atomicAdd(&status[4u * tiles * 256u + params.pass_index], 1u);
        }
        for (var j = lid; j < subs * 128u; j += 256u) {
            atomicStore(&sub_counts[j], 0u);
        }
        let tile = workgroupUniformLoad(&wg_tile);
        if (tile >= tiles) {
            break;
        }
        let base = tile * TILE;
        let count = min(TILE, n - base);
        let first = sg_id * sg_size * ITEMS + sg_lane;

        // 1. Rank within the subgroup.
        SORT_LOAD_KEYS
        SORT_RANK_KEYS
        workgroupBarrier();

        // 2. Per digit: the subgroups' starts in its run, the tile's count.
        if (lid < 128u) {
            var run = 0u;
            for (var g = 0u; g < subs; g += 1u) {
                let c = atomicLoad(&sub_counts[g * 128u + lid]);
                atomicStore(&sub_counts[g * 128u + lid], run);
                run += c;
            }
            local_start[2u * lid] = run & 0xffffu;
            local_start[2u * lid + 1u] = run >> 16u;
        }
        workgroupBarrier();
        let total = local_start[me];
        let real = select(total, total - (TILE - count), me == 255u);
        if (tile != 0u) {
            atomicStore(&status[sbase + tile * 256u + me], AGGREGATE | real);
        }
        let starts = digit_scan(vec2<u32>(total, counts[params.pass_index * 256u + me]));

        // 3. Look back.
        let before = look_back(tile, starts.y, sbase);
        atomicStore(&status[sbase + tile * 256u + me], PREFIX | (before + real));
        local_start[me] = starts.x;
        to_global[me] = before - starts.x;
        workgroupBarrier();

        // 4. Through workgroup memory in digit order, then out.
        SORT_PLACE_KEYS
        let with_vals = VALUES && (flags & 4u) != 0u;
        if (with_vals) {
            SORT_LOAD_VALS
        }
        workgroupBarrier();
        SORT_STORE_KEYS
        if (with_vals) {
            workgroupBarrier();
            SORT_PLACE_VALS
            workgroupBarrier();
            SORT_STORE_VALS
        }
        // The next tile's counter is read, and sub_counts cleared, after
        // this one's readers are done (the barrier in workgroupUniformLoad).
        workgroupBarrier();
    }
}
