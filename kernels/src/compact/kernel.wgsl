// Compaction, last pass (WGSL): tile t writes its kept elements (OUT_VALUE:
// `src[i]`, or `i` for indices) in order from dst[offsets[t]], offsets being
// the exclusive scan of the first pass's counts, and the last tile writes
// the total to count (a u64 as two u32 words). keep(v) comes with the
// bindings. Workgroups of 256, grid-stride over tiles of 1024.
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
        let first = t * 1024u + lid * 4u;
        var kept = 0u;
        var c = 0u;
        for (var k = 0u; k < 4u; k += 1u) {
            let i = first + k;
            if (i < params.n && keep(src[i])) {
                kept |= 1u << k;
                c += 1u;
            }
        }
        part[lid] = c;
        workgroupBarrier();
        // Hillis-Steele inclusive scan of the 256 counts.
        for (var o = 1u; o < 256u; o <<= 1u) {
            var v = part[lid];
            if (lid >= o) {
                v += part[lid - o];
            }
            workgroupBarrier();
            part[lid] = v;
            workgroupBarrier();
        }
        var at = offsets[t] + part[lid] - c;
        for (var k = 0u; k < 4u; k += 1u) {
            if (((kept >> k) & 1u) != 0u) {
                let i = first + k;
                dst[at] = OUT_VALUE;
                at += 1u;
            }
        }
        if (t + 1u == tiles && lid == 255u) {
            count[0] = offsets[t] + part[255];
            count[1] = 0u;
        }
        workgroupBarrier();
    }
}
