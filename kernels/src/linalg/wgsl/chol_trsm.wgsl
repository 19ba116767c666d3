// potrf's panel below its diagonal block: L21 = A21 L11^-T, one
// invocation per row i >= k0 + kb of each matrix of order n whose status
// is 0 (L11 from chol_panel.wgsl): the row's kb elements solved forward
// in registers against L11's rows, then written back.
struct Params {
    n: u32,
    k0: u32,
    kb: u32,
    total: u32,
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * block_x;
    if (t >= params.total) {
        return;
    }
    let n = params.n;
    let k0 = params.k0;
    let kb = params.kb;
    let end = k0 + kb;
    let rows = n - end;
    let g = t / rows;
    if (info[g] != 0) {
        return;
    }
    let i = end + t % rows;
    let base = g * n * n;
    var x: array<T, 64>;
    for (var c = 0u; c < kb; c = c + 1u) {
        var v = a[base + (k0 + c) * n + i];
        for (var l = 0u; l < c; l = l + 1u) {
            v = v - x[l] * a[base + (k0 + l) * n + k0 + c];
        }
        v = v / a[base + (k0 + c) * n + k0 + c];
        x[c] = v;
        a[base + (k0 + c) * n + i] = v;
    }
}
