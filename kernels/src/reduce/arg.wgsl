// argmin / argmax: dst[w], dst_idx[2w] = the first extreme of the elements
// workgroup w visits (grid-stride), with INDEX their index: `i` over x in a
// first pass, `src_idx[2u * i]` over the partials of a first pass in the
// second. BETTER says whether `a` is more extreme than `b`. Indices are u64
// in the ABI, written as (low, high) u32 words. Workgroups of 256 invocations.
struct Params {
    sentinel: T,
    n: u32,
}
var<workgroup> part_val: array<T, 256>;
var<workgroup> part_idx: array<u32, 256>;

fn better(a: T, b: T) -> bool {
    return BETTER;
}

// Whether (a, ia) comes before (b, ib): a NaN first, then the more extreme
// value, then the smaller index. A total order, so any folding order agrees.
fn before(a: T, ia: u32, b: T, ib: u32) -> bool {
    let an = is_nan(a);
    let bn = is_nan(b);
    if (an || bn) {
        return an && (!bn || ia < ib);
    }
    if (a != b) {
        return better(a, b);
    }
    return ia < ib;
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>,
          @builtin(num_workgroups) groups: vec3<u32>) {
    var best = params.sentinel;
    var at = 0xffffffffu;
    let stride = groups.x * 256u;
    for (var i = wg.x * 256u + lid; i < params.n; i += stride) {
        let v = src[i];
        let k = INDEX;
        if (before(v, k, best, at)) {
            best = v;
            at = k;
        }
    }
    part_val[lid] = best;
    part_idx[lid] = at;
    workgroupBarrier();
    for (var s = 128u; s > 0u; s >>= 1u) {
        if (lid < s && before(part_val[lid + s], part_idx[lid + s], part_val[lid], part_idx[lid])) {
            part_val[lid] = part_val[lid + s];
            part_idx[lid] = part_idx[lid + s];
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        dst[wg.x] = part_val[0];
        dst_idx[2u * wg.x] = part_idx[0];
        dst_idx[2u * wg.x + 1u] = 0u;
    }
}
