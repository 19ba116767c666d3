//! WGSL kernels: compile errors, the ABI's checks, views at unaligned
//! offsets, block overrides, and the limits a launch is refused for.

use kiln_core::{Args, BackendKind, Error, LaunchConfig, Program};
use kiln_wgpu::Wgpu;
use rand::Rng;

use crate::common::{child, device, rng};

/// `y[i] = 2 * x[i] + 1` over `n` elements, grid-stride, as the ABI says.
const AFFINE: &str = r#"
struct Params { n: u32 }
@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(1) @binding(0) var<uniform> params: Params;
override block_x: u32 = 64;
override block_y: u32 = 1;
override block_z: u32 = 1;

@compute @workgroup_size(block_x, block_y, block_z)
fn affine(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    for (var i = gid.x; i < params.n; i += groups.x * block_x) {
        y[i] = 2.0 * x[i] + 1.0;
    }
}
"#;

fn affine() -> Program {
    Program::new("affine").wgsl(AFFINE)
}

#[test]
fn a_wgsl_error_names_its_line() {
    let Some(dev) = device() else { return };
    let src = "@group(0) @binding(0) var<storage, read_write> out: array<u32>;\n\
               @compute @workgroup_size(64)\n\
               fn broken(@builtin(global_invocation_id) gid: vec3<u32>) {\n\
               \x20   out[gid.x] = undefined_name;\n\
               }\n";
    let e = dev.kernel(&Program::new("broken").wgsl(src).define("UNUSED", 1)).unwrap_err();
    match &e {
        Error::Compile { backend: BackendKind::Wgpu, kernel, options, log } => {
            assert_eq!(kernel, "broken");
            assert_eq!(options, &vec!["-DUNUSED=1".to_string()]);
            assert!(log.starts_with("broken.wgsl:4:"), "{log}");
            assert!(log.contains("undefined_name"), "{log}");
        }
        other => panic!("expected a compile error, got {other}"),
    }
    // A type error found by validation, not parsing, also has its line.
    let src = "@compute @workgroup_size(1)\nfn typed() {\n    let a: u32 = 1u;\n    let b: f32 = a;\n}\n";
    let e = dev.kernel(&Program::new("typed").wgsl(src)).unwrap_err();
    assert!(matches!(&e, Error::Compile { log, .. } if log.starts_with("typed.wgsl:4:")), "{e}");
}

#[test]
fn missing_sources_and_entry_points_are_errors() {
    let Some(dev) = device() else { return };
    let e = dev.kernel(&Program::new("cuda_only").cuda("extern \"C\" __global__ void cuda_only() {}")).unwrap_err();
    assert!(matches!(e, Error::Unsupported { backend: BackendKind::Wgpu, .. }), "{e}");
    let e = dev.kernel(&Program::new("other_name").wgsl(AFFINE)).unwrap_err();
    assert!(e.to_string().contains("no `@compute fn other_name`") && e.to_string().contains("affine"), "{e}");
}

#[test]
fn kernels_run_at_several_block_shapes() {
    let Some(dev) = device() else { return };
    let k = dev.kernel(&affine()).unwrap();
    let mut r = rng(10);
    for (n, block, grid) in [(1usize, 64u32, 1u32), (1000, 256, 2), (4099, 32, 7), (70_000, 1024, 3)] {
        let xs: Vec<f32> = (0..n).map(|_| r.random_range(-100.0..100.0)).collect();
        let x = dev.upload(&xs).unwrap();
        let mut y = dev.upload(&vec![f32::NAN; n]).unwrap();
        let args = Args::new().arg(&x).arg(&mut y).arg(n as u32);
        // SAFETY: the kernel reads x[0..n) and writes y[0..n).
        unsafe { dev.stream().launch(&k, LaunchConfig::new(grid, block), args).unwrap() };
        let want: Vec<f32> = xs.iter().map(|v| 2.0 * v + 1.0).collect();
        assert_eq!(y.to_vec().unwrap(), want, "n = {n}, block = {block}, grid = {grid}");
    }
}

