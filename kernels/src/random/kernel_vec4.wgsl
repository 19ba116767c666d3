// The fill of whole blocks of four 4-byte values, each block stored as one
// vec4 (`dst` is bound as array<vec4<T>>; the caller fills a last partial
// block with kernel.wgsl). One block per invocation, grid-stride. After
// philox.wgsl.
@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * block_x;
    let blocks = params.n / 4u;
    let keys = kiln_philox_keys(vec2<u32>(params.seed_lo, params.seed_hi));
    for (var b = gid.x; b < blocks; b += stride) {
        let lo = params.ctr_lo + b;
        let hi = params.ctr_hi + select(0u, 1u, lo < b);
        let v = kiln_values(kiln_philox(vec4<u32>(lo, hi, 0u, 0u), keys));
        dst[b] = vec4<T>(v[0], v[1], v[2], v[3]);
    }
}
