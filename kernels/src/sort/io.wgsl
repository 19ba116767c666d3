// The keys and values a sort pass (kernel.wgsl, onesweep.wgsl) reads and
// writes, its first four arguments; `flags` says which it uses.
@group(0) @binding(0) var<storage, read> keys_in: array<u32>;
@group(0) @binding(1) var<storage, read> vals_in: array<u32>;
@group(0) @binding(2) var<storage, read_write> keys_out: array<u32>;
@group(0) @binding(3) var<storage, read_write> vals_out: array<u32>;
