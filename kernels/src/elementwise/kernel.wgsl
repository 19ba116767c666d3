// Elementwise binary operations: ew_out[i] = COMBINE with a = ew_a[i], b = ew_b[i]
// (axpy: a = x[i], b = y[i], and COMBINE is alpha * a + b). In place, ew_a
// (or ew_b for axpy) is defined to ew_out. Grid-stride, four elements
// (four strides apart) loaded before any is stored: four loads in flight.
struct Params {
    PARAMS_FIELDS
}
fn combine(a: T, b: T) -> T {
    return COMBINE;
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * block_x;
    var i = gid.x;
    // i + 3 stride < n, written so that nothing wraps.
    for (; i < params.n && params.n - i > 3u * stride; i += 4u * stride) {
        let a0 = ew_a[i];
        let b0 = ew_b[i];
        let a1 = ew_a[i + stride];
        let b1 = ew_b[i + stride];
        let a2 = ew_a[i + 2u * stride];
        let b2 = ew_b[i + 2u * stride];
        let a3 = ew_a[i + 3u * stride];
        let b3 = ew_b[i + 3u * stride];
        ew_out[i] = combine(a0, b0);
        ew_out[i + stride] = combine(a1, b1);
        ew_out[i + 2u * stride] = combine(a2, b2);
        ew_out[i + 3u * stride] = combine(a3, b3);
    }
    for (; i < params.n; i += stride) {
        ew_out[i] = combine(ew_a[i], ew_b[i]);
    }
}
