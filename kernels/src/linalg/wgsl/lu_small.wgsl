// getrf of each matrix of order n <= 32 whole in workgroup memory, one
// workgroup of 32 invocations per matrix: the matrix loaded, factored
// there with partial pivoting (unblocked, right-looking, as lu_panel.wgsl
// factors a panel, each row swap over every column), and written back.
// Takes lu_panel.wgsl's scalars, with k0 = 0 and kb = n; pivots and
// status as there.
struct Params {
    n: u32,
    k0: u32,
    kb: u32,
    batch: u32,
    gx: u32,
}

var<workgroup> m: array<T, 1024>;
var<workgroup> best_v: array<T, 32>;
var<workgroup> best_i: array<u32, 32>;

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let g = item(wid, params.gx);
    if (g >= params.batch) {
        return;
    }
    let n = params.n;
    let base = g * n * n;
    for (var t = lid; t < n * n; t = t + block_x) {
        m[t] = a[base + t];
    }
    var zero_at = 0u;
    workgroupBarrier();
    for (var j = 0u; j < n; j = j + 1u) {
        // The first row of largest magnitude in column j, from row j on.
        var bv = T(-1.0);
        var bi = j;
        if (lid >= j && lid < n) {
            bv = abs(m[j * n + lid]);
            bi = lid;
        }
        best_v[lid] = bv;
        best_i[lid] = bi;
        workgroupBarrier();
        for (var s = block_x / 2u; s > 0u; s = s / 2u) {
            if (lid < s) {
                let ov = best_v[lid + s];
                let oi = best_i[lid + s];
                if (ov > best_v[lid] || (ov == best_v[lid] && oi < best_i[lid])) {
                    best_v[lid] = ov;
                    best_i[lid] = oi;
                }
            }
            workgroupBarrier();
        }
        let p = best_i[0];
        let pv = m[j * n + p];
        if (pv == T(0.0) && zero_at == 0u) {
            zero_at = j + 1u;
        }
        workgroupBarrier();
        if (lid == 0u) {
            piv[g * n + j] = i32(p + 1u);
        }
        if (p != j) {
            for (var c = lid; c < n; c = c + block_x) {
                let x = m[c * n + j];
                m[c * n + j] = m[c * n + p];
                m[c * n + p] = x;
            }
        }
        workgroupBarrier();
        // The multipliers, then the rank-1 update right of j (each
        // invocation its own row).
        if (pv != T(0.0)) {
            for (var i = j + 1u + lid; i < n; i = i + block_x) {
                let l = m[j * n + i] / pv;
                m[j * n + i] = l;
                for (var c = j + 1u; c < n; c = c + 1u) {
                    m[c * n + i] = m[c * n + i] - l * m[c * n + j];
                }
            }
        }
        workgroupBarrier();
    }
    for (var t = lid; t < n * n; t = t + block_x) {
        a[base + t] = m[t];
    }
    if (lid == 0u && zero_at != 0u && info[g] == 0) {
        info[g] = i32(zero_at);
    }
}
