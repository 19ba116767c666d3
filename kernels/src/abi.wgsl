// The kernel ABI every WGSL kernel follows (kernels/README.md): the scalar
// arguments in one uniform struct, `Params`, which each kernel declares;
// the block shape in three overrides, which the backend sets from the
// launch's block (the defaults here are never used).
@group(1) @binding(0) var<uniform> params: Params;

override block_x: u32 = 256;
override block_y: u32 = 1;
override block_z: u32 = 1;
