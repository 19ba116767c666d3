// The 64-bit product of a and b as (low word, high word), in one wide
// multiply (the adapter has SHADER_INT64).
fn kiln_mul_wide(a: u32, b: u32) -> vec2<u32> {
    let p = u64(a) * u64(b);
    return vec2<u32>(u32(p), u32(p >> 32u));
}
