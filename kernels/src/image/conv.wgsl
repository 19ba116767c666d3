// One invocation per word of output (1 f32 pixel or 4 u8 pixels), so no two
// invocations write the same word; a last, partial u8 word keeps the bytes
// past the end. Grid-stride in 1D.
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
