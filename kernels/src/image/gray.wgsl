// RGB or RGBA u8 to gray: (299 r + 587 g + 114 b) / 1000, truncated (the
// seed's weights in exact integer arithmetic). Bytes are packed four to a
// 32-bit word (WGSL has no 8-bit storage): each invocation writes one word
// of output (4 pixels) from the CHANNELS words holding their input, so no
// two invocations write the same word; a last, partial word keeps the
// bytes past the end.
struct Params {
    pixels: u32,
}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
const CH: u32 = CHANNELS;

// Byte j of the input, read from the words this invocation loaded.
fn byte_at(words: array<u32, 4>, j: u32) -> u32 {
    return (words[j / 4u] >> ((j % 4u) * 8u)) & 255u;
}

// The gray value of pixel p of the four (p constant where called, so the
// words stay in registers).
fn gray_of(words: array<u32, 4>, p: u32) -> u32 {
    let j = p * CH;
    return (299u * byte_at(words, j) + 587u * byte_at(words, j + 1u) + 114u * byte_at(words, j + 2u)) / 1000u;
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let n = params.pixels;
    let units = (n + 3u) / 4u;
    let available = arrayLength(&src);
    for (var u = gid.x; u < units; u += groups.x * block_x) {
        // Pixels 4u..4u + 3 occupy bytes 4u CH.. of the input: words u CH.. .
        var words: array<u32, 4>;
        for (var k = 0u; k < CH; k += 1u) {
            let index = u * CH + k;
            if (index < available) {
                words[k] = src[index];
            }
        }
        let count = min(4u, n - 4u * u);
        if (count == 4u) {
            dst[u] = gray_of(words, 0u) | (gray_of(words, 1u) << 8u) | (gray_of(words, 2u) << 16u)
                | (gray_of(words, 3u) << 24u);
            continue;
        }
        var out = 0u;
        if (count < 4u) {
            out = dst[u];
        }
        for (var p = 0u; p < count; p += 1u) {
            let j = p * CH;
            let gray = (299u * byte_at(words, j) + 587u * byte_at(words, j + 1u) + 114u * byte_at(words, j + 2u)) / 1000u;
            out = (out & ~(255u << (8u * p))) | (gray << (8u * p));
        }
        dst[u] = out;
    }
}
