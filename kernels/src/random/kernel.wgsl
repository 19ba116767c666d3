// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, SC'11): block b of the
// stream is the cipher of counter (ctr + b, 0, 0) under key (seed), and
// gives PER values. One block per invocation, grid-stride. `kiln_mul_wide`
// comes first (mul_wide64.wgsl or mul_wide16.wgsl).
struct Params {
    seed_lo: u32,
    seed_hi: u32,
    ctr_lo: u32,
    ctr_hi: u32,
    // 1.0 and 0, read at run time (see kiln_o in the normal transform).
    one: f32,
    zero: u32,
    n: u32,
}
fn kiln_philox(c0: vec4<u32>, k0: vec2<u32>) -> vec4<u32> {
    var c = c0;
    var k = k0;
    for (var r = 0; r < 10; r++) {
        let p0 = kiln_mul_wide(0xD2511F53u, c.x);
        let p1 = kiln_mul_wide(0xCD9E8D57u, c.z);
        c = vec4<u32>(p1.y ^ c.y ^ k.x, p1.x, p0.y ^ c.w ^ k.y, p0.x);
        k += vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
    }
    return c;
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * block_x;
    let n = params.n;
    let blocks = n / PER + select(0u, 1u, n % PER != 0u);
    for (var b = gid.x; b < blocks; b += stride) {
        let lo = params.ctr_lo + b;
        let hi = params.ctr_hi + select(0u, 1u, lo < b);
        let w = kiln_philox(vec4<u32>(lo, hi, 0u, 0u), vec2<u32>(params.seed_lo, params.seed_hi));
        let v = kiln_values(w);
        let at = b * PER;
        for (var k = 0u; k < PER && k < n - at; k++) {
            dst[at + k] = v[k];
        }
    }
}
