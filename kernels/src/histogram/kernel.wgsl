// Histogram (WGSL): counts[bin_of(load(i))] += 1 for every element in
// range, dropped[0] += 1 for the others; counts and dropped are zeroed by
// the host first. Each workgroup counts into workgroup-memory bins, then
// adds its nonzero bins to the global counts with one atomic each.
// load(i) (u8 inputs are read from packed u32 words) and bin_of(v) come
// with the bindings. `dropped` is the u64 of the ABI as two u32 words: the
// low word counts, since a WGSL buffer has fewer than 2^32 elements.
// Workgroups of 256, grid-stride over steps of eight elements each.
struct Params {
    a: u32,
    b: u32,
    shift: u32,
    scale: f32,
    bins: u32,
    n: u32,
}
const NONE: u32 = 0xffffffffu;

// BIN_SLOTS: the bins rounded up to a power of two, at least 256 (a
// program per size: NVIDIA's Vulkan driver keeps far fewer workgroups
// resident with 16 KiB of workgroup memory each than with 1).
var<workgroup> local_bins: array<atomic<u32>, BIN_SLOTS>;

// kiln_mul_wide(a, b), the low and high words of a * b, comes first
// (mul_wide16.wgsl).

// Whether the 64-bit (high, low) x is at most y.
fn at_most(x: vec2<u32>, y: vec2<u32>) -> bool {
    return x.x < y.x || (x.x == y.x && x.y <= y.y);
}

// q * (b + 1) as 64 bits: q * b + q.
fn times_range(q: u32) -> vec2<u32> {
    let p = kiln_mul_wide(q, params.b);
    let lo = p.x + q;
    return vec2<u32>(p.y + select(0u, 1u, lo < q), lo);
}

// The bin of integer distance d = v - lo (modulo 2^32), or NONE.
fn int_bin(d: u32) -> u32 {
    if (d > params.b) {
        return NONE;
    }
    if (params.shift < 32u) {
        return d >> params.shift;
    }
    // floor(d * bins / (b + 1)): an f32 estimate within one, corrected exactly.
    var q = u32(f32(d) * params.scale);
    let t = kiln_mul_wide(d, params.bins).yx;
    if (!at_most(times_range(q), t)) {
        q -= 1u;
    } else if (at_most(times_range(q + 1u), t)) {
        q += 1u;
    }
    return q;
}

// Counts v into the workgroup's bins; 1 if it falls outside them, else 0.
fn add(v: VALUE) -> u32 {
    let bin = bin_of(v);
    if (bin == NONE) {
        return 1u;
    }
    atomicAdd(&local_bins[bin], 1u);
    return 0u;
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wg: vec3<u32>,
          @builtin(num_workgroups) groups: vec3<u32>) {
    for (var j = lid; j < params.bins; j += 256u) {
        atomicStore(&local_bins[j], 0u);
    }
    workgroupBarrier();
    var missed = 0u;
    // Each step takes eight elements 256 apart, all loaded before any is
    // counted: eight loads in flight per invocation, not one.
    let stride = groups.x * 2048u;
    for (var i = wg.x * 2048u + lid; i < params.n; i += stride) {
        if (params.n - i > 1792u) {
            let v0 = load(i);
            let v1 = load(i + 256u);
            let v2 = load(i + 512u);
            let v3 = load(i + 768u);
            let v4 = load(i + 1024u);
            let v5 = load(i + 1280u);
            let v6 = load(i + 1536u);
            let v7 = load(i + 1792u);
            missed += add(v0) + add(v1) + add(v2) + add(v3) + add(v4) + add(v5) + add(v6) + add(v7);
        } else {
            for (var k = i; k < params.n; k += 256u) {
                missed += add(load(k));
            }
        }
    }
    workgroupBarrier();
    for (var j = lid; j < params.bins; j += 256u) {
        let c = atomicLoad(&local_bins[j]);
        if (c != 0u) {
            atomicAdd(&counts[j], c);
        }
    }
    if (missed != 0u) {
        atomicAdd(&dropped[0], missed);
    }
}
