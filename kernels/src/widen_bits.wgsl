// bf16 to f32 as bits (WGSL has no bf16 type): element i is the low or
// high half of word i / 2, and its f32 is those 16 bits followed by 16
// zeros (exact). Grid-stride, one element an invocation a step.
@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * block_x;
    for (var i = gid.x; i < params.n; i += stride) {
        let word = src[i >> 1u];
        dst[i] = ((word >> ((i & 1u) * 16u)) & 0xffffu) << 16u;
    }
}
