// sequence: dst[i] = start + i * step, grid-stride. The product is rounded
// on its own (kiln_product, written for T by the host: it hides the product
// behind a run-time 0 no compiler can see through), so no compiler fuses
// it into the sum and every backend rounds alike.
struct Params {
    start: T,
    step: T,
    n: u32,
}
@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * block_x;
    // 0 and 0 again: n never reaches 2^32 - 1 or 2^32 - 2 (no binding holds
    // that many elements), which the compiler cannot know.
    let zero = select(0u, 1u, params.n == 0xffffffffu);
    let zero2 = select(0u, 1u, params.n == 0xfffffffeu);
    for (var i = gid.x; i < params.n; i += stride) {
        dst[i] = params.start + kiln_product(T(i), params.step, zero, zero2);
    }
}
