// An f32 product rounded to f16, element by element of its matrices (the
// padding of dst's rows and batch untouched); see rounded.cu.
struct Params {
    m: u32,
    n: u32,
    batch: u32,
    ldc: u32,
    sc: u32,
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let per = params.m * params.n;
    let stride = groups.x * block_x;
    for (var e = gid.x; e < per * params.batch; e += stride) {
        let z = e / per;
        let r = (e - z * per) / params.n;
        let j = e - z * per - r * params.n;
        let i = z * params.sc + r * params.ldc + j;
        dst[i] = f16(src[i]);
    }
}
