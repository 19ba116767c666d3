// orgqr one reflector at a time, for matrices too large for one
// workgroup's invocations to walk (orgqr.wgsl): one workgroup per
// (matrix, column c >= lo), its rows spread over the workgroup. With
// `apply`, reflector j = lo - 1 is applied to column c; before that, a column past the reflectors starts as the
// identity's (`init`), and column lo, if it holds a reflector (lo < k),
// is first made H_lo e_lo (org2r's last step for it, which had to wait
// until reflector lo had been applied to every column right of it). The
// last launch (apply 0, lo 0) makes column 0.
struct Params {
    m: u32,
    n: u32,
    k: u32,
    lo: u32,
    batch: u32,
    apply: u32,
    init: u32,
}


@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
    @builtin(num_workgroups) nwg: vec3<u32>,
) {
    let m = params.m;
    let q = params.n;
    let k = params.k;
    let lo = params.lo;
    let cols = q - lo;
    let w = item(wid, nwg.x);
    if (w >= params.batch * cols) {
        return;
    }
    let g = w / cols;
    let c = lo + w % cols;
    let base = g * m * q;
    let cc = base + c * m;
    if (params.init != 0u && c >= k) {
        for (var i = lid; i < m; i = i + block_x) {
            a[cc + i] = select(T(0.0), T(1.0), i == c);
        }
    }
    if (c == lo && c < k) {
        let tc = tau[g * k + c];
        for (var i = lid; i < m; i = i + block_x) {
            if (i < c) {
                a[cc + i] = T(0.0);
            } else if (i == c) {
                a[cc + i] = T(1.0) - tc;
            } else {
                a[cc + i] = -tc * a[cc + i];
            }
        }
    }
    if (params.apply != 0u) {
        wg_sync();
        let j = lo - 1u;
        reflect_column_wg(base + j * m, cc, j, tau[g * k + j], lid);
    }
}
