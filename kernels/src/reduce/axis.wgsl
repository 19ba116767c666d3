// Folds along one axis of a row-major rows x cols array: two entry points,
// the program's name given to the one it runs.
// fold_rows (workgroups of 256 = 8 rows x 32 invocations): dst[r] = fold of row r.
// fold_cols (workgroups of 32 x 8): dst[chunk * cols + c] = fold of column c
// over the rows of chunk `workgroup_id.y` (rows_per_chunk of them), each
// row read by 32 invocations at adjacent columns.
struct Params {
    identity: T,
    rows: u32,
    cols: u32,
    rows_per_chunk: u32,
}
var<workgroup> part: array<T, 256>;

fn fold(a: T, b: T) -> T {
    return FOLD;
}

@compute @workgroup_size(block_x, block_y, block_z)
fn fold_rows(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>,
             @builtin(num_workgroups) groups: vec3<u32>) {
    let lane = lid % 32u;
    let group = lid / 32u;
    let row_blocks = params.rows / 8u + select(0u, 1u, (params.rows & 7u) != 0u);
    // Workgroup-uniform loop: every barrier below is reached by all 256 invocations.
    for (var rb = wg.x; rb < row_blocks; rb += groups.x) {
        let r = rb * 8u + group;
        var acc = params.identity;
        if (r < params.rows) {
            let base = r * params.cols;
            for (var c = lane; c < params.cols; c += 32u) {
                acc = fold(acc, src[base + c]);
            }
        }
        part[lid] = acc;
        workgroupBarrier();
        for (var s = 16u; s > 0u; s >>= 1u) {
            if (lane < s) {
                part[lid] = fold(part[lid], part[lid + s]);
            }
            workgroupBarrier();
        }
        if (lane == 0u && r < params.rows) {
            dst[r] = part[lid];
        }
        workgroupBarrier();
    }
}

@compute @workgroup_size(block_x, block_y, block_z)
fn fold_cols(@builtin(local_invocation_id) l: vec3<u32>, @builtin(workgroup_id) wg: vec3<u32>,
             @builtin(num_workgroups) groups: vec3<u32>) {
    let r0 = wg.y * params.rows_per_chunk;
    let r1 = select(params.rows, r0 + params.rows_per_chunk, params.rows_per_chunk <= params.rows - r0);
    let tiles = params.cols / 32u + select(0u, 1u, (params.cols & 31u) != 0u);
    for (var tile = wg.x; tile < tiles; tile += groups.x) {
        let c = tile * 32u + l.x;
        var acc = params.identity;
        if (c < params.cols) {
            for (var r = r0 + l.y; r < r1; r += 8u) {
                acc = fold(acc, src[r * params.cols + c]);
            }
        }
        part[l.y * 32u + l.x] = acc;
        workgroupBarrier();
        if (l.y == 0u) {
            // Stripes folded in row order.
            for (var s = 1u; s < 8u; s += 1u) {
                acc = fold(acc, part[s * 32u + l.x]);
            }
            if (c < params.cols) {
                dst[wg.y * params.cols + c] = acc;
            }
        }
        workgroupBarrier();
    }
}
