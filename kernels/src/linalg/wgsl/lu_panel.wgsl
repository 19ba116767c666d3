// getrf's panel: columns k0 .. k0 + kb of each square matrix of order n,
// rows k0 .. n, factored in place with partial pivoting (unblocked,
// right-looking), one workgroup per matrix. Row swaps touch the panel's
// columns only (lu_rest.wgsl applies them to the others). Pivots are
// LAPACK's, 1-based; a matrix's status becomes the 1-based column of its
// first exactly zero pivot, unless an earlier panel set one. Workgroups
// of up to PANEL_BLOCK invocations (more than the other kernels' 256 where
// the device allows: a tall panel is one workgroup's walk, and more
// invocations keep more of its loads in flight).
struct Params {
    n: u32,
    k0: u32,
    kb: u32,
    batch: u32,
    gx: u32,
}

var<workgroup> best_v: array<T, PANEL_BLOCK>;
var<workgroup> best_i: array<u32, PANEL_BLOCK>;
var<workgroup> zero_at: u32;

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let g = item(wid, params.gx);
    if (g >= params.batch) {
        return;
    }
    let n = params.n;
    let base = g * n * n;
    let end = params.k0 + params.kb;
    if (lid == 0u) {
        zero_at = 0u;
    }
    for (var j = params.k0; j < end; j = j + 1u) {
        let col = base + j * n;
        // The first row of largest magnitude in column j, from row j on.
        var bv = T(-1.0);
        var bi = j;
        for (var i = j + lid; i < n; i = i + block_x) {
            let v = abs(a[col + i]);
            if (v > bv) {
                bv = v;
                bi = i;
            }
        }
        best_v[lid] = bv;
        best_i[lid] = bi;
        workgroupBarrier();
        for (var s = block_x / 2u; s > 0u; s = s / 2u) {
            if (lid < s) {
                let ov = best_v[lid + s];
                let oi = best_i[lid + s];
                if (ov > best_v[lid] || (ov == best_v[lid] && oi < best_i[lid])) {
                    best_v[lid] = ov;
                    best_i[lid] = oi;
                }
            }
            workgroupBarrier();
        }
        let p = best_i[0];
        let pv = a[col + p];
        wg_sync();
        if (lid == 0u) {
            piv[g * n + j] = i32(p + 1u);
            if (pv == T(0.0) && zero_at == 0u) {
                zero_at = j + 1u;
            }
        }
        if (p != j) {
            for (var c = params.k0 + lid; c < end; c = c + block_x) {
                let x = a[base + c * n + j];
                a[base + c * n + j] = a[base + c * n + p];
                a[base + c * n + p] = x;
            }
        }
        wg_sync();
        // The multipliers, then the rank-1 update of the panel's columns
        // right of j (each invocation its own rows, so no barrier between).
        if (pv != T(0.0)) {
            for (var i = j + 1u + lid; i < n; i = i + block_x) {
                let l = a[col + i] / pv;
                a[col + i] = l;
                for (var c = j + 1u; c < end; c = c + 1u) {
                    a[base + c * n + i] = a[base + c * n + i] - l * a[base + c * n + j];
                }
            }
        }
        wg_sync();
    }
    if (lid == 0u && zero_at != 0u && info[g] == 0) {
        info[g] = i32(zero_at);
    }
}
