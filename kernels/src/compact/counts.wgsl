// Compaction, first pass (WGSL): counts[t] = how many elements of tile t
// (1024: 256 invocations x 4) satisfy the predicate. keep(v) comes with the
// bindings. Workgroups of 256, grid-stride over tiles.
struct Params {
    value: T,
    n: u32,
}
@group(1) @binding(0) var<uniform> params: Params;

override block_x: u32 = 256;
override block_y: u32 = 1;
override block_z: u32 = 1;

var<workgroup> part: array<u32, 256>;

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>,
          @builtin(num_workgroups) groups: vec3<u32>) {
    let tiles = params.n / 1024u + select(0u, 1u, (params.n & 1023u) != 0u);
    for (var t = wg.x; t < tiles; t += groups.x) {
        var c = 0u;
        for (var k = 0u; k < 4u; k += 1u) {
            let i = t * 1024u + lid * 4u + k;
            if (i < params.n && keep(src[i])) {
                c += 1u;
            }
        }
        part[lid] = c;
        workgroupBarrier();
        for (var s = 128u; s > 0u; s >>= 1u) {
            if (lid < s) {
                part[lid] += part[lid + s];
            }
            workgroupBarrier();
        }
        if (lid == 0u) {
            counts[t] = part[0];
        }
        workgroupBarrier();
    }
}
