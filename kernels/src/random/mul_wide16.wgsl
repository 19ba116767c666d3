// The 64-bit product of a and b as (low word, high word), the high word
// from 16-bit halves, for adapters without 64-bit integers.
fn kiln_mul_wide(a: u32, b: u32) -> vec2<u32> {
    let al = a & 0xffffu;
    let ah = a >> 16u;
    let bl = b & 0xffffu;
    let bh = b >> 16u;
    let lh = al * bh;
    let hl = ah * bl;
    let mid = ((al * bl) >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
    return vec2<u32>(a * b, ah * bh + (lh >> 16u) + (hl >> 16u) + (mid >> 16u));
}
