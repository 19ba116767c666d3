// matmul of f16 matrices into f32 on cooperative matrices (wgpu's
// `wgpu_cooperative_matrix` extension, VK_KHR_cooperative_matrix): the
// layouts, parameters and bindings of kernel.wgsl's kernels, c (m x n, f32)
// = a (m x k) . b (k x n) for each of `batch` products, any m, n, k.
//
// A workgroup of 128 invocations, four subgroups of 32 (the device is
// opened with cooperative matrices only where every subgroup is 32 wide),
// computes a 64 x 64 tile of c: subgroup s the 32 x 32 quarter (s / 2,
// s % 2) as 2 x 2 coop_mat16x16 accumulators of f32. a's 64 x 32 and b's
// 32 x 64 slices are staged through workgroup memory with bounds-checked
// loads (zeros past the matrices, either layout), so every cooperative
// load reads workgroup memory; each accumulator is stored through the
// subgroup's 16 x 16 f32 patch of workgroup memory and copied out inside
// c only. 12 KiB of workgroup memory. Cooperative loads, stores and
// products sit in control flow uniform over the workgroup (loops on the
// workgroup's id and the parameters), as the extension requires.
// Params and the bindings of a (f16), b (f16) and c (f32): operands.wgsl.

const BM: u32 = 64u;
const BN: u32 = 64u;
const BK: u32 = 32u;
var<workgroup> as_: array<f16, 2048>;  // BM x BK, row-major
var<workgroup> bs: array<f16, 2048>;   // BK x BN, row-major
var<workgroup> cs: array<f32, 1024>;   // a 16 x 16 patch per subgroup

fn at_a(a0: u32, i: u32, p: u32) -> f16 {
    if ((params.flags & 1u) != 0u) {
        return a[a0 + p * params.lda + i];
    }
    return a[a0 + i * params.lda + p];
}

fn at_b(b0: u32, p: u32, j: u32) -> f16 {
    if ((params.flags & 2u) != 0u) {
        return b[b0 + j * params.ldb + p];
    }
    return b[b0 + p * params.ldb + j];
}

// Copy the subgroup's patch (cs from `off`) to c's rows r0.. and columns
// j0.., inside c only.
fn copy_out(off: u32, lane: u32, c0: u32, r0: u32, j0: u32) {
    for (var e = lane; e < 256u; e += 32u) {
        let row = r0 + e / 16u;
        let col = j0 + e % 16u;
        if (row < params.m && col < params.n) {
            c[c0 + row * params.ldc + col] = cs[off + e];
        }
    }
}

@compute @workgroup_size(block_x, block_y, block_z)
fn COOP(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let m = params.m;
    let n = params.n;
    let k = params.k;
    let sg = tid / 32u;
    let lane = tid % 32u;
    let sm = sg / 2u;
    let sn = sg % 2u;
    let off = sg * 256u;
    let ld16 = 16u;
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
                var acc00 = coop_mat16x16<f32, C>();
                var acc01 = coop_mat16x16<f32, C>();
                var acc10 = coop_mat16x16<f32, C>();
                var acc11 = coop_mat16x16<f32, C>();
                for (var p0 = 0u; p0 < k; p0 += BK) {
                    workgroupBarrier();
                    for (var l = 0u; l < 16u; l += 1u) {
                        let idx = tid + 128u * l;
                        let r = idx / BK;
                        let q = idx % BK;
                        var va = f16(0.0);
                        if (row0 + r < m && p0 + q < k) {
                            va = at_a(a0, row0 + r, p0 + q);
                        }
                        as_[idx] = va;
                        let br = idx / BN;
                        let bc = idx % BN;
                        var vb = f16(0.0);
                        if (p0 + br < k && col0 + bc < n) {
                            vb = at_b(b0, p0 + br, col0 + bc);
                        }
                        bs[idx] = vb;
                    }
                    workgroupBarrier();
                    for (var kk = 0u; kk < BK; kk += 16u) {
                        let ia0 = sm * 32u * BK + kk;
                        let ia1 = ia0 + 16u * BK;
                        let ib0 = kk * BN + sn * 32u;
                        let ib1 = ib0 + 16u;
                        let fa0 = coopLoadT<coop_mat16x16<f16, A>>(&as_[ia0], BK);
                        let fa1 = coopLoadT<coop_mat16x16<f16, A>>(&as_[ia1], BK);
                        let fb0 = coopLoadT<coop_mat16x16<f16, B>>(&bs[ib0], BN);
                        let fb1 = coopLoadT<coop_mat16x16<f16, B>>(&bs[ib1], BN);
                        acc00 = coopMultiplyAdd(fa0, fb0, acc00);
                        acc01 = coopMultiplyAdd(fa0, fb1, acc01);
                        acc10 = coopMultiplyAdd(fa1, fb0, acc10);
                        acc11 = coopMultiplyAdd(fa1, fb1, acc11);
                    }
                }
                let r0 = row0 + sm * 32u;
                let j0 = col0 + sn * 32u;
                workgroupBarrier();
                coopStoreT(acc00, &cs[off], ld16);
                workgroupBarrier();
                copy_out(off, lane, c0, r0, j0);
                workgroupBarrier();
                coopStoreT(acc01, &cs[off], ld16);
                workgroupBarrier();
                copy_out(off, lane, c0, r0, j0 + 16u);
                workgroupBarrier();
                coopStoreT(acc10, &cs[off], ld16);
                workgroupBarrier();
                copy_out(off, lane, c0, r0 + 16u, j0);
                workgroupBarrier();
                coopStoreT(acc11, &cs[off], ld16);
                workgroupBarrier();
                copy_out(off, lane, c0, r0 + 16u, j0 + 16u);
            }
        }
    }
}
