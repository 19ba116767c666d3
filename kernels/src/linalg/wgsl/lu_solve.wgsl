// getrs: one right-hand side per workgroup (column r of matrix g's n x
// nrhs block of b), solved in place with getrf's factors, one phase per
// launch: A x = b as P L U x = b (phase 0 the swaps, 1 L, 2 U), and
// A^T x = b as U^T L^T P^T x = b (3 U^T, 4 L^T, 5 the swaps backward).
// A substitution's launch takes steps j0 .. j1 of it (so that no
// invocation walks too far in one launch); each step finishes one
// unknown, then every invocation updates its own rows. A non-unit step's
// finished value is written back one step later, once no invocation reads
// it any more, and the last one as the launch ends.
struct Params {
    n: u32,
    nrhs: u32,
    total: u32,
    gx: u32,
    phase: u32,
    j0: u32,
    j1: u32,
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
    let phase = params.phase;
    if (phase == 0u || phase == 5u) {
        if (lid == 0u) {
            swap_rows(g, rb, phase == 0u);
        }
    } else if (phase == 1u) {
        // L y = b, L unit lower: column j of L is a[ab + j n + i], i > j.
        for (var j = params.j0; j < params.j1; j = j + 1u) {
            let x = b[rb + j];
            for (var i = j + 1u + lid; i < n; i = i + block_x) {
                b[rb + i] = b[rb + i] - a[ab + j * n + i] * x;
            }
            wg_sync();
        }
    } else if (phase == 2u) {
        // U x = y, backward: step s finishes unknown n - 1 - s.
        var prev = T(0.0);
        for (var s = params.j0; s < params.j1; s = s + 1u) {
            let j = n - 1u - s;
            let x = b[rb + j] / a[ab + j * n + j];
            for (var i = lid; i < j; i = i + block_x) {
                b[rb + i] = b[rb + i] - a[ab + j * n + i] * x;
            }
            if (lid == 0u && s > params.j0) {
                b[rb + j + 1u] = prev;
            }
            prev = x;
            wg_sync();
        }
        if (lid == 0u) {
            b[rb + n - params.j1] = prev;
        }
    } else if (phase == 3u) {
        // U^T z = b, forward: U^T's (i, j) is U's (j, i) at a[ab + i n + j].
        var prev = T(0.0);
        for (var j = params.j0; j < params.j1; j = j + 1u) {
            let x = b[rb + j] / a[ab + j * n + j];
            for (var i = j + 1u + lid; i < n; i = i + block_x) {
                b[rb + i] = b[rb + i] - a[ab + i * n + j] * x;
            }
            if (lid == 0u && j > params.j0) {
                b[rb + j - 1u] = prev;
            }
            prev = x;
            wg_sync();
        }
        if (lid == 0u) {
            b[rb + params.j1 - 1u] = prev;
        }
    } else {
        // L^T y = z, backward, unit: L^T's (i, j) is L's (j, i), i < j.
        for (var s = params.j0; s < params.j1; s = s + 1u) {
            let j = n - 1u - s;
            let x = b[rb + j];
            for (var i = lid; i < j; i = i + block_x) {
                b[rb + i] = b[rb + i] - a[ab + i * n + j] * x;
            }
            wg_sync();
        }
    }
}
