// Fill of any byte range with a pattern of 1, 2, 4 or 8 bytes: the ends
// of a range that fill_vec4.wgsl does not cover, and ranges not in whole
// words.
// One invocation owns one 32-bit word of the destination, so the bytes it
// keeps at the edges of the range are written by nobody else: no atomics.
// Grid-stride over words; memory-bound at 4 B written per word.

struct FillParams {
    // The range, in bytes from the start of the binding: [first_byte, end_byte).
    first_byte: u32,
    end_byte: u32,
    // The words it touches: [first_word, first_word + words).
    first_word: u32,
    words: u32,
    // The pattern as the 8 bytes of an even word followed by an odd one.
    pattern_lo: u32,
    pattern_hi: u32,
}

@group(0) @binding(0) var<storage, read_write> dst: array<u32>;
@group(1) @binding(0) var<uniform> params: FillParams;

// Bits of the bytes of the word at byte `start` that lie outside [lo, hi).
fn outside(start: u32, lo: u32, hi: u32) -> u32 {
    var mask = 0u;
    for (var b = 0u; b < 4u; b++) {
        let pos = start + b;
        if (pos < lo || pos >= hi) {
            mask |= 0xffu << (8u * b);
        }
    }
    return mask;
}

@compute @workgroup_size(256)
fn kiln_fill_bytes(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * 256u;
    for (var i = gid.x; i < params.words; i += stride) {
        let w = params.first_word + i;
        let value = select(params.pattern_lo, params.pattern_hi, (w & 1u) == 1u);
        let keep = outside(w * 4u, params.first_byte, params.end_byte);
        if (keep == 0u) {
            dst[w] = value;
        } else {
            dst[w] = (dst[w] & keep) | (value & ~keep);
        }
    }
}
