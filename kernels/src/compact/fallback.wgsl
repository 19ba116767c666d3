// Compaction's tile pass (WGSL), on tile.wgsl with C = u32: each
// workgroup counts what its tile keeps (kept_slot: the tile holds counts,
// 1 for a kept element, or the values' bits, asked of the predicate),
// learns how many earlier tiles kept from tile_prefix, and writes its kept
// elements (out_values: the values, or their indices) in order from
// there: 4-byte ones (STAGED) gathered in workgroup memory
// first and written with coalesced stores, wider ones by each invocation
// in turn. The last tile writes the total to count (a u64 as two u32
// words). keep(v), kept_slot, out_values, STAGED, stage_in, stage_out and
// out_direct come with the bindings.
struct Params {
    value: T,
    n: u32,
}
@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(TILE_ARGS) {
    TILE_INIT
    for (var k = 0u; ; k += 1u) {
        let t = claim_tile(lid, wg.x + k * ng.x);
        if (t >= tiles) {
            break;
        }
        let first = t * TILE + lid * ITEMS;
        var kept = 0u;
        var c = 0u;
        for (var k = 0u; k < ITEMS; k += 1u) {
            if (first + k < params.n && kept_slot(slot(lid * ITEMS + k))) {
                kept |= 1u << k;
                c += 1u;
            }
        }
        // Before any look-back's fallback reloads buf_v.
        let outs = out_values(first, lid);
        let total = scan_parts(lid, Part(c, 0u));
        var before = 0u;
        if (lid > 0u) {
            before = part_v[lid - 1u];
        }
        let prefix = tile_prefix(t, lid, total);
        if (STAGED) {
            // The kept elements, in order, into buf_v (every read of it
            // is done after this barrier), then out in coalesced stores.
            workgroupBarrier();
            var j = before;
            for (var k = 0u; k < ITEMS; k += 1u) {
                if (((kept >> k) & 1u) != 0u) {
                    buf_v[slot(j)] = stage_in(outs[k]);
                    j += 1u;
                }
            }
            workgroupBarrier();
            for (var i = lid; i < total.v; i += 256u) {
                dst[prefix.v + i] = stage_out(buf_v[slot(i)]);
            }
        } else {
            var at = prefix.v + before;
            for (var k = 0u; k < ITEMS; k += 1u) {
                if (((kept >> k) & 1u) != 0u) {
                    dst[at] = out_direct(outs[k]);
                    at += 1u;
                }
            }
        }
        if (t + 1u == tiles && lid == 0u) {
            count[0] = prefix.v + total.v;
            count[1] = 0u;
        }
        // The next tile overwrites buf_v.
        workgroupBarrier();
    }
}