/// The same kernels compiled with wgpu's runtime checks (a child process
/// with `KILN_WGPU_CHECKED=1`) give the same results.
#[test]
fn kernels_also_run_with_runtime_checks() {
    let Some(_dev) = device() else { return };
    if std::env::var_os(kiln_wgpu::CHECKED_ENV).is_some() {
        return;
    }
    let tests = ["kernels::kernels_run_at_several_block_shapes", "kernels::views_at_unaligned_offsets"];
    let (passed, log) = child(&tests, |c| {
        c.env(kiln_wgpu::CHECKED_ENV, "1");
    });
    assert!(passed && log.contains("2 passed"), "{log}");
}

/// Views at element offsets that are not multiples of the storage offset
/// alignment are staged; the writable one is copied back exactly, leaving
/// its neighbours untouched.
#[test]
fn views_at_unaligned_offsets() {
    let Some(dev) = device() else { return };
    let k = dev.kernel(&affine()).unwrap();
    let mut r = rng(11);
    let xs: Vec<f32> = (0..300).map(|_| r.random_range(-1.0..1.0)).collect();
    let x = dev.upload(&xs).unwrap();
    for (xo, yo, n) in [(1usize, 3usize, 100usize), (5, 0, 17), (0, 7, 1), (64, 65, 200), (3, 3, 0)] {
        let mut y = dev.upload(&vec![-9.0f32; 300]).unwrap();
        {
            let xv = x.slice(xo..xo + n).unwrap();
            let yv = y.slice_mut(yo..yo + n).unwrap();
            let args = Args::new().arg(xv).arg(yv).arg(n as u32);
            // SAFETY: the kernel reads n elements of xv and writes n of yv.
            unsafe { dev.stream().launch(&k, LaunchConfig::new(1, 64), args).unwrap() };
        }
        let mut want = vec![-9.0f32; 300];
        for i in 0..n {
            want[yo + i] = 2.0 * xs[xo + i] + 1.0;
        }
        assert_eq!(y.to_vec().unwrap(), want, "x at {xo}, y at {yo}, n = {n}");
    }
}

#[test]
fn launch_limits_are_refused_with_the_limit_named() {
    let Some(dev) = device() else { return };
    let k = dev.kernel(&affine()).unwrap();
    let limits = dev.info().limits.clone();
    let x = dev.upload(&[1.0f32; 4]).unwrap();
    let mut y = dev.alloc::<f32>(4).unwrap();
    let too_wide = LaunchConfig::new(1, limits.max_threads_per_block + 1);
    // SAFETY: refused before it runs.
    let e = unsafe { dev.stream().launch(&k, too_wide, Args::new().arg(&x).arg(&mut y).arg(4u32)) }.unwrap_err();
    assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
    assert!(e.to_string().contains(&limits.max_threads_per_block.to_string()), "{e}");
    let too_long = LaunchConfig::new(limits.max_grid[0] + 1, 64);
    // SAFETY: refused before it runs.
    let e = unsafe { dev.stream().launch(&k, too_long, Args::new().arg(&x).arg(&mut y).arg(4u32)) }.unwrap_err();
    assert!(e.to_string().contains(&format!("this device allows {}", limits.max_grid[0])), "{e}");
    let shared = LaunchConfig::new(1, 64).with_shared_mem(1024);
    // SAFETY: refused before it runs.
    let e = unsafe { dev.stream().launch(&k, shared, Args::new().arg(&x).arg(&mut y).arg(4u32)) }.unwrap_err();
    assert!(matches!(e, Error::Unsupported { backend: BackendKind::Wgpu, .. }), "{e}");
    assert!(e.to_string().contains("dynamic shared memory"), "{e}");
    // Nothing ran: y is as it was before (and the device still works).
    y.fill(5.0).unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![5.0; 4]);
}

