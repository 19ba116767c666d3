// Small 2D convolution with border modes (the blurs are convolutions with
// fixed weights): result = sum(w * p) / divisor, summed in f32 in raster
// order of the filter. What both WGSL kernels share (conv.wgsl takes a
// pixel, or a word of u8 pixels, per invocation; conv_tiled.wgsl stages
// tiles of f32 pixels in workgroup memory).
//
// Pixels are f32, or u8 packed four to a 32-bit word (WGSL has no 8-bit
// storage): PIX is the storage type, PER_UNIT the pixels per word, and
// PIXEL_LOAD / PACK_BODY read a pixel and assemble a word. u8 results are
// floor(v + 0.5) clamped to [0, 255].
//
// BORDER: 0 clamp, 1 zero, 2 reflect (half-sample symmetric, period 2 n).
struct Params {
    width: u32,
    height: u32,
    filter_w: u32,
    filter_h: u32,
    border: u32,
    divisor: f32,
}
@group(0) @binding(0) var<storage, read> src: array<PIX>;
@group(0) @binding(1) var<storage, read> weights: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<PIX>;
const FILTER_W: i32 = FW;
const FILTER_H: i32 = FH;
const UNIT: u32 = PER_UNIT;

fn pixel(i: u32) -> f32 {
    return PIXEL_LOAD;
}

fn round_u8(v: f32) -> u32 {
    return u32(clamp(floor(v + 0.5), 0.0, 255.0));
}

fn pack(old: PIX, vals: array<f32, 4>, count: u32) -> PIX {
    PACK_BODY
}

// The source coordinate for i on an axis of n pixels, or -1 for a zero pixel.
fn border_index(i: i32, n: i32) -> i32 {
    if (i >= 0 && i < n) {
        return i;
    }
    if (params.border == 0u) {
        return select(n - 1, 0, i < 0);
    }
    if (params.border == 1u) {
        return -1;
    }
    let period = 2 * n;
    var r = i % period;
    if (r < 0) {
        r += period;
    }
    return select(period - 1 - r, r, r < n);
}

