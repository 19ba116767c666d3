//! Real transforms of even length `n` as complex ones of length `h = n/2`.
//!
//! Forward, the reals `x[2j] + i x[2j + 1]` make `z`, whose transform `Z`
//! gives the `h + 1` non-negative frequencies
//! `X[k] = (Z[k] + conj Z[h - k]) / 2 - i w^k (Z[k] - conj Z[h - k]) / 2`
//! (`w = exp(-2 pi i / n)`, `Z[h] = Z[0]`). A transform that is one kernel
//! does this as it writes (`Store::HalfSpectrum`); a longer one writes `Z`
//! to scratch and [`post_program`]'s kernel makes `X` from it.
//!
//! Inverse, `Z[k] = (X[k] + conj X[h - k]) + i w^-k (X[k] - conj X[h - k])`
//! as the first kernel reads (`Load::HalfSpectrum`), and the inverse
//! transform of `Z` holds the (unscaled) reals `x[2j]` and `x[2j + 1]` in
//! its parts (`Store::RealPairs`).

use std::sync::Arc;

use kiln_core::Program;

use super::stockham::HELPERS;
use crate::launch::{WGSL_ABI, program};

/// Invocations per workgroup of the post-processing kernel.
pub(super) const POST_BLOCK: u32 = 256;

/// The post-processing kernel of a forward real transform longer than one
/// kernel: invocation `i` of the grid makes frequency `k = i mod (h + 1)`
/// of transform `i / (h + 1)` from the dense `Z` (`h` per transform),
/// scaled, and writes it where the output side's `Params` say.
pub(super) fn post_program(wide: bool) -> Arc<Program> {
    let name = format!("kiln_fft_r2c_post_{}", if wide { "f64" } else { "f32" });
    program(&name, || {
        let source = format!(
            "alias R = {};\nalias C2 = vec2<R>;\n\
             @group(0) @binding(0) var<storage, read> src: array<C2>;\n\
             @group(0) @binding(1) var<storage, read_write> dst: array<C2>;\n\
             @group(0) @binding(2) var<storage, read> tw: array<C2>;\n\
             struct Params {{\n    total: u32,\n    h: u32,\n    out_count: u32,\n    out_off: u32,\n    \
             out_d0: u32,\n    out_d1: u32,\n    out_es: u32,\n    pack: u32,\n    scale: R,\n}}\n\
             {WGSL_ABI}{HELPERS}{}",
            if wide { "f64" } else { "f32" },
            POST
        );
        Program::new(&name).wgsl(source).define("KERNEL", &name)
    })
}

/// The post-processing kernel's entry point.
const POST: &str = "@compute @workgroup_size(block_x, block_y, block_z)
fn KERNEL(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * block_x;
    if (i >= params.total) { return; }
    let h = params.h;
    let tr = i / (h + 1u);
    let k = i % (h + 1u);
    let zb = tr * h;
    let a = src[zb + k % h];
    let e = src[zb + (h - k) % h];
    let even = (a + cconj(e)) * 0.5;
    let odd = mulni(a - cconj(e)) * 0.5;
    let v = (even + cmul(tw[params.pack + k], odd)) * params.scale;
    let to = tr + params.out_off;
    let ob = (to % params.out_count) * params.out_d0 + (to / params.out_count) * params.out_d1;
    dst[ob + k * params.out_es] = v;
}
";
