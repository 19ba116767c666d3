// The parameters and bindings of every matmul WGSL kernel (kernel.wgsl's
// and coop.wgsl's): a and b of IN, c of ACCUM, and the shape, leading
// dimensions, batch strides and flags (bit 0: a stored transposed, bit 1: b).
struct Params {
    m: u32,
    n: u32,
    k: u32,
    batch: u32,
    lda: u32,
    ldb: u32,
    ldc: u32,
    sa: u32,
    sb: u32,
    sc: u32,
    flags: u32,
}
@group(0) @binding(0) var<storage, read> a: array<IN>;
@group(0) @binding(1) var<storage, read> b: array<IN>;
@group(0) @binding(2) var<storage, read_write> c: array<ACCUM>;
