// geqrf one column at a time, for matrices too large for one workgroup's
// invocations to walk (qr.wgsl): with `house` 1, one workgroup per matrix
// makes column j's reflector as qr.wgsl does; with 0, one workgroup per
// (matrix, column c > j) applies it to column c, its rows spread over the
// workgroup so that neighbouring invocations read neighbouring rows.
struct Params {
    m: u32,
    n: u32,
    j: u32,
    batch: u32,
    gx: u32,
    house: u32,
}


@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let m = params.m;
    let n = params.n;
    let k = min(m, n);
    let j = params.j;
    if (params.house == 0u) {
        let cols = n - j - 1u;
        let w = item(wid, nwg.x);
        if (w >= params.batch * cols) {
            return;
        }
        let g = w / cols;
        let c = j + 1u + w % cols;
        let base = g * m * n;
        reflect_column_wg(base + j * m, base + c * m, j, tau_out[g * k + j], lid);
        return;
    }
    let g = item(wid, params.gx);
    if (g >= params.batch) {
        return;
    }
    let col = g * m * n + j * m;
    let tau = householder(col, j, lid);
    if (lid == 0u) {
        tau_out[g * k + j] = tau;
    }
}
