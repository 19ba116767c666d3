// potrf's diagonal block (lower): rows and columns k0 .. k0 + kb of each
// symmetric matrix of order n factored in place into L11 (unblocked,
// right-looking), one workgroup per matrix; chol_trsm.wgsl then makes
// L21 below it, one invocation per row. Elements above the diagonal are
// not touched. A matrix
// whose status is set (an earlier panel failed) is skipped; a diagonal
// that is not positive (or NaN) sets the status to its 1-based order and
// stops the matrix.
struct Params {
    n: u32,
    k0: u32,
    kb: u32,
    batch: u32,
    gx: u32,
}

var<workgroup> failed: u32;

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
        failed = u32(info[g] != 0);
    }
    if (workgroupUniformLoad(&failed) != 0u) {
        return;
    }
    for (var j = params.k0; j < end; j = j + 1u) {
        let col = base + j * n;
        let d = a[col + j];
        if (lid == 0u && !(d > T(0.0))) {
            failed = j + 1u;
        }
        if (workgroupUniformLoad(&failed) != 0u) {
            break;
        }
        let l = sqrt(d);
        if (lid == 0u) {
            a[col + j] = l;
        }
        for (var i = j + 1u + lid; i < end; i = i + block_x) {
            a[col + i] = a[col + i] / l;
        }
        wg_sync();
        // The rank-1 update of the block's lower triangle right of j.
        for (var i = j + 1u + lid; i < end; i = i + block_x) {
            let lij = a[col + i];
            let last = i + 1u;
            for (var c = j + 1u; c < last; c = c + 1u) {
                a[base + c * n + i] = a[base + c * n + i] - lij * a[col + c];
            }
        }
        wg_sync();
    }
    if (lid == 0u && failed != 0u) {
        info[g] = i32(failed);
    }
}
