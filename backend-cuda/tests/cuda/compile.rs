//! NVRTC: targets, options, and what a failed compile says.

use kiln_core::{Args, BackendKind, Error, LaunchConfig, Program, RawDevice};

use super::common::*;

#[test]
fn compiles_a_cubin_for_the_device_architecture() {
    let Some(dev) = gpu() else { return };
    let (major, minor) = dev.info().compute_capability.unwrap();
    let k = kernel(&dev, "saxpy", SAXPY);
    assert_eq!(k.raw().target(), format!("sm_{major}{minor}"));
    assert_eq!(k.raw().param_sizes(), Some(&[8, 8, 4, 8][..]));
    assert!(k.raw().registers() > 0 && k.raw().max_threads_per_block() >= 256);
    println!("NVRTC {:?}, target {}", dev.raw().nvrtc_version(), k.raw().target());
    // The typed layer's in-memory cache hands back the same kernel.
    let again = kernel(&dev, "saxpy", SAXPY);
    assert!(std::ptr::eq(k.raw(), again.raw()));
}

#[test]
fn a_compile_error_carries_the_log_the_options_and_the_kernel() {
    let Some(dev) = gpu() else { return };
    let program = Program::new("broken_kernel")
        .cuda("extern \"C\" __global__ void broken_kernel(float* x) { x[0] = undeclared_name + FOO; }")
        .define("FOO", 3)
        .flag("-lineinfo");
    match dev.kernel(&program) {
        Err(Error::Compile { backend, kernel, options, log }) => {
            assert_eq!(backend, BackendKind::Cuda);
            assert_eq!(kernel, "broken_kernel");
            assert!(options.iter().any(|o| o == "-DFOO=3"), "{options:?}");
            assert!(options.iter().any(|o| o == "-lineinfo"), "{options:?}");
            assert!(options.iter().any(|o| o.starts_with("--gpu-architecture=sm_")), "{options:?}");
            assert!(log.contains("undeclared_name"), "{log}");
            let shown = dev.kernel(&program).unwrap_err().to_string();
            assert!(shown.contains("broken_kernel") && shown.contains("-DFOO=3") && shown.contains("undeclared_name"));
        }
        other => panic!("a broken source gave {other:?}"),
    }
    // The device is unharmed.
    assert!(dev.kernel(&Program::new("saxpy").cuda(SAXPY)).is_ok());
}

#[test]
fn a_missing_or_mangled_entry_point_is_named() {
    let Some(dev) = gpu() else { return };
    let program = Program::new("wanted").cuda("__global__ void wanted(float* x) { x[0] = 1.0f; }");
    match dev.kernel(&program) {
        Err(Error::Compile { kernel, log, .. }) => {
            assert_eq!(kernel, "wanted");
            assert!(log.contains("extern \"C\""), "{log}");
        }
        other => panic!("a mangled entry point gave {other:?}"),
    }
    let no_cuda = Program::new("cpu_only");
    assert!(matches!(dev.kernel(&no_cuda), Err(Error::Unsupported { .. })));
    let bad_name = Program::new("not a name").cuda("extern \"C\" __global__ void k() {}");
    assert!(matches!(dev.raw().compile(&bad_name), Err(Error::InvalidArgument { .. })));
}

#[test]
fn defines_and_include_paths_reach_nvrtc() {
    let Some(dev) = gpu() else { return };
    let dir = std::env::temp_dir().join(format!("kiln-include-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("scale.h"), "#define SCALE 3.0f\n").unwrap();
    let src = r#"
#include "scale.h"
#include <cuda_fp16.h>
extern "C" __global__ void affine(const float* x, float* y, unsigned long long n) {
    unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = __half2float(__float2half(x[i] * SCALE + OFFSET));
}
"#;
    let program = Program::new("affine").cuda(src).define("OFFSET", "5.0f").include_path(&dir);
    let k = dev.kernel(&program).unwrap_or_else(|e| panic!("{e}"));
    let n = 1000;
    let xs: Vec<f32> = (0..n).map(|i| (i % 64) as f32 * 0.25).collect();
    let x = dev.upload(&xs).unwrap();
    let mut y = dev.alloc::<f32>(n).unwrap();
    y.fill(POISON_F32).unwrap();
    let args = Args::new().arg(&x).arg(&mut y).arg(n as u64);
    // SAFETY: affine reads x[0..n) and writes y[0..n).
    unsafe { dev.stream().launch(&k, LaunchConfig::for_elements(n, 128), args) }.unwrap();
    let want: Vec<f32> = xs.iter().map(|v| v * 3.0 + 5.0).collect();
    assert_eq!(y.to_vec().unwrap(), want, "values are exact in f16 by construction");
    let _ = std::fs::remove_dir_all(&dir);
}
