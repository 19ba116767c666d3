// getrs after a block's unknowns j0 .. j0 + kb are solved (lu_solve.wgsl):
// each row still to come (below the block going forward, above it going
// backward) of each right-hand side, one invocation per row, less T's
// row in the block times those unknowns.
@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let t = gid.x + gid.y * nwg.x * block_x;
    let n = params.n;
    let kb = params.kb;
    let j0 = params.j0;
    let fwd = forward();
    let rows = select(j0, n - j0 - kb, fwd);
    if (t >= params.total * rows) {
        return;
    }
    let w = t / rows;
    let i = select(t % rows, j0 + kb + t % rows, fwd);
    let ab = (w / params.nrhs) * n * n;
    let rb = w * n;
    var v = b[rb + i];
    for (var s = 0u; s < kb; s = s + 1u) {
        v = v - coef(ab, i, j0 + s) * b[rb + j0 + s];
    }
    b[rb + i] = v;
}
