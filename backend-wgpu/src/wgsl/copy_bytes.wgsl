// Copy of a byte range between two buffers at any offsets and length, for
// what `copy_buffer_to_buffer` cannot do (offsets or lengths that are not
// multiples of 4). One invocation owns one 32-bit word of the destination,
// so the bytes it keeps at the edges of the range are written by nobody
// else. Whole words gather 4 source bytes with two loads and a funnel shift;
// memory-bound at 4 B read + 4 B written per word.

struct CopyParams {
    // First source byte, from the start of the source binding.
    src_byte: u32,
    // First destination byte, from the start of the destination binding.
    dst_byte: u32,
    // Bytes to copy.
    len: u32,
    // The destination words touched: [first_word, first_word + words).
    first_word: u32,
    words: u32,
}

@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(1) @binding(0) var<uniform> params: CopyParams;

// Source byte `pos`.
fn src_byte(pos: u32) -> u32 {
    return (src[pos >> 2u] >> ((pos & 3u) * 8u)) & 0xffu;
}

// The 4 source bytes from `pos` on, as one little-endian word; all four
// must lie inside the source range.
fn src_word(pos: u32) -> u32 {
    let i = pos >> 2u;
    let shift = (pos & 3u) * 8u;
    if (shift == 0u) {
        return src[i];
    }
    return (src[i] >> shift) | (src[i + 1u] << (32u - shift));
}

@compute @workgroup_size(256)
fn kiln_copy_bytes(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * 256u;
    let end = params.dst_byte + params.len;
    for (var i = gid.x; i < params.words; i += stride) {
        let w = params.first_word + i;
        let start = w * 4u;
        if (start >= params.dst_byte && start + 4u <= end) {
            dst[w] = src_word(params.src_byte + (start - params.dst_byte));
        } else {
            // An edge word: merge the bytes inside the range into the old value.
            var value = dst[w];
            for (var b = 0u; b < 4u; b++) {
                let pos = start + b;
                if (pos >= params.dst_byte && pos < end) {
                    let byte = src_byte(params.src_byte + (pos - params.dst_byte));
                    value = (value & ~(0xffu << (8u * b))) | (byte << (8u * b));
                }
            }
            dst[w] = value;
        }
    }
}
