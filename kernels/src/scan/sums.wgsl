// Scan, first pass of three (WGSL): put_sum(t, ...) stores the fold of tile
// t (1024 elements: 256 invocations x 4) as a (value, flag) pair: its sum
// since its last segment start, and whether it holds one. flag_at(i) and
// put_sum come with the bindings. Workgroups of 256, grid-stride over tiles.
// After tiles.wgsl.
@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>,
          @builtin(num_workgroups) groups: vec3<u32>) {
    let tiles = params.n / 1024u + select(0u, 1u, (params.n & 1023u) != 0u);
    for (var t = wg.x; t < tiles; t += groups.x) {
        var v = T(0);
        var f = 0u;
        for (var k = 0u; k < 4u; k += 1u) {
            let i = t * 1024u + lid * 4u + k;
            if (i < params.n) {
                let fi = flag_at(i);
                v = join(v, src[i], fi);
                f = f | fi;
            }
        }
        part_v[lid] = v;
        part_f[lid] = f;
        workgroupBarrier();
        // A tree over adjacent ranges, so the (non-commutative) order is kept.
        for (var s = 1u; s < 256u; s <<= 1u) {
            if ((lid & (2u * s - 1u)) == 0u) {
                part_v[lid] = join(part_v[lid], part_v[lid + s], part_f[lid + s]);
                part_f[lid] = part_f[lid] | part_f[lid + s];
            }
            workgroupBarrier();
        }
        if (lid == 0u) {
            put_sum(t, part_v[0], part_f[0]);
        }
        workgroupBarrier();
    }
}
