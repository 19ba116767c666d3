// Copy of whole 16-byte vectors between two buffers: what NVIDIA's Vulkan
// driver runs `vkCmdCopyBuffer` far below (833 against about 2400 GB/s on
// an H100). One 16-byte load and store per invocation and step, grid-stride.

struct Copy4Params {
    // The vectors, from the start of each binding.
    src_first: u32,
    dst_first: u32,
    count: u32,
}

@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(1) @binding(0) var<uniform> params: Copy4Params;

@compute @workgroup_size(256)
fn kiln_copy_vec4(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * 256u;
    for (var i = gid.x; i < params.count; i += stride) {
        dst[params.dst_first + i] = src[params.src_first + i];
    }
}