#[test]
fn arguments_that_disagree_with_the_kernel_are_refused() {
    let Some(dev) = device() else { return };
    let k = dev.kernel(&affine()).unwrap();
    let x = dev.upload(&[1.0f32; 4]).unwrap();
    let mut y = dev.alloc::<f32>(4).unwrap();
    let launch = |args: Args<'_, Wgpu>| {
        // SAFETY: every launch here is refused before it runs.
        unsafe { dev.stream().launch(&k, LaunchConfig::new(1, 64), args) }.unwrap_err().to_string()
    };
    let e = launch(Args::new().arg(&x).arg(&y).arg(4u32));
    assert!(e.contains("buffer argument 1") && e.contains("read_write"), "{e}");
    let e = launch(Args::new().arg(&x).arg(4u32));
    assert!(e.contains("@binding(1)") && e.contains("1 buffer argument"), "{e}");
    let e = launch(Args::new().arg(&x).arg(&mut y).arg(4.0f32));
    assert!(e.contains("scalar argument 0 is f32") && e.contains("`n` is u32"), "{e}");
    let e = launch(Args::new().arg(&x).arg(&mut y));
    assert!(e.contains("1 member(s) (n)") && e.contains("0 scalar"), "{e}");
    let e = launch(Args::new().arg(&x).arg(&mut y).arg(4u64));
    assert!(e.contains("u64"), "{e}");
    // A fixed @workgroup_size must match the block.
    let fixed = AFFINE.replace("@workgroup_size(block_x, block_y, block_z)", "@workgroup_size(64)");
    let kf = dev.kernel(&Program::new("affine").wgsl(fixed)).unwrap();
    // SAFETY: refused before it runs.
    let e = unsafe { dev.stream().launch(&kf, LaunchConfig::new(1, 128), Args::new().arg(&x).arg(&mut y).arg(4u32)) }
        .unwrap_err();
    assert!(e.to_string().contains("@workgroup_size is 64 along x"), "{e}");
}

/// A view smaller than one element of the array the kernel declares is
/// refused before anything is recorded, so the work batched around it
/// still runs.
#[test]
fn a_view_smaller_than_the_declared_element_is_refused() {
    let Some(dev) = device() else { return };
    let src = "@group(0) @binding(0) var<storage, read_write> quads: array<vec4<f32>>;\n\
               @compute @workgroup_size(1)\nfn quad() { quads[0] = vec4<f32>(1.0, 2.0, 3.0, 4.0); }\n";
    let k = dev.kernel(&Program::new("quad").wgsl(src)).unwrap();
    let mut before = dev.upload(&[0u32; 4]).unwrap();
    before.fill(11).unwrap();
    let mut small = dev.upload(&[0.0f32; 2]).unwrap();
    // SAFETY: refused before it runs.
    let e = unsafe { dev.stream().launch(&k, LaunchConfig::new(1, 1), Args::new().arg(&mut small)) }.unwrap_err();
    assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
    assert!(e.to_string().contains("`quads` needs at least 16"), "{e}");
    assert_eq!(before.to_vec().unwrap(), vec![11; 4], "the fill batched before the refused launch ran");
    // An empty view binds scratch memory large enough for the declaration.
    let mut empty = dev.alloc::<f32>(0).unwrap();
    // SAFETY: the kernel writes scratch memory standing in for the empty view.
    unsafe { dev.stream().launch(&k, LaunchConfig::new(1, 1), Args::new().arg(&mut empty)).unwrap() };
    dev.synchronize().unwrap();
}

/// Bindings outside the ABI (another group, a uniform that is not at
/// group 1 binding 0) are refused when the kernel is compiled.
#[test]
fn bindings_outside_the_abi_are_compile_errors() {
    let Some(dev) = device() else { return };
    let src = "@group(2) @binding(0) var<storage, read_write> out: array<u32>;\n\
               @compute @workgroup_size(1)\nfn stray() { out[0] = 1u; }\n";
    let e = dev.kernel(&Program::new("stray").wgsl(src)).unwrap_err();
    assert!(matches!(&e, Error::Compile { log, .. } if log.contains("@group(2) @binding(0)")), "{e}");
}

