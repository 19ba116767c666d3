//! Scalar arguments: mixed types packed as the ABI says, read back by a kernel.

use kiln_core::{f16, Args, LaunchConfig, Program};

use crate::common::device;

/// Copies each member of its scalar struct into an output buffer. The
/// member order (u32, f64, f32, i32) puts padding after the first.
const PROBE_F64: &str = r#"
struct Params { a: u32, b: f64, c: f32, d: i32 }
@group(0) @binding(0) var<storage, read_write> words: array<u32>;
@group(0) @binding(1) var<storage, read_write> wide: array<f64>;
@group(1) @binding(0) var<uniform> params: Params;
override block_x: u32 = 64;
override block_y: u32 = 1;
override block_z: u32 = 1;

@compute @workgroup_size(block_x, block_y, block_z)
fn probe(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x == 0u) {
        words[0] = params.a;
        words[1] = bitcast<u32>(params.c);
        words[2] = bitcast<u32>(params.d);
        wide[0] = params.b;
    }
}
"#;

/// The same without f64, and with f16 where the device has it.
const PROBE_F16: &str = r#"
enable f16;
struct Params { h: f16, n: u32, g: f16, x: f32 }
@group(0) @binding(0) var<storage, read_write> out: array<f32>;
@group(1) @binding(0) var<uniform> params: Params;
override block_x: u32 = 64;
override block_y: u32 = 1;
override block_z: u32 = 1;

@compute @workgroup_size(block_x, block_y, block_z)
fn probe16(@builtin(global_invocation_id) gid: vec3<u32>) {
    if (gid.x == 0u) {
        out[0] = f32(params.h);
        out[1] = f32(params.n);
        out[2] = f32(params.g);
        out[3] = params.x;
    }
}
"#;

#[test]
fn mixed_scalars_with_f64_arrive_exactly() {
    let Some(dev) = device() else { return };
    if !dev.info().features.f64 {
        eprintln!("skipped: no f64 on {}", dev.name());
        return;
    }
    let k = dev.kernel(&Program::new("probe").wgsl(PROBE_F64)).unwrap();
    let mut words = dev.upload(&[0xa5a5_a5a5u32; 3]).unwrap();
    let mut wide = dev.upload(&[f64::NAN]).unwrap();
    let (a, b, c, d) = (0xfeed_beefu32, -1.0e-300f64 / 3.0, 6.02e23f32, -123_456_789i32);
    let args = Args::new().arg(&mut words).arg(&mut wide).arg(a).arg(b).arg(c).arg(d);
    // SAFETY: the kernel writes words[0..3) and wide[0].
    unsafe { dev.stream().launch(&k, LaunchConfig::new(1, 64), args).unwrap() };
    assert_eq!(words.to_vec().unwrap(), vec![a, c.to_bits(), d as u32]);
    assert_eq!(wide.to_vec().unwrap()[0].to_bits(), b.to_bits());
}

#[test]
fn f16_scalars_sit_at_two_byte_offsets() {
    let Some(dev) = device() else { return };
    if !dev.info().features.f16 {
        eprintln!("skipped: no f16 on {}", dev.name());
        return;
    }
    let k = dev.kernel(&Program::new("probe16").wgsl(PROBE_F16)).unwrap();
    let mut out = dev.upload(&[f32::NAN; 4]).unwrap();
    let (h, n, g, x) = (f16::from_f32(-0.375), 70_000u32, f16::from_f32(1000.5), 3.25f32);
    let args = Args::new().arg(&mut out).arg(h).arg(n).arg(g).arg(x);
    // SAFETY: the kernel writes out[0..4).
    unsafe { dev.stream().launch(&k, LaunchConfig::new(1, 64), args).unwrap() };
    assert_eq!(out.to_vec().unwrap(), vec![h.to_f32(), n as f32, g.to_f32(), x]);
    assert_eq!(g.to_f32(), 1000.5, "the probe value must be exact in f16");
}
