// geqrf: Householder QR of each m x n matrix in place, one workgroup per
// matrix (unblocked): for each column j < min(m, n), the reflector
// H = I - tau v v^T (v = [1; a[j+1.., j]]) that maps the column onto
// beta e_j, as LAPACK's larfg makes it (beta = -sign(alpha) ||x||, the
// norm taken scaled so that it neither overflows nor underflows; tau = 0
// where the column below the diagonal is zero), then applied to the
// columns right of j, one invocation per column.
struct Params {
    m: u32,
    n: u32,
    batch: u32,
    gx: u32,
}


@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let g = item(wid, params.gx);
    if (g >= params.batch) {
        return;
    }
    let m = params.m;
    let n = params.n;
    let k = min(m, n);
    let base = g * m * n;
    for (var j = 0u; j < k; j = j + 1u) {
        let col = base + j * m;
        let tau = householder(col, j, lid);
        if (lid == 0u) {
            tau_out[g * k + j] = tau;
        }
        wg_sync();
        if (tau != T(0.0)) {
            for (var c = j + 1u + lid; c < n; c = c + block_x) {
                reflect_column(col, base + c * m, j, tau);
            }
        }
        wg_sync();
    }
}
