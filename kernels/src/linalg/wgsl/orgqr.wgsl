// orgqr: the first q columns of Q = H_0 H_1 .. H_{k-1} from geqrf's k
// reflectors (in the first k columns of each m x q matrix, below the
// diagonal) and their scalars, over the matrix, one workgroup per matrix,
// as LAPACK's org2r: the columns past k start as the identity's, then the
// reflectors are applied from the last, each to the columns right of its
// own (one invocation per column), and its own column becomes H_j e_j.
struct Params {
    m: u32,
    n: u32,
    k: u32,
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
    let q = params.n;
    let k = params.k;
    let base = g * m * q;
    for (var c = k; c < q; c = c + 1u) {
        for (var i = lid; i < m; i = i + block_x) {
            a[base + c * m + i] = select(T(0.0), T(1.0), i == c);
        }
    }
    wg_sync();
    for (var s = 0u; s < k; s = s + 1u) {
        let j = k - 1u - s;
        let t = tau[g * k + j];
        let col = base + j * m;
        if (t != T(0.0)) {
            for (var c = j + 1u + lid; c < q; c = c + block_x) {
                reflect_column(col, base + c * m, j, t);
            }
        }
        wg_sync();
        for (var i = lid; i < m; i = i + block_x) {
            if (i < j) {
                a[col + i] = T(0.0);
            } else if (i == j) {
                a[col + i] = T(1.0) - t;
            } else {
                a[col + i] = -t * a[col + i];
            }
        }
        wg_sync();
    }
}
