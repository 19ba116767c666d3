// matmul: c (m x n) = a (m x k) . b (k x n) for each of `batch` products,
// all row-major: a's element (i, p) at a[i lda + p], or a[p lda + i] where
// a is stored transposed (flags bit 0; b likewise with bit 1), c's (i, j)
// at c[i ldc + j]; product z's matrices start sa z, sb z and sc z elements
// in (a stride 0 shares one matrix). Workgroup z strides over the batch.
//
// IN is the element type of a and b, ACCUM that of the accumulator and of c
// (f32 for f16 inputs; i32 and u32 arithmetic wraps in WGSL). Every kernel
// handles any m, n, k: edge tiles load zeros past the matrices and store
// only inside them; loops are grid-stride so a capped grid covers c.
//
// NAIVE: one invocation per element of c, k multiply-adds from storage.
// TILED: 64 x 64 tiles of c per 16 x 16 workgroup, 4 x 4 outputs per
//   invocation, a and b staged through workgroup memory 8 columns of k at a
//   time (8 KiB for f64, under WebGPU's 16 KiB default), so every element
//   loaded serves 64 multiply-adds.
// Params and the bindings of a, b and c: operands.wgsl.
// Element (i, p) of a and (p, j) of b of the product whose matrices start
// at a0 and b0.
fn at_a(a0: u32, i: u32, p: u32) -> ACCUM {
    if ((params.flags & 1u) != 0u) {
        return ACCUM(a[a0 + p * params.lda + i]);
    }
    return ACCUM(a[a0 + i * params.lda + p]);
}

fn at_b(b0: u32, p: u32, j: u32) -> ACCUM {
    if ((params.flags & 2u) != 0u) {
        return ACCUM(b[b0 + j * params.ldb + p]);
    }
    return ACCUM(b[b0 + p * params.ldb + j]);
}

@compute @workgroup_size(block_x, block_y, block_z)
fn NAIVE(
    @builtin(global_invocation_id) gid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    for (var z = wid.z; z < params.batch; z += groups.z) {
        let a0 = z * params.sa;
        let b0 = z * params.sb;
        let c0 = z * params.sc;
        for (var row = gid.y; row < params.m; row += groups.y * block_y) {
            for (var col = gid.x; col < params.n; col += groups.x * block_x) {
                var acc = ACCUM(0);
                for (var p = 0u; p < params.k; p += 1u) {
                    acc += at_a(a0, row, p) * at_b(b0, p, col);
                }
                c[c0 + row * params.ldc + col] = acc;
            }
        }
    }
}

const BM: u32 = 64u;
const BN: u32 = 64u;
const BK: u32 = 8u;
// as_ is k-major (as_[p][row]); the extra column spreads its transposing stores.
var<workgroup> as_: array<array<ACCUM, 65>, 8>;
var<workgroup> bs: array<array<ACCUM, 64>, 8>;

@compute @workgroup_size(block_x, block_y, block_z)
fn TILED(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let m = params.m;
    let n = params.n;
    let k = params.k;
    let tid = lid.y * 16u + lid.x;
    let tiles_m = (m + BM - 1u) / BM;
    let tiles_n = (n + BN - 1u) / BN;
    for (var z = wid.z; z < params.batch; z += groups.z) {
        let a0 = z * params.sa;
        let b0 = z * params.sb;
        let c0 = z * params.sc;
        for (var bm = wid.y; bm < tiles_m; bm += groups.y) {
            for (var bn = wid.x; bn < tiles_n; bn += groups.x) {
                let row0 = bm * BM;
                let col0 = bn * BN;
                // Invocation (x, y) owns rows y + 16 i and columns x + 16 j.
                var acc: array<array<ACCUM, 4>, 4>;
                for (var i = 0u; i < 4u; i += 1u) {
                    for (var j = 0u; j < 4u; j += 1u) {
                        acc[i][j] = ACCUM(0);
                    }
                }
                for (var p0 = 0u; p0 < k; p0 += BK) {
                    for (var l = 0u; l < 2u; l += 1u) {
                        let idx = tid + 256u * l;
                        let r = idx / BK;
                        let q = idx % BK;
                        var va = ACCUM(0);
                        if (row0 + r < m && p0 + q < k) {
                            va = at_a(a0, row0 + r, p0 + q);
                        }
                        as_[q][r] = va;
                        let br = idx / BN;
                        let bc = idx % BN;
                        var vb = ACCUM(0);
                        if (p0 + br < k && col0 + bc < n) {
                            vb = at_b(b0, p0 + br, col0 + bc);
                        }
                        bs[br][bc] = vb;
                    }
                    workgroupBarrier();
                    for (var q = 0u; q < BK; q += 1u) {
                        var ra: array<ACCUM, 4>;
                        var rb: array<ACCUM, 4>;
                        for (var i = 0u; i < 4u; i += 1u) {
                            ra[i] = as_[q][lid.y + 16u * i];
                            rb[i] = bs[q][lid.x + 16u * i];
                        }
                        for (var i = 0u; i < 4u; i += 1u) {
                            for (var j = 0u; j < 4u; j += 1u) {
                                acc[i][j] += ra[i] * rb[j];
                            }
                        }
                    }
                    workgroupBarrier();
                }
                for (var i = 0u; i < 4u; i += 1u) {
                    let row = row0 + lid.y + 16u * i;
                    for (var j = 0u; j < 4u; j += 1u) {
                        let col = col0 + lid.x + 16u * j;
                        if (row < m && col < n) {
                            c[c0 + row * params.ldc + col] = acc[i][j];
                        }
                    }
                }
            }
        }
    }
}
