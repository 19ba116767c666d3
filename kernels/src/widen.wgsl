// The 16-bit floats to f32 and back (`DST` the destination's type): one
// rounding to nearest, grid-stride, one element an invocation a step.
@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * block_x;
    for (var i = gid.x; i < params.n; i += stride) {
        dst[i] = DST(src[i]);
    }
}
