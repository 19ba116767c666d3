// Whole-array fold: dst[w] = fold of TERM over the elements workgroup w
// visits (grid-stride), for w < the number of workgroups. A first pass
// writes one partial per workgroup; a one-workgroup pass folds them.
// FOLD folds `a` and `b`; TERM is element i's term (src[i], or
// src[i] * src2[i] for dot); IDENTITY the fold's neutral value.
// Workgroups of 256 invocations (the tree below assumes it). Each
// invocation keeps four loads in flight (four accumulators over four
// strides), so that a grid of about one resident workgroup set covers the
// memory latency.
struct Params {
    PARAMS_FIELDS
}
var<workgroup> part: array<T, 256>;

fn fold(a: T, b: T) -> T {
    return FOLD;
}

fn term(i: u32) -> T {
    return TERM;
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>,
          @builtin(num_workgroups) groups: vec3<u32>) {
    var a0 = IDENTITY;
    var a1 = IDENTITY;
    var a2 = IDENTITY;
    var a3 = IDENTITY;
    let stride = groups.x * 256u;
    var i = wg.x * 256u + lid;
    // i + 3 stride < n, written so that nothing wraps.
    for (; i < params.n && params.n - i > 3u * stride; i += 4u * stride) {
        a0 = fold(a0, term(i));
        a1 = fold(a1, term(i + stride));
        a2 = fold(a2, term(i + 2u * stride));
        a3 = fold(a3, term(i + 3u * stride));
    }
    for (; i < params.n; i += stride) {
        a0 = fold(a0, term(i));
    }
    part[lid] = fold(fold(a0, a1), fold(a2, a3));
    workgroupBarrier();
    // A tree in workgroup memory, halving the active invocations each step.
    for (var s = 128u; s > 0u; s >>= 1u) {
        if (lid < s) {
            part[lid] = fold(part[lid], part[lid + s]);
        }
        workgroupBarrier();
    }
    if (lid == 0u) {
        dst[wg.x] = part[0];
    }
}
