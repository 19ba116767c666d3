// Scan in one pass (WGSL), on lookback.wgsl: each workgroup scans its
// tile's invocation totals, learns the sum of every earlier tile from
// tile_prefix, and writes the tile through workgroup memory with coalesced
// stores. One read and one write per element, plus whatever fallbacks
// reread. SCAN_MODE 0: inclusive; 1: exclusive (0 at a segment start). The
// input is never written (a fallback rereads it), so the scan is not in
// place.
struct Params {
    n: u32,
}
const MODE: u32 = SCAN_MODE;

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(TILE_ARGS) {
    TILE_INIT
    for (var k = 0u; ; k += 1u) {
        let t = claim_tile(lid, wg.x + k * ng.x);
        if (t >= tiles) {
            break;
        }
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
        let prefix = tile_prefix(t, lid, total);
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
