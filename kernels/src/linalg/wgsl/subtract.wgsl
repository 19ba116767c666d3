// The trailing update after a panel: A22 -= P, where A22 is the m x m
// block of each order-n matrix from (r0, r0) and P the product kiln's
// matmul left in `prod` (dense, column-major m x m per matrix). With
// `lower`, only elements on and below A22's diagonal change.
struct Params {
    n: u32,
    r0: u32,
    m: u32,
    total: u32,
    lower: u32,
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let stride = nwg.x * block_x * nwg.y;
    for (var t = gid.x + gid.y * nwg.x * block_x; t < params.total; t = t + stride) {
        let m = params.m;
        let i = t % m;
        let j = (t / m) % m;
        let g = t / (m * m);
        if (params.lower == 0u || i >= j) {
            let at = g * params.n * params.n + (params.r0 + j) * params.n + params.r0 + i;
            a[at] = a[at] - prod[t];
        }
    }
}
