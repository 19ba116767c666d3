// One 32 x 8 workgroup computes a 128 x 16 output tile of f32 pixels;
// invocation (tx, ty) the 8 pixels (tx + 32 e, ty + 8 r), so a subgroup's
// workgroup-memory reads are 32 consecutive words and its stores coalesced.
// The input tile and its halo (FW - 1 columns, FH - 1 rows) are staged once
// in workgroup memory, read along rows, so each input pixel comes from
// device memory about once (the halo of neighbouring tiles from the cache):
// the FW x FH multiply-adds per pixel read workgroup memory only. Every
// row an invocation stages is loaded before any is stored, so all its loads
// are in flight at once. Tiles are grid-stride in 2D.
//
// Measured on the H200's Vulkan driver (3 x 3 box blur, 8192^2 f32,
// `wgpu_large --lab`, h200-2026-12-03-b-wgpu-lab.txt): 0.189 ms so, against
// 0.244 with tiles of 32 rows, 0.341 with tiles of 8, 0.378 with 16 rows
// staged a row at a time, and 0.249 for the kernel before (32 rows, a
// row's five loads then its stores).
const RX: u32 = u32(FILTER_W) / 2u;
const RY: u32 = u32(FILTER_H) / 2u;
const TW: u32 = 128u;
const TH: u32 = 16u;
const SW: u32 = TW + 2u * RX;
const SH: u32 = TH + 2u * RY;
// Rows of the staged tile per invocation (8 invocations a column).
const ROWS: u32 = (SH + 7u) / 8u;
// Filters of up to 25 taps keep them in registers (a private array
// indexed by unrolled constants), larger ones in workgroup memory, as
// CUDA's kernel does.
const TAPS_PRIVATE: bool = FILTER_W * FILTER_H <= 25;

var<workgroup> tile: array<f32, SW * SH>;
var<workgroup> shared_taps: array<f32, FW * FH>;

@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let tx = lid.x;
    let ty = lid.y;
    var taps: array<f32, FW * FH>;
    if (TAPS_PRIVATE) {
        for (var k = 0u; k < u32(FILTER_W * FILTER_H); k += 1u) {
            taps[k] = weights[k];
        }
    } else {
        for (var k = ty * 32u + tx; k < u32(FILTER_W * FILTER_H); k += 256u) {
            shared_taps[k] = weights[k];
        }
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
                // Each of the invocation's rows: its 128 core columns and
                // its halo (2 RX <= 14 of them) as five loads.
                let corner = u32(y0) * width + u32(x0);
                let hx = tx + TW;
                var v: array<f32, ROWS * 5u>;
                for (var r = 0u; r < ROWS; r += 1u) {
                    let sy = ty + 8u * r;
                    if (sy < SH) {
                        let row = corner + sy * width;
                        v[5u * r] = pixel(row + tx);
                        v[5u * r + 1u] = pixel(row + tx + 32u);
                        v[5u * r + 2u] = pixel(row + tx + 64u);
                        v[5u * r + 3u] = pixel(row + tx + 96u);
                        if (hx < SW) {
                            v[5u * r + 4u] = pixel(row + hx);
                        }
                    }
                }
                for (var r = 0u; r < ROWS; r += 1u) {
                    let sy = ty + 8u * r;
                    if (sy < SH) {
                        let at = sy * SW + tx;
                        tile[at] = v[5u * r];
                        tile[at + 32u] = v[5u * r + 1u];
                        tile[at + 64u] = v[5u * r + 2u];
                        tile[at + 96u] = v[5u * r + 3u];
                        if (hx < SW) {
                            tile[at + TW] = v[5u * r + 4u];
                        }
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
            for (var r = 0u; r < TH / 8u; r += 1u) {
                let ly = ty + 8u * r;
                var a0 = 0.0;
                var a1 = 0.0;
                var a2 = 0.0;
                var a3 = 0.0;
                for (var i = 0u; i < u32(FILTER_H); i += 1u) {
                    let row = (ly + i) * SW + tx;
                    for (var j = 0u; j < u32(FILTER_W); j += 1u) {
                        var t: f32;
                        if (TAPS_PRIVATE) {
                            t = taps[i * u32(FILTER_W) + j];
                        } else {
                            t = shared_taps[i * u32(FILTER_W) + j];
                        }
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
