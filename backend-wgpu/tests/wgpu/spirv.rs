//! Kernels that call `kiln_mul_wide`, whose SPIR-V kiln writes itself on
//! Vulkan (each call one `OpUMulExtended`): the same words as the host's
//! 64-bit products, at several block shapes, with the SPIR-V path and with
//! it hidden; and the Philox fills, which use it, against the CPU's bits.

use kiln_conformance::{run, Options, Summary};
use kiln_core::{Args, LaunchConfig, Program};
use kiln_wgpu::Optional;
use rand::Rng;

use crate::common::{rng, with_and_without};

/// out[3 i .. 3 i + 3] = the low and high words of a[i] * b[i], and the
/// high word of (low word) * 0xD2511F53 (a call on a call's result, as
/// Philox makes them); shape[0] = block_x, read from the override. After
/// the library's `kiln_mul_wide` (the high word from 16-bit halves).
const WIDE: &str = r#"
struct Params { n: u32 }
@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;
@group(0) @binding(3) var<storage, read_write> shape: array<u32>;
@group(1) @binding(0) var<uniform> params: Params;
override block_x: u32 = 64;

@compute @workgroup_size(block_x)
fn wide(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    if (gid.x == 0u) {
        shape[0] = block_x;
    }
    for (var i = gid.x; i < params.n; i += groups.x * block_x) {
        let p = kiln_mul_wide(a[i], b[i]);
        out[3u * i] = p.x;
        out[3u * i + 1u] = p.y;
        out[3u * i + 2u] = kiln_mul_wide(p.x, 0xD2511F53u).y;
    }
}
"#;

#[test]
fn wide_products_match_the_host_with_and_without_spirv() {
    let Some(devices) = with_and_without(Optional::Spirv) else { return };
    assert!(!devices[1].info().features.wide_multiply, "SPIR-V hidden, yet {:?}", devices[1].info().features);
    let mut r = rng(45);
    let edges = [0u32, 1, 2, 0xffff, 0x1_0000, 0x1_0001, 0x7fff_ffff, 0x8000_0000, 0xffff_fffe, u32::MAX];
    let mut a: Vec<u32> = edges.iter().flat_map(|&x| edges.iter().map(move |_| x)).collect();
    let mut b: Vec<u32> = edges.iter().flat_map(|_| edges.iter().copied()).collect();
    for _ in 0..5000 {
        a.push(r.random());
        b.push(r.random());
    }
    let n = a.len();
    let want: Vec<u32> = a
        .iter()
        .zip(&b)
        .flat_map(|(&x, &y)| {
            let p = u64::from(x) * u64::from(y);
            let q = u64::from(p as u32) * 0xD251_1F53;
            [p as u32, (p >> 32) as u32, (q >> 32) as u32]
        })
        .collect();
    for dev in &devices {
        let source = format!("{}{WIDE}", include_str!("../../../kernels/src/mul_wide16.wgsl"));
        let k = dev.kernel(&Program::new("wide").wgsl(source)).unwrap();
        let (da, db) = (dev.upload(&a).unwrap(), dev.upload(&b).unwrap());
        for (block, grid) in [(64u32, 3u32), (128, 1000), (256, 7)] {
            let mut out = dev.upload(&vec![0xa5a5_a5a5u32; 3 * n]).unwrap();
            let mut shape = dev.upload(&[0u32]).unwrap();
            let args = Args::new().arg(&da).arg(&db).arg(&mut out).arg(&mut shape).arg(n as u32);
            // SAFETY: the kernel reads a[0..n) and b[0..n), writes out[0..3 n) and shape[0].
            unsafe { dev.stream().launch(&k, LaunchConfig::new(grid, block), args).unwrap() };
            let got = out.to_vec().unwrap();
            let what = format!("block {block}, grid {grid}, on {}", dev.info());
            if let Some(i) = got.iter().zip(&want).position(|(g, w)| g != w) {
                let (x, y) = (a[i / 3], b[i / 3]);
                panic!("{what}: word {i} of {x:#x} * {y:#x} is {:#x}, not {:#x}", got[i], want[i]);
            }
            assert_eq!(shape.to_vec().unwrap(), [block], "{what}: the block override");
        }
    }
}

/// The Philox fills, whose WGSL calls `kiln_mul_wide`, give the CPU's bits
/// on both devices: at the suite's sizes, and at 5 Mi + 3 values, where
/// each invocation of the fill strides over several blocks (its grid is
/// capped at 2048 workgroups of 256, four 4-byte values a block).
#[test]
fn random_fills_match_the_cpu_with_and_without_spirv() {
    let Some(devices) = with_and_without(Optional::Spirv) else { return };
    for dev in &devices {
        for sizes in [None, Some(vec![(5 << 20) + 3])] {
            let mut options = Options { pattern: Some("random".to_string()), ..Options::default() };
            if let Some(sizes) = sizes {
                options.sizes = sizes;
            }
            let records = run(dev, &options, &mut |_| {});
            let summary = Summary::of(&records);
            assert!(!records.is_empty() && summary.ok(), "random on {}: {summary}\n{records:#?}", dev.info());
            eprintln!("random on {} (wide multiply {}): {summary}", dev.info(), dev.info().features.wide_multiply);
        }
    }
}
