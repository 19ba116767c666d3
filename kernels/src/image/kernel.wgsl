// Small 2D convolution with border modes (the blurs are convolutions with
// fixed weights): result = sum(w * p) / divisor, summed in f32 in raster
// order of the filter.
//
// Pixels are f32, or u8 packed four to a 32-bit word (WGSL has no 8-bit
// storage): PIX is the storage type, PER_UNIT the pixels per word, and
// PIXEL_LOAD / PACK_BODY read a pixel and assemble a word. Each invocation
// computes one word of output (1 f32 pixel or 4 u8 pixels), so no two
// invocations write the same word; a last, partial u8 word keeps the bytes
// past the end. u8 results are floor(v + 0.5) clamped to [0, 255].
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
@group(1) @binding(0) var<uniform> params: Params;

override block_x: u32 = 256;
override block_y: u32 = 1;
override block_z: u32 = 1;

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

fn convolve(x: i32, y: i32) -> f32 {
    let w = i32(params.width);
    let h = i32(params.height);
    var sum = 0.0;
    // Inside the border, no tap needs the border rule: same taps, same order.
    if (x >= FILTER_W / 2 && x < w - FILTER_W / 2 && y >= FILTER_H / 2 && y < h - FILTER_H / 2) {
        let corner = u32(y - FILTER_H / 2) * params.width + u32(x - FILTER_W / 2);
        for (var i = 0; i < FILTER_H; i += 1) {
            let row = corner + u32(i) * params.width;
            for (var j = 0; j < FILTER_W; j += 1) {
                sum += weights[i * FILTER_W + j] * pixel(row + u32(j));
            }
        }
        return sum / params.divisor;
    }
    for (var i = 0; i < FILTER_H; i += 1) {
        let gy = border_index(y + i - FILTER_H / 2, h);
        for (var j = 0; j < FILTER_W; j += 1) {
            let gx = border_index(x + j - FILTER_W / 2, w);
            var p = 0.0;
            if (gy >= 0 && gx >= 0) {
                p = pixel(u32(gy) * params.width + u32(gx));
            }
            sum += weights[i * FILTER_W + j] * p;
        }
    }
    return sum / params.divisor;
}

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let n = params.width * params.height;
    let units = (n + UNIT - 1u) / UNIT;
    for (var u = gid.x; u < units; u += groups.x * block_x) {
        let first = u * UNIT;
        let count = min(UNIT, n - first);
        var vals: array<f32, 4>;
        if (count == UNIT) {
            // Constant indices: the values stay in registers.
            vals[0] = convolve(i32(first % params.width), i32(first / params.width));
            if (UNIT > 1u) {
                for (var e = 1u; e < 4u; e += 1u) {
                    let p = first + e;
                    vals[e] = convolve(i32(p % params.width), i32(p / params.width));
                }
            }
        } else {
            for (var e = 0u; e < count; e += 1u) {
                let p = first + e;
                vals[e] = convolve(i32(p % params.width), i32(p / params.width));
            }
        }
        var old = PIX();
        if (count < UNIT) {
            old = dst[u];
        }
        dst[u] = pack(old, vals, count);
    }
}
