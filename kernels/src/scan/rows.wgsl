// A scan's tile pass by rows (WGSL, after the bindings), for unsegmented
// scans of 4-byte values, carried or alone, on adapters whose subgroups
// tile the workgroup. Tile t is ITEMS rows of 256 consecutive elements;
// the invocation of rank r (lanes in order, subgroups in order) holds
// element r of each row, loaded and stored coalesced straight from and to
// memory: no transpose through workgroup memory, whose loads, stores and
// barriers cost the tile pass on tile.wgsl more than its memory does.
// Each row is scanned by subgroup scans; the rows' subgroup totals, row by
// row, by one more subgroup scan across the workgroup (ITEMS is at most the
// subgroup size, so there are at most 256 of them); each element then adds
// the carry of the tiles before its own (CARRY_AT, read before the
// tile's elements), the totals before its subgroup's, and its subgroup's
// scan. SCAN_MODE 0: inclusive; 1: exclusive. In place, `src` is `dst`:
// every element of the tile is read before any is written.
const ITEMS: u32 = LOOKBACK_ITEMS;
const TILE: u32 = 256u * ITEMS;
const MODE: u32 = SCAN_MODE;
struct Params {
    n: u32,
}

var<workgroup> row_totals: array<C, 256>;
var<workgroup> level_totals: array<C, 64>;

fn rank(local: u32) -> u32 {
    return sg_id * sg_size + sg_lane;
}

fn tile_count() -> u32 {
    return params.n / TILE + select(0u, 1u, params.n % TILE != 0u);
}

// load_rows(base) -> array<C, ITEMS>, elements base + 256 k (zero past
// n), comes from the host unrolled: every load issued before any is used.

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(TILE_ARGS) {
    TILE_INIT
    let groups = 256u / sg_size;
    for (var t = wg.x; t < tiles; t += ng.x) {
        let carry = CARRY_AT;
        let base = t * TILE + lid;
        let xs = load_rows(base);
        var scanned: array<C, ITEMS>;
        for (var k = 0u; k < ITEMS; k += 1u) {
            let inc = subgroupInclusiveAdd(xs[k]);
            if (sg_lane + 1u == sg_size) {
                row_totals[k * groups + sg_id] = inc;
            }
            if (MODE == 1u) {
                scanned[k] = subgroupExclusiveAdd(xs[k]);
            } else {
                scanned[k] = inc;
            }
        }
        workgroupBarrier();
        // The exclusive scan of the ITEMS x groups subgroup totals, row by
        // row, in place: each invocation reads and writes its own slot.
        var v = C(0);
        if (lid < ITEMS * groups) {
            v = row_totals[lid];
        }
        let e = subgroupExclusiveAdd(v);
        if (sg_lane + 1u == sg_size) {
            level_totals[sg_id] = e + v;
        }
        workgroupBarrier();
        var before = C(0);
        for (var s = 0u; s < sg_id; s += 1u) {
            before += level_totals[s];
        }
        if (lid < ITEMS * groups) {
            row_totals[lid] = before + e;
        }
        workgroupBarrier();
        for (var k = 0u; k < ITEMS; k += 1u) {
            let i = base + k * 256u;
            if (i < params.n) {
                dst[i] = carry + row_totals[k * groups + sg_id] + scanned[k];
            }
        }
        // The next tile writes row_totals and level_totals again.
        workgroupBarrier();
    }
}
