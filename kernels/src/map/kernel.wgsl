// map: map_out[i] = APPLY(map_in[i]), grid-stride. In place, `map_in` is defined to `map_out`.
struct Params {
    n: u32,
}
@group(1) @binding(0) var<uniform> params: Params;

override block_x: u32 = 256;
override block_y: u32 = 1;
override block_z: u32 = 1;

fn apply(v: T) -> T {
    return APPLY;
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * block_x;
    for (var i = gid.x; i < params.n; i += stride) {
        map_out[i] = apply(map_in[i]);
    }
}