/// Workgroup memory past the adapter's limit (which wgpu does not check)
/// is refused before the launch, naming the limit.
#[test]
fn workgroup_memory_past_the_limit_is_refused() {
    let Some(dev) = device() else { return };
    let limit = dev.info().limits.max_shared_mem_per_block;
    let words = limit / 4 + 1024;
    let src = format!(
        "var<workgroup> big: array<u32, {words}>;\n\
         @group(0) @binding(0) var<storage, read_write> out: array<u32>;\n\
         @compute @workgroup_size(1)\nfn hog(@builtin(local_invocation_index) i: u32) {{\n\
         big[i] = 1u; workgroupBarrier(); out[0] = big[{words} - 1u];\n}}\n"
    );
    let k = dev.kernel(&Program::new("hog").wgsl(src)).unwrap();
    let mut out = dev.upload(&[7u32]).unwrap();
    // SAFETY: refused before it runs.
    let e = unsafe { dev.stream().launch(&k, LaunchConfig::new(1, 1), Args::new().arg(&mut out)) }.unwrap_err();
    assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
    assert!(
        e.to_string().contains(&format!("{} bytes", words * 4)) && e.to_string().contains(&limit.to_string()),
        "{e}"
    );
    assert_eq!(out.to_vec().unwrap(), vec![7]);
}

/// An error wgpu raises while creating the pipeline (here an override
/// without a value, which kiln never sets) is returned, never a panic of
/// wgpu's default error handler, and the device keeps working.
#[test]
fn pipeline_errors_are_returned() {
    let Some(dev) = device() else { return };
    let src = "override scale: f32;\n\
               @group(0) @binding(0) var<storage, read_write> out: array<f32>;\n\
               @compute @workgroup_size(1)\nfn needs_scale() { out[0] = scale; }\n";
    let k = dev.kernel(&Program::new("needs_scale").wgsl(src)).unwrap();
    let mut out = dev.upload(&[7.0f32]).unwrap();
    // SAFETY: the kernel writes out[0] only, if it runs at all.
    let e = unsafe { dev.stream().launch(&k, LaunchConfig::new(1, 1), Args::new().arg(&mut out)) }.unwrap_err();
    assert!(matches!(e, Error::InvalidLaunch { .. }), "{e}");
    assert!(e.to_string().contains("scale"), "{e}");
    dev.synchronize().unwrap();
    assert_eq!(out.to_vec().unwrap(), vec![7.0]);
}

/// A binding larger than the adapter's storage binding limit is refused,
/// naming the limit.
#[test]
fn a_binding_past_the_limit_is_unsupported() {
    let Some(dev) = device() else { return };
    let limits = &dev.info().limits;
    let max = limits.max_binding_bytes;
    if max >= limits.max_buffer_bytes || max > 1 << 30 {
        eprintln!("skipped: binding limit {max} B is not below the buffer limit, or too large to allocate here");
        return;
    }
    let k = dev.kernel(&affine()).unwrap();
    let n = (max / 4 + 1) as usize;
    let mut x = dev.alloc::<f32>(n).unwrap();
    x.slice_mut(..4).unwrap().fill(3.0).unwrap();
    let mut y = dev.alloc::<f32>(4).unwrap();
    // SAFETY: refused before it runs.
    let e = unsafe { dev.stream().launch(&k, LaunchConfig::new(1, 64), Args::new().arg(&x).arg(&mut y).arg(4u32)) }
        .unwrap_err();
    assert!(matches!(e, Error::Unsupported { backend: BackendKind::Wgpu, .. }), "{e}");
    assert!(
        e.to_string().contains("max_storage_buffer_binding_size") && e.to_string().contains(&max.to_string()),
        "{e}"
    );
    // A view of the same buffer within the limit runs.
    let xs = x.slice(..4).unwrap();
    // SAFETY: the kernel reads 4 elements of xs and writes 4 of y.
    unsafe { dev.stream().launch(&k, LaunchConfig::new(1, 64), Args::new().arg(xs).arg(&mut y).arg(4u32)).unwrap() };
    assert_eq!(y.to_vec().unwrap(), vec![7.0; 4]);
}

