// The fill: block b gives PER values, stored one by one. One block per
// invocation, grid-stride. After philox.wgsl.
@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * block_x;
    let n = params.n;
    let blocks = n / PER + select(0u, 1u, n % PER != 0u);
    let keys = kiln_philox_keys(vec2<u32>(params.seed_lo, params.seed_hi));
    for (var b = gid.x; b < blocks; b += stride) {
        let lo = params.ctr_lo + b;
        let hi = params.ctr_hi + select(0u, 1u, lo < b);
        let w = kiln_philox(vec4<u32>(lo, hi, 0u, 0u), keys);
        let v = kiln_values(w);
        let at = b * PER;
        for (var k = 0u; k < PER && k < n - at; k++) {
            dst[at + k] = v[k];
        }
    }
}
