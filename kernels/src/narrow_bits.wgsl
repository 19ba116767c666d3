// f32 to bf16 as bits (WGSL has no bf16 type), rounded to nearest, ties to
// even, NaN kept quiet with its sign. One invocation a word of the output
// (elements 2j and 2j + 1), so no two write one word; where n is odd the
// last word's high half, past the output, is kept as it was.
fn kiln_bf16_bits(b: u32) -> u32 {
    if ((b & 0x7fffffffu) > 0x7f800000u) {
        return (b >> 16u) | 0x40u;
    }
    return (b + 0x7fffu + ((b >> 16u) & 1u)) >> 16u;
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * block_x;
    for (var j = gid.x; j < params.n / 2u + (params.n & 1u); j += stride) {
        let lo = kiln_bf16_bits(src[2u * j]);
        var hi = dst[j] >> 16u;
        if (2u * j + 1u < params.n) {
            hi = kiln_bf16_bits(src[2u * j + 1u]);
        }
        dst[j] = lo | (hi << 16u);
    }
}