/// User kernels named with WGSL keywords, predeclared functions and types,
/// and the generators' own identifiers compile and run: generated WGSL
/// declares them under `user_{name}` and names arguments by position.
#[test]
fn user_kernels_with_keyword_names_run() {
    use kiln_kernels::expr::var;
    use kiln_kernels::scan::ScanKind;
    use kiln_kernels::user::{Elementwise, Reduction, Scan};
    let Some(dev) = device() else { return };
    let s = dev.stream();
    let names = [
        "return", "fn", "let", "var", "struct", "loop", "f32", "select", "bitcast", "override", "const", "_", "__x",
        "a0", "Params", "params", "kx_zero", "block_x",
    ];
    let x = s.upload(&[1.0f32, -2.0, 3.5, 0.25, 8.0]).unwrap();
    for name in names {
        let k = Elementwise::new(name)
            .input("fn", kiln_core::DType::F32)
            .output("return", kiln_core::DType::F32)
            .set("return", var("fn") * 2.0 + 1.0)
            .build()
            .unwrap();
        let mut y = s.upload(&[7.0f32; 5]).unwrap();
        k.launch(&s, Args::new().arg(&x).arg(&mut y)).unwrap_or_else(|e| panic!("`{name}`: {e}"));
        assert_eq!(y.to_vec().unwrap(), [3.0, -3.0, 8.0, 1.5, 17.0], "`{name}`");
    }
    for name in ["fn", "Params", "_", "kx_map", "select"] {
        let sum = Reduction::new(name, kiln_core::DType::F32)
            .input("x", kiln_core::DType::F32)
            .map(var("x"))
            .reduce(var("a") + var("b"))
            .identity(0)
            .build()
            .unwrap();
        assert_eq!(sum.reduce::<_, f32>(&s, Args::new().arg(&x)).unwrap(), 10.75, "`{name}`");
        let mut cols = s.upload(&[0.0f32; 5]).unwrap();
        sum.reduce_axis(&s, Args::new().arg(&x), 1, 5, 0, &mut cols).unwrap();
        assert_eq!(cols.to_vec().unwrap(), [1.0, -2.0, 3.5, 0.25, 8.0], "`{name}` along axis 0");
        let scan = Scan::new(name, kiln_core::DType::F32)
            .input("x", kiln_core::DType::F32)
            .scan(var("a") + var("b"))
            .identity(0)
            .build()
            .unwrap();
        let mut y = s.upload(&[7.0f32; 5]).unwrap();
        scan.scan(&s, ScanKind::Exclusive, Args::new().arg(&x), &mut y).unwrap();
        assert_eq!(y.to_vec().unwrap(), [0.0, 1.0, -1.0, 2.5, 2.75], "`{name}`");
    }
}

/// An identity neutral at the build's samples but not at the values folded
/// (0 for the max of negative numbers) is left out of every fold, as on
/// the CPU, though every workgroup lane starts from it.
#[test]
fn user_folds_leave_out_an_identity_that_is_not_neutral() {
    use kiln_kernels::expr::var;
    use kiln_kernels::scan::ScanKind;
    use kiln_kernels::user::{Reduction, Scan};
    let Some(dev) = device() else { return };
    let s = dev.stream();
    let i32t = kiln_core::DType::I32;
    let k = Reduction::new("max0", i32t).input("x", i32t).map(var("x")).reduce(var("a").max(var("b"))).identity(0);
    let k = k.build().unwrap();
    let xs: Vec<i32> = (0..3 * 2048).map(|i| -3 - (i % 17)).collect();
    let x = s.upload(&xs).unwrap();
    assert_eq!(k.reduce::<_, i32>(&s, Args::new().arg(&x)).unwrap(), -3);
    let mut rows = s.upload(&[7; 3]).unwrap();
    k.reduce_axis(&s, Args::new().arg(&x), 3, 2048, 1, &mut rows).unwrap();
    assert_eq!(rows.to_vec().unwrap(), [-3; 3]);
    let mut cols = s.upload(&[7; 2048]).unwrap();
    k.reduce_axis(&s, Args::new().arg(&x), 3, 2048, 0, &mut cols).unwrap();
    let want: Vec<i32> = (0..2048).map(|c| (0..3).map(|r| xs[r * 2048 + c]).max().unwrap_or(0)).collect();
    assert_eq!(cols.to_vec().unwrap(), want);
    let scan = Scan::new("max0", i32t).input("x", i32t).scan(var("a").max(var("b"))).identity(0).build().unwrap();
    let mut y = s.upload(&vec![7; xs.len()]).unwrap();
    scan.scan(&s, ScanKind::Inclusive, Args::new().arg(&x), &mut y).unwrap();
    assert_eq!(y.to_vec().unwrap(), vec![-3; xs.len()]);
}
