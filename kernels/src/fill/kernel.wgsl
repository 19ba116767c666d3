// sequence: dst[i] = start + i * step, grid-stride.
struct Params {
    start: T,
    step: T,
    n: u32,
}
@group(1) @binding(0) var<uniform> params: Params;

override block_x: u32 = 256;
override block_y: u32 = 1;
override block_z: u32 = 1;

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * block_x;
    for (var i = gid.x; i < params.n; i += stride) {
        dst[i] = params.start + T(i) * params.step;
    }
}
