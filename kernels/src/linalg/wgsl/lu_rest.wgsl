// getrf's step after a panel: the panel's row swaps applied to every
// column outside it, and, right of it, U's rows of the panel solved with
// its unit lower triangle (U12 = L11^-1 A12). One invocation per column.
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
    let others = n - params.kb;
    let g = t / others;
    var c = t % others;
    let end = params.k0 + params.kb;
    if (c >= params.k0) {
        c = c + params.kb;
    }
    let base = g * n * n;
    let col = base + c * n;
    for (var i = params.k0; i < end; i = i + 1u) {
        let p = u32(piv[g * n + i] - 1);
        if (p != i) {
            let x = a[col + i];
            a[col + i] = a[col + p];
            a[col + p] = x;
        }
    }
    if (c >= end) {
        for (var l = params.k0; l < end; l = l + 1u) {
            let x = a[col + l];
            if (x != T(0.0)) {
                for (var i = l + 1u; i < end; i = i + 1u) {
                    a[col + i] = a[col + i] - a[base + l * n + i] * x;
                }
            }
        }
    }
}
