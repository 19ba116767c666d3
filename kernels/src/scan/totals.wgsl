// The first pass of a reduce-then-scan (after tile.wgsl and a parts
// file): totals[t] = the sum of tile_value over tile t, for kernels
// without segments. Each invocation sums ITEMS elements 256 apart
// (tile_sum, unrolled by the host: every load issued before the first
// add), coalesced, straight from memory; the workgroup adds the 256 sums.
// Workgroups of 256 take tiles grid-stride, as the last pass does.
// Params (n, and what else the kernel's tile_value reads) comes with the
// bindings.
@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(TILE_ARGS) {
    TILE_INIT
    for (var t = wg.x; t < tiles; t += ng.x) {
        let total = scan_parts(lid, Part(tile_sum(t, lid), 0u));
        if (lid == 0u) {
            totals[t] = total.v;
        }
    }
}
