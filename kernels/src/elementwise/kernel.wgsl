// Elementwise binary operations: ew_out[i] = COMBINE with a = ew_a[i], b = ew_b[i]
// (axpy: a = x[i], b = y[i], and COMBINE is alpha * a + b). In place, ew_a
// (or ew_b for axpy) is defined to ew_out. Grid-stride.
struct Params {
    PARAMS_FIELDS
}
@group(1) @binding(0) var<uniform> params: Params;

override block_x: u32 = 256;
override block_y: u32 = 1;
override block_z: u32 = 1;

fn combine(a: T, b: T) -> T {
    return COMBINE;
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * block_x;
    for (var i = gid.x; i < params.n; i += stride) {
        ew_out[i] = combine(ew_a[i], ew_b[i]);
    }
}
