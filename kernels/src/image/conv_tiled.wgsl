// One 32 x 8 workgroup computes a 128 x 32 output tile of f32 pixels;
// invocation (tx, ty) the 16 pixels (tx + 32 e, ty + 8 r), so a subgroup's
// workgroup-memory reads are 32 consecutive words and its stores coalesced.
// The input tile and its halo (FW - 1 columns, FH - 1 rows) are staged once
// in workgroup memory, read along rows, so each input pixel comes from
// device memory about once (the halo of neighbouring tiles from the cache):
// the FW x FH multiply-adds per pixel read workgroup memory only. Tiles
// are grid-stride in 2D.
const RX: u32 = u32(FILTER_W) / 2u;
const RY: u32 = u32(FILTER_H) / 2u;
const TW: u32 = 128u;
const TH: u32 = 32u;
const SW: u32 = TW + 2u * RX;
const SH: u32 = TH + 2u * RY;

var<workgroup> tile: array<f32, SW * SH>;
var<workgroup> taps: array<f32, FW * FH>;

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let tx = lid.x;
    let ty = lid.y;
    for (var k = ty * 32u + tx; k < u32(FILTER_W * FILTER_H); k += 256u) {
        taps[k] = weights[k];
    }
    let width = params.width;
    let height = params.height;
    let w = i32(width);
    let h = i32(height);
    let tiles_x = (width + TW - 1u) / TW;
    let tiles_y = (height + TH - 1u) / TH;
    for (var by = wid.y; by < tiles_y; by += groups.y) {
        for (var bx = wid.x; bx < tiles_x; bx += groups.x) {
            let x0 = i32(bx * TW) - i32(RX);
            let y0 = i32(by * TH) - i32(RY);
            if (x0 >= 0 && y0 >= 0 && x0 + i32(SW) <= w && y0 + i32(SH) <= h) {
                // A row's 128 core columns and its halo (2 RX <= 14 of
                // them) as five loads, all issued before any is stored.
                let corner = u32(y0) * width + u32(x0);
                let hx = tx + TW;
                for (var sy = ty; sy < SH; sy += 8u) {
                    let row = corner + sy * width;
                    let v0 = pixel(row + tx);
                    let v1 = pixel(row + tx + 32u);
                    let v2 = pixel(row + tx + 64u);
                    let v3 = pixel(row + tx + 96u);
                    var v4 = 0.0;
                    if (hx < SW) {
                        v4 = pixel(row + hx);
                    }
                    let at = sy * SW + tx;
                    tile[at] = v0;
                    tile[at + 32u] = v1;
                    tile[at + 64u] = v2;
                    tile[at + 96u] = v3;
                    if (hx < SW) {
                        tile[at + TW] = v4;
                    }
                }
            } else {
                for (var sy = ty; sy < SH; sy += 8u) {
                    let gy = border_index(y0 + i32(sy), h);
                    for (var sx = tx; sx < SW; sx += 32u) {
                        let gx = border_index(x0 + i32(sx), w);
                        var p = 0.0;
                        if (gy >= 0 && gx >= 0) {
                            p = pixel(u32(gy) * width + u32(gx));
                        }
                        tile[sy * SW + sx] = p;
                    }
                }
            }
            workgroupBarrier();
            let ox = bx * TW + tx;
            for (var r = 0u; r < 4u; r += 1u) {
                let ly = ty + 8u * r;
                var a0 = 0.0;
                var a1 = 0.0;
                var a2 = 0.0;
                var a3 = 0.0;
                for (var i = 0u; i < u32(FILTER_H); i += 1u) {
                    let row = (ly + i) * SW + tx;
                    for (var j = 0u; j < u32(FILTER_W); j += 1u) {
                        let t = taps[i * u32(FILTER_W) + j];
                        a0 += t * tile[row + j];
                        a1 += t * tile[row + 32u + j];
                        a2 += t * tile[row + 64u + j];
                        a3 += t * tile[row + 96u + j];
                    }
                }
                let oy = by * TH + ly;
                if (oy < height) {
                    let o = oy * width + ox;
                    if (ox < width) {
                        dst[o] = a0 / params.divisor;
                    }
                    if (ox + 32u < width) {
                        dst[o + 32u] = a1 / params.divisor;
                    }
                    if (ox + 64u < width) {
                        dst[o + 64u] = a2 / params.divisor;
                    }
                    if (ox + 96u < width) {
                        dst[o + 96u] = a3 / params.divisor;
                    }
                }
            }
            // The next tile overwrites `tile`.
            workgroupBarrier();
        }
    }
}
