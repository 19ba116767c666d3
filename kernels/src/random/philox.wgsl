// Philox4x32-10 (Salmon, Moraes, Dror and Shaw, SC'11): block b of the
// stream is the cipher of counter (ctr + b, 0, 0) under key (seed). The
// scalars and the cipher, which kernel.wgsl and kernel_vec4.wgsl share;
// `kiln_mul_wide` comes first (mul_wide64.wgsl or ../mul_wide16.wgsl).
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
// The ten round keys of key k0, worked out once per invocation: each
// invocation strides over many blocks (the host caps the grid), as CUDA's
// threads do (kernel.cu).
fn kiln_philox_keys(k0: vec2<u32>) -> array<vec2<u32>, 10> {
    var keys: array<vec2<u32>, 10>;
    var k = k0;
    for (var r = 0; r < 10; r++) {
        keys[r] = k;
        k += vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
    }
    return keys;
}
fn kiln_philox(c0: vec4<u32>, keys: array<vec2<u32>, 10>) -> vec4<u32> {
    var c = c0;
    for (var r = 0; r < 10; r++) {
        let p0 = kiln_mul_wide(0xD2511F53u, c.x);
        let p1 = kiln_mul_wide(0xCD9E8D57u, c.z);
        c = vec4<u32>(p1.y ^ c.y ^ keys[r].x, p1.x, p0.y ^ c.w ^ keys[r].y, p0.x);
    }
    return c;
}

