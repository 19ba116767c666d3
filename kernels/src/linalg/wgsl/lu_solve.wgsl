// getrs, one right-hand side per workgroup (column r of matrix g's
// n x nrhs block of b), in place with getrf's factors: phases 0 and 5
// apply the pivots' swaps (one invocation walks them); a substitution
// phase solves its block j0 .. j0 + kb (lu_tri.wgsl), invocation t
// holding row j0 + t's value and coefficients in registers, one unknown
// finished per step and shared through workgroup memory.
// lu_solve_update.wgsl then takes the block's unknowns out of the rows
// still to come.
var<workgroup> xs: array<T, 64>;

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
        return;
    }
    let kb = params.kb;
    let j0 = params.j0;
    let fwd = forward();
    let i = j0 + lid;
    var c: array<T, 64>;
    var v = T(0.0);
    var d = T(1.0);
    if (lid < kb) {
        v = b[rb + i];
        for (var s = 0u; s < kb; s = s + 1u) {
            if ((fwd && s < lid) || (!fwd && s > lid)) {
                c[s] = coef(ab, i, j0 + s);
            }
        }
        if (!unit()) {
            d = coef(ab, i, i);
        }
    }
    for (var k = 0u; k < kb; k = k + 1u) {
        let s = select(kb - 1u - k, k, fwd);
        if (lid == s) {
            let x = v / d;
            xs[s] = x;
            b[rb + i] = x;
        }
        workgroupBarrier();
        if (lid < kb && ((fwd && lid > s) || (!fwd && lid < s))) {
            v = v - c[s] * xs[s];
        }
    }
}
