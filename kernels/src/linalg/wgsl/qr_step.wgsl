// geqrf one column at a time, for matrices too large for one workgroup's
// invocations to walk (qr.wgsl): with `house` 1, one workgroup per matrix
// makes column j's reflector as qr.wgsl does; with 0, one invocation per
// (matrix, column c > j) applies it to column c.
struct Params {
    m: u32,
    n: u32,
    j: u32,
    batch: u32,
    gx: u32,
    house: u32,
}

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
fn KERNEL(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let m = params.m;
    let n = params.n;
    let k = min(m, n);
    let j = params.j;
    if (params.house == 0u) {
        let cols = n - j - 1u;
        let t = gid.x + gid.y * nwg.x * block_x;
        if (t >= params.batch * cols) {
            return;
        }
        let g = t / cols;
        let c = j + 1u + t % cols;
        let base = g * m * n;
        let tau = tau_out[g * k + j];
        if (tau != T(0.0)) {
            reflect_column(base + j * m, base + c * m, j, tau);
        }
        return;
    }
    let g = item(wid, params.gx);
    if (g >= params.batch) {
        return;
    }
    let col = g * m * n + j * m;
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
}
