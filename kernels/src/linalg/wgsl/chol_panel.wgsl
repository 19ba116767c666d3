// potrf's diagonal block (lower): rows and columns k0 .. k0 + kb (kb at
// most NB) of each symmetric matrix of order n factored in place into L11
// (unblocked, right-looking), one workgroup per matrix; chol_trsm.wgsl
// then makes L21 below it, one invocation per row. The block's lower
// triangle is loaded into workgroup memory (packed by columns), factored
// there, each step's rank-1 update spread over every invocation, and
// written back; elements above the diagonal are not touched. A matrix
// whose status is set (an earlier panel failed) is skipped; a diagonal
// that is not positive (or NaN) sets the status to its 1-based order and
// stops the matrix, the block written back as far as it went (its
// diagonal before that column positive, that column's as it was).
struct Params {
    n: u32,
    k0: u32,
    kb: u32,
    batch: u32,
    gx: u32,
}

// The widest block (64, or 32 for matrices of 32 or less, so that their
// workgroups hold less).
const NB: u32 = PANEL_NBu;

// The lower triangle of an NB x NB block, column by column.
var<workgroup> blk: array<T, PANEL_TRI>;
var<workgroup> failed: u32;

// Where element (i, c), i >= c, of the block lies in `blk`.
fn tri(i: u32, c: u32) -> u32 {
    return c * (2u * NB + 1u - c) / 2u + i - c;
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let g = item(wid, params.gx);
    if (g >= params.batch) {
        return;
    }
    let n = params.n;
    let k0 = params.k0;
    let kb = params.kb;
    let corner = g * n * n + k0 * n + k0;
    if (lid == 0u) {
        failed = u32(info[g] != 0);
    }
    if (workgroupUniformLoad(&failed) != 0u) {
        return;
    }
    for (var t = lid; t < kb * kb; t = t + block_x) {
        let i = t % kb;
        let c = t / kb;
        if (i >= c) {
            blk[tri(i, c)] = a[corner + c * n + i];
        }
    }
    for (var j = 0u; j < kb; j = j + 1u) {
        // Uniform, and read after every invocation's last update.
        let d = workgroupUniformLoad(&blk[tri(j, j)]);
        if (!(d > T(0.0))) {
            if (lid == 0u) {
                failed = k0 + j + 1u;
            }
            break;
        }
        let l = sqrt(d);
        for (var i = j + 1u + lid; i < kb; i = i + block_x) {
            blk[tri(i, j)] = blk[tri(i, j)] / l;
        }
        workgroupBarrier();
        // The rank-1 update of the lower triangle right of column j: rows
        // of 16 invocations down each column, block_x / 16 columns at once.
        for (var c = j + 1u + lid / 16u; c < kb; c = c + block_x / 16u) {
            let lc = blk[tri(c, j)];
            for (var i = c + lid % 16u; i < kb; i = i + 16u) {
                blk[tri(i, c)] = blk[tri(i, c)] - blk[tri(i, j)] * lc;
            }
        }
        if (lid == 0u) {
            blk[tri(j, j)] = l;
        }
        workgroupBarrier();
    }
    workgroupBarrier();
    for (var t = lid; t < kb * kb; t = t + block_x) {
        let i = t % kb;
        let c = t / kb;
        if (i >= c) {
            a[corner + c * n + i] = blk[tri(i, c)];
        }
    }
    if (lid == 0u && failed != 0u) {
        info[g] = i32(failed);
    }
}
