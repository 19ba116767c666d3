// The first pass of a reduce-then-scan (after tile.wgsl and a parts
// file): totals[t] = the sum of tile_value over tile t, for kernels
// without segments. Each invocation sums ITEMS elements 256 apart
// (tile_sum, unrolled by the host: every load issued before the first
// add), coalesced, straight from memory; the workgroup adds the 256 sums.
// Workgroups of 256 take tiles grid-stride, as the last pass does.
// Params (n, and what else the kernel's tile_value reads) comes with the
// bindings.
@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(local_invocation_index) local: u32, @builtin(workgroup_id) wg: vec3<u32>,
          @builtin(num_workgroups) ng: vec3<u32> SG_ARGS) {
    SG_INIT
    let lid = rank(local);
    let tiles = params.n / TILE + select(0u, 1u, params.n % TILE != 0u);
    for (var t = wg.x; t < tiles; t += ng.x) {
        let total = scan_parts(lid, Part(tile_sum(t, lid), 0u));
        if (lid == 0u) {
            totals[t] = total.v;
        }
    }
}
