// sort (WGSL): onesweep's digit counts (onesweep.cu's STEP 0). One read of
// the caller's keys counts all four digit histograms at once, into
// counts[pass * 256 + digit] (zeroed by the host). Each workgroup counts
// into two copies of the histograms in workgroup memory (even and odd
// invocations apart, so that equal keys collide half as often), four keys
// in flight per invocation, grid-stride; then adds its counts to `counts`.
struct Params {
    n: u32,
}
@group(0) @binding(0) var<storage, read> keys: array<u32>;
@group(0) @binding(1) var<storage, read_write> counts: array<atomic<u32>>;
var<workgroup> hist: array<atomic<u32>, 2048>;

// Count the four digits of the pattern of `raw` into copy `h`.
fn count_key(h: u32, raw: u32) {
    let b = map_key(raw);
    for (var p = 0u; p < 4u; p += 1u) {
        atomicAdd(&hist[h + p * 256u + ((b >> (8u * p)) & 255u)], 1u);
    }
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(
    @builtin(local_invocation_index) lid: u32,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    for (var j = lid; j < 2048u; j += 256u) {
        atomicStore(&hist[j], 0u);
    }
    workgroupBarrier();
    let h = (lid & 1u) * 1024u;
    let n = params.n;
    let stride = groups.x * 256u;
    for (var i = wid.x * 256u + lid; i < n; i += 4u * stride) {
        let i1 = i + stride;
        let i2 = i1 + stride;
        let i3 = i2 + stride;
        let k0 = keys[i];
        var k1 = 0u;
        var k2 = 0u;
        var k3 = 0u;
        if (i1 < n) {
            k1 = keys[i1];
        }
        if (i2 < n) {
            k2 = keys[i2];
        }
        if (i3 < n) {
            k3 = keys[i3];
        }
        count_key(h, k0);
        if (i1 < n) {
            count_key(h, k1);
        }
        if (i2 < n) {
            count_key(h, k2);
        }
        if (i3 < n) {
            count_key(h, k3);
        }
    }
    workgroupBarrier();
    for (var j = lid; j < 1024u; j += 256u) {
        let c = atomicLoad(&hist[j]) + atomicLoad(&hist[1024u + j]);
        if (c != 0u) {
            atomicAdd(&counts[j], c);
        }
    }
}
