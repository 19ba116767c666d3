// Fill of whole 16-byte vectors with one 16-byte value: the aligned middle
// of a fill range (the byte kernel does its ends). One 16-byte store per
// invocation and step, grid-stride; memory-bound at 16 B written.

struct Fill4Params {
    // The vectors, from the start of the binding: [first, first + count).
    first: u32,
    count: u32,
    value: vec4<u32>,
}

@group(0) @binding(0) var<storage, read_write> dst: array<vec4<u32>>;
@group(1) @binding(0) var<uniform> params: Fill4Params;

@compute @workgroup_size(256)
fn kiln_fill_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * 256u;
    for (var i = gid.x; i < params.count; i += stride) {
        dst[params.first + i] = params.value;
    }
}
