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

// H = I - t v v^T applied to column `cc` of the matrix at `base`, where
// v = [1; a[col + j + 1 .. col + m]].
fn reflect_column(col: u32, cc: u32, j: u32, t: T) {
    var w = a[cc + j];
    for (var i = j + 1u; i < params.m; i = i + 1u) {
        w = w + a[col + i] * a[cc + i];
    }
    w = w * t;
    a[cc + j] = a[cc + j] - w;
    for (var i = j + 1u; i < params.m; i = i + 1u) {
        a[cc + i] = a[cc + i] - w * a[col + i];
    }
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
        let alpha = a[col + j];
        var big = T(0.0);
        for (var i = j + 1u + lid; i < m; i = i + block_x) {
            big = max(big, abs(a[col + i]));
        }
        let amax = wg_max(big, lid);
        var ss = T(0.0);
        if (amax > T(0.0)) {
            for (var i = j + 1u + lid; i < m; i = i + block_x) {
                let v = a[col + i] / amax;
                ss = ss + v * v;
            }
        }
        let xnorm = amax * sqrt(wg_sum(ss, lid));
        var tau = T(0.0);
        var beta = alpha;
        if (xnorm != T(0.0)) {
            let big2 = max(abs(alpha), xnorm);
            let ra = alpha / big2;
            let rx = xnorm / big2;
            let h = big2 * sqrt(ra * ra + rx * rx);
            beta = select(h, -h, alpha >= T(0.0));
            tau = (beta - alpha) / beta;
        }
        wg_sync();
        if (tau != T(0.0)) {
            let d = alpha - beta;
            for (var i = j + 1u + lid; i < m; i = i + block_x) {
                a[col + i] = a[col + i] / d;
            }
        }
        if (lid == 0u) {
            a[col + j] = beta;
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
