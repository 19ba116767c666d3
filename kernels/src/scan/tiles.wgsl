// What the two tile passes (sums.wgsl, kernel.wgsl) share: their scalar,
// workgroup memory for the (value, flag) pairs of 256 invocations, and the
// segmented sum.
struct Params {
    n: u32,
}
var<workgroup> part_v: array<T, 256>;
var<workgroup> part_f: array<u32, 256>;

// `a` then `b` under the segmented sum: a start in `b` discards `a`.
fn join(av: T, bv: T, bf: u32) -> T {
    return select(av + bv, bv, bf != 0u);
}

