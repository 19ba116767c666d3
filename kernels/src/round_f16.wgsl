// An f32 rounded to the nearest f16 value (ties to even), returned as the
// f32 of that value: infinities and NaN as they are, past the largest f16
// an infinity. Integer arithmetic on the bits, not `f32(f16(x))`: WGSL lets
// a conversion round either way, and NVIDIA's Vulkan compiler drops the
// round trip or narrows the f32 operation before it into f16 arithmetic
// (whose division is a * (1 / b), overflowing for small b).
fn kiln_round_f16(x: f32) -> f32 {
    let b = bitcast<u32>(x);
    let a = b & 0x7fffffffu;
    if (a >= 0x7f800000u) {
        return x;
    }
    if (a < 0x38800000u) {
        // Below 2^-14, f16's subnormals: multiples of 2^-24, each step exact.
        return round(x * 16777216.0) * 5.9604645e-8;
    }
    var r = (a + 0xfffu + ((a >> 13u) & 1u)) & 0xffffe000u;
    if (r >= 0x47800000u) {
        r = 0x7f800000u;
    }
    return bitcast<f32>((b & 0x80000000u) | r);
}
