// getrs: one right-hand side per workgroup (column r of matrix g's n x
// nrhs block of b), solved in place with getrf's factors: with
// `trans` 0, A x = b as P L U x = b (swaps, then L, then U); with 1,
// A^T x = b as U^T L^T P^T x = b (U^T, then L^T, then the swaps backward).
// Each step of a substitution finishes one unknown, then every invocation
// updates its own rows; the finished value is written back one step later,
// once no invocation reads it any more.
struct Params {
    n: u32,
    nrhs: u32,
    total: u32,
    gx: u32,
    trans: u32,
}

fn swap_rows(g: u32, rb: u32, forward: bool) {
    let n = params.n;
    for (var s = 0u; s < n; s = s + 1u) {
        var i = s;
        if (!forward) {
            i = n - 1u - s;
        }
        let p = u32(piv[g * n + i] - 1);
        if (p != i) {
            let x = b[rb + i];
            b[rb + i] = b[rb + p];
            b[rb + p] = x;
        }
    }
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let w = item(wid, params.gx);
    if (w >= params.total) {
        return;
    }
    let n = params.n;
    let g = w / params.nrhs;
    let ab = g * n * n;
    let rb = w * n;
    if (params.trans == 0u) {
        if (lid == 0u) {
            swap_rows(g, rb, true);
        }
        wg_sync();
        // L y = b, L unit lower: column j of L is a[ab + j n + i], i > j.
        for (var j = 0u; j < n; j = j + 1u) {
            let x = b[rb + j];
            for (var i = j + 1u + lid; i < n; i = i + block_x) {
                b[rb + i] = b[rb + i] - a[ab + j * n + i] * x;
            }
            wg_sync();
        }
        // U x = y, backward.
        var prev = T(0.0);
        for (var s = 0u; s < n; s = s + 1u) {
            let j = n - 1u - s;
            let x = b[rb + j] / a[ab + j * n + j];
            for (var i = lid; i < j; i = i + block_x) {
                b[rb + i] = b[rb + i] - a[ab + j * n + i] * x;
            }
            if (lid == 0u && s > 0u) {
                b[rb + j + 1u] = prev;
            }
            prev = x;
            wg_sync();
        }
        if (lid == 0u) {
            b[rb] = prev;
        }
    } else {
        // U^T z = b, forward: U^T's (i, j) is U's (j, i) at a[ab + i n + j].
        var prev = T(0.0);
        for (var j = 0u; j < n; j = j + 1u) {
            let x = b[rb + j] / a[ab + j * n + j];
            for (var i = j + 1u + lid; i < n; i = i + block_x) {
                b[rb + i] = b[rb + i] - a[ab + i * n + j] * x;
            }
            if (lid == 0u && j > 0u) {
                b[rb + j - 1u] = prev;
            }
            prev = x;
            wg_sync();
        }
        if (lid == 0u) {
            b[rb + n - 1u] = prev;
        }
        wg_sync();
        // L^T y = z, backward, unit: L^T's (i, j) is L's (j, i), i < j.
        for (var s = 0u; s < n; s = s + 1u) {
            let j = n - 1u - s;
            let x = b[rb + j];
            for (var i = lid; i < j; i = i + block_x) {
                b[rb + i] = b[rb + i] - a[ab + i * n + j] * x;
            }
            wg_sync();
        }
        if (lid == 0u) {
            swap_rows(g, rb, false);
        }
    }
}
