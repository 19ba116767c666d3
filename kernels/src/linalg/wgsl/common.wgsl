// What the factorisation kernels share. Each workgroup works on one
// matrix (or one right-hand side) at a time; workgroups are a power of
// two of at most 256 invocations, so the tree reductions below halve
// evenly. Matrices are column-major: element (i, j) of matrix `g` of an
// `rows` x `cols` batch at `g * rows * cols + j * rows + i`.

var<workgroup> red: array<T, 256>;

// Every invocation's storage writes visible to the whole workgroup.
fn wg_sync() {
    storageBarrier();
    workgroupBarrier();
}

// The sum of every invocation's `v`, the same (uniform) value on each.
fn wg_sum(v: T, lid: u32) -> T {
    red[lid] = v;
    workgroupBarrier();
    for (var s = block_x / 2u; s > 0u; s = s / 2u) {
        if (lid < s) {
            red[lid] = red[lid] + red[lid + s];
        }
        workgroupBarrier();
    }
    let r = workgroupUniformLoad(&red[0]);
    workgroupBarrier();
    return r;
}

// The largest of every invocation's `v` (NaN-free), uniform.
fn wg_max(v: T, lid: u32) -> T {
    red[lid] = v;
    workgroupBarrier();
    for (var s = block_x / 2u; s > 0u; s = s / 2u) {
        if (lid < s) {
            red[lid] = max(red[lid], red[lid + s]);
        }
        workgroupBarrier();
    }
    let r = workgroupUniformLoad(&red[0]);
    workgroupBarrier();
    return r;
}

// The workgroup's item: matrix (or right-hand side) `wid.x + wid.y * gx`.
fn item(wid: vec3<u32>, gx: u32) -> u32 {
    return wid.x + wid.y * gx;
}
