// sort: one pass of an LSD radix sort on 8-bit digits (four passes sort
// 32-bit keys), in three entry points, as on CUDA:
//
//   UPSWEEP:   each tile of TILE keys counts its digits into
//              hist[digit * tiles + tile] (workgroup atomics).
//   SCAN:      each digit's row of hist becomes its exclusive prefix sum
//              over tiles (in place); totals[digit] gets the row's sum.
//   DOWNSWEEP: each key goes to base[digit] + hist[digit * tiles + tile] +
//              (earlier keys of its digit in its tile), base being the
//              exclusive scan of totals: a stable counting sort per pass.
//
// A tile is one key per invocation; a key's rank in its tile is counted
// directly from the tile's digits in workgroup memory (at most TILE - 1
// comparisons, two barriers per tile).
//
// Keys move as the patterns of keys.wgsl (map_key, unmap_key), which the
// host puts before this file with io.wgsl's bindings. flags: 1 map keys read, 2 unmap keys
// written, 4 move values, 8 values are input positions (argsort), 16 write
// no keys.
struct Params {
    n: u32,
    tiles: u32,
    shift: u32,
    flags: u32,
}
@group(0) @binding(4) var<storage, read_write> hist: array<u32>;
@group(0) @binding(5) var<storage, read_write> totals: array<u32>;
const TILE: u32 = 256u;
const NO_DIGIT: u32 = 256u;

var<workgroup> counts: array<atomic<u32>, 256>;

@compute @workgroup_size(block_x, block_y, block_z)
fn UPSWEEP(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    for (var tile = wid.x; tile < params.tiles; tile += groups.x) {
        atomicStore(&counts[tid], 0u);
        workgroupBarrier();
        let idx = tile * TILE + tid;
        if (idx < params.n) {
            var b = keys_in[idx];
            if ((params.flags & 1u) != 0u) {
                b = map_key(b);
            }
            atomicAdd(&counts[(b >> params.shift) & 255u], 1u);
        }
        workgroupBarrier();
        hist[tid * params.tiles + tile] = atomicLoad(&counts[tid]);
        // The next tile clears `counts`.
        workgroupBarrier();
    }
}

var<workgroup> scan_buf: array<u32, 256>;

// Exclusive prefix sum of one value per invocation over the workgroup, and
// the total (Hillis-Steele). Contains barriers: call from uniform control flow.
fn workgroup_scan(tid: u32, v: u32) -> vec2<u32> {
    scan_buf[tid] = v;
    workgroupBarrier();
    for (var d = 1u; d < 256u; d = d << 1u) {
        var x = 0u;
        if (tid >= d) {
            x = scan_buf[tid - d];
        }
        workgroupBarrier();
        scan_buf[tid] += x;
        workgroupBarrier();
    }
    let inclusive = scan_buf[tid];
    let total = scan_buf[255];
    workgroupBarrier();
    return vec2<u32>(inclusive - v, total);
}

@compute @workgroup_size(block_x, block_y, block_z)
fn SCAN(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let tiles = params.tiles;
    for (var d = wid.x; d < 256u; d += groups.x) {
        var carry = 0u;
        for (var start = 0u; start < tiles; start += 256u) {
            let t = start + tid;
            var v = 0u;
            if (t < tiles) {
                v = hist[d * tiles + t];
            }
            let r = workgroup_scan(tid, v);
            if (t < tiles) {
                hist[d * tiles + t] = carry + r.x;
            }
            carry += r.y;
        }
        if (tid == 0u) {
            totals[d] = carry;
        }
    }
}

var<workgroup> digit_base: array<u32, 256>;
var<workgroup> global_start: array<u32, 256>;
var<workgroup> digits: array<u32, 256>;

@compute @workgroup_size(block_x, block_y, block_z)
fn DOWNSWEEP(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let flags = params.flags;
    digit_base[tid] = workgroup_scan(tid, totals[tid]).x;
    for (var tile = wid.x; tile < params.tiles; tile += groups.x) {
        let idx = tile * TILE + tid;
        let valid = idx < params.n;
        var key = 0u;
        var val = idx;
        var digit = NO_DIGIT;
        if (valid) {
            key = keys_in[idx];
            if ((flags & 1u) != 0u) {
                key = map_key(key);
            }
            if ((flags & 12u) == 4u) {
                val = vals_in[idx];
            }
            digit = (key >> params.shift) & 255u;
        }
        digits[tid] = digit;
        global_start[tid] = digit_base[tid] + hist[tid * params.tiles + tile];
        workgroupBarrier();
        if (valid) {
            var rank = 0u;
            for (var j = 0u; j < tid; j += 1u) {
                rank += select(0u, 1u, digits[j] == digit);
            }
            let dst = global_start[digit] + rank;
            if ((flags & 16u) == 0u) {
                keys_out[dst] = select(key, unmap_key(key), (flags & 2u) != 0u);
            }
            if ((flags & 4u) != 0u) {
                vals_out[dst] = val;
            }
        }
        // The next tile overwrites `digits` and `global_start`.
        workgroupBarrier();
    }
}
