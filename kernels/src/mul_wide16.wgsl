// The 64-bit product of a and b as (low word, high word): the low word as
// the hardware gives it, the high word from 16-bit halves, the cross terms'
// sum and its carries (on the H200's Vulkan driver the uniform fill ran at
// 0.219 ms for 64 Mi f32 so, against 0.247 with the high word summed from
// four 16-bit products alone). Where kiln writes a kernel's SPIR-V itself
// (kiln-wgpu's `spirv.rs`, `Features::wide_multiply`), each call of
// kiln_mul_wide is one OpUMulExtended instead, and this body is not run.
fn kiln_mul_wide(a: u32, b: u32) -> vec2<u32> {
    let al = a & 0xffffu;
    let ah = a >> 16u;
    let bl = b & 0xffffu;
    let bh = b >> 16u;
    let t = al * bh + ah * bl;
    let c1 = select(0u, 0x10000u, t < al * bh);
    let ll = al * bl;
    let lo = ll + (t << 16u);
    let c2 = select(0u, 1u, lo < ll);
    return vec2<u32>(lo, ah * bh + (t >> 16u) + c1 + c2);
}
