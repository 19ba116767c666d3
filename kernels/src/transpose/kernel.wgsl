// transpose: dst (cols x rows) = src (rows x cols)^T, both row-major.
//
// Elements move as raw bits in 32-bit words: a 4-byte element is one word,
// an 8-byte one WORDS = 2 consecutive words. 1- and 2-byte elements share
// words (WGSL has no 8- or 16-bit storage types), so PACKED builds each
// output word from its PER_WORD elements gathered from the input: no two
// invocations write the same word, and the bytes of a last, partial word
// past the end are kept.
//
// TILED is the coalesced transpose through a 32 x 32 workgroup tile, moved
// by 32 x 8 invocations, four rows each (a row of the tile is 33 entries,
// so that reading a column of 4-byte elements meets 32 different banks);
// NAIVE reads along rows and writes strided (16 x 16 invocations). Every
// loop is grid-stride, so a grid capped at the adapter's 65535 workgroups
// per dimension still covers the matrix.
struct Params {
    rows: u32,
    cols: u32,
}
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
const TILE: u32 = 32u;
const STEPS: u32 = 4u;
const WPE: u32 = WORDS;
const PITCH: u32 = 33u;
var<workgroup> tile: array<u32, 1056u * WORDS>;

@compute @workgroup_size(block_x, block_y, block_z)
fn TILED(
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(num_workgroups) groups: vec3<u32>,
) {
    let rows = params.rows;
    let cols = params.cols;
    let tiles_x = (cols + TILE - 1u) / TILE;
    let tiles_y = (rows + TILE - 1u) / TILE;
    for (var ty = wid.y; ty < tiles_y; ty += groups.y) {
        for (var tx = wid.x; tx < tiles_x; tx += groups.x) {
            let c = tx * TILE + lid.x;
            for (var s = 0u; s < STEPS; s += 1u) {
                let y = lid.y + s * 8u;
                let r = ty * TILE + y;
                if (r < rows && c < cols) {
                    for (var k = 0u; k < WPE; k += 1u) {
                        tile[(y * PITCH + lid.x) * WPE + k] = src[(r * cols + c) * WPE + k];
                    }
                }
            }
            workgroupBarrier();
            // Output row = input column (tx), output column = input row (ty).
            let ocol = ty * TILE + lid.x;
            for (var s = 0u; s < STEPS; s += 1u) {
                let y = lid.y + s * 8u;
                let orow = tx * TILE + y;
                if (orow < cols && ocol < rows) {
                    for (var k = 0u; k < WPE; k += 1u) {
                        dst[(orow * rows + ocol) * WPE + k] = tile[(lid.x * PITCH + y) * WPE + k];
                    }
                }
            }
            workgroupBarrier();
        }
    }
}

@compute @workgroup_size(block_x, block_y, block_z)
fn NAIVE(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    for (var r = gid.y; r < params.rows; r += groups.y * block_y) {
        for (var c = gid.x; c < params.cols; c += groups.x * block_x) {
            for (var k = 0u; k < WPE; k += 1u) {
                dst[(c * params.rows + r) * WPE + k] = src[(r * params.cols + c) * WPE + k];
            }
        }
    }
}

@compute @workgroup_size(block_x, block_y, block_z)
fn PACKED(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let rows = params.rows;
    let n = rows * params.cols;
    let words = (n + PER_WORD - 1u) / PER_WORD;
    let mask = (1u << BITS) - 1u;
    for (var w = gid.x; w < words; w += groups.x * block_x) {
        let first = w * PER_WORD;
        var word = 0u;
        if (n - first < PER_WORD) {
            word = dst[w];
        }
        for (var e = 0u; e < PER_WORD; e += 1u) {
            let o = first + e;
            if (o < n) {
                // Output element o is (o / rows, o % rows): input (o % rows, o / rows).
                let i = (o % rows) * params.cols + o / rows;
                let v = (src[i / PER_WORD] >> ((i % PER_WORD) * BITS)) & mask;
                let shift = e * BITS;
                word = (word & ~(mask << shift)) | (v << shift);
            }
        }
        dst[w] = word;
    }
}
