// What the Householder kernels share: column j's reflector made as
// LAPACK's larfg makes it, and a reflector applied to one column. Each
// kernel declares `a` (the m x n matrices, column-major) and `params.m`.

// The reflector H = I - tau v v^T (v = [1; x]) of column j, whose first
// element is at `col`: x = a[col + j + 1 .. col + m] scaled into v, beta =
// -sign(alpha) ||(alpha, x)|| over a[col + j] (the norm taken scaled so
// that it neither overflows nor underflows); returns tau, 0 where x is
// zero (H = I, the column left as it is). The whole workgroup calls it.
fn householder(col: u32, j: u32, lid: u32) -> T {
    let m = params.m;
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
    }
    return tau;
}

// H = I - t v v^T applied to the column starting at `cc`, where v =
// [1; a[col + j + 1 .. col + m]] (rows j on).
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

// The same by the whole workgroup, which calls it in uniform control
// flow: the product with v summed over the workgroup (rows j on, row j by
// invocation 0), then each invocation updates the rows it read, so no
// element is read by one invocation and written by another.
fn reflect_column_wg(col: u32, cc: u32, j: u32, t: T, lid: u32) {
    var part = select(T(0.0), a[cc + j], lid == 0u);
    for (var i = j + 1u + lid; i < params.m; i = i + block_x) {
        part = part + a[col + i] * a[cc + i];
    }
    let w = wg_sum(part, lid) * t;
    if (t != T(0.0)) {
        if (lid == 0u) {
            a[cc + j] = a[cc + j] - w;
        }
        for (var i = j + 1u + lid; i < params.m; i = i + block_x) {
            a[cc + i] = a[cc + i] - w * a[col + i];
        }
    }
}
