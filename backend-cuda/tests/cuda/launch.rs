//! Launches: results, argument checks against the kernel, shape limits.

use kiln_core::{Args, Buffer, Device, Error, Kernel, LaunchConfig, Program};
use kiln_cuda::Cuda;

use super::common::*;

#[test]
fn saxpy_matches_the_reference() {
    let Some(dev) = gpu() else { return };
    let k = kernel(&dev, "saxpy", SAXPY);
    for (i, &n) in SIZES.iter().enumerate() {
        let seed = 300 + i as u64;
        let (xs, ys) = (random_f32(seed, n), random_f32(seed + 1000, n));
        let x = dev.upload(&xs).unwrap();
        let mut y = dev.upload(&ys).unwrap();
        saxpy(&dev, &k, &x, &mut y, -1.5).unwrap();
        // NVRTC contracts a * x + y into one fused multiply-add, rounded once.
        let want: Vec<f32> = xs.iter().zip(&ys).map(|(x, y)| (-1.5f32).mul_add(*x, *y)).collect();
        assert_eq!(y.to_vec().unwrap(), want, "n={n} seed={seed}");
    }
}

/// The GPU, SAXPY compiled on it, and its `x` and `y`.
type Saxpy = (Device<Cuda>, Kernel<Cuda>, Buffer<Cuda, f32>, Buffer<Cuda, f32>);

/// The GPU, SAXPY compiled on it, and its `x` (ones) and `y` (twos) of 8
/// elements; `None` without a GPU.
fn saxpy_of_eight() -> Option<Saxpy> {
    let dev = gpu()?;
    let k = kernel(&dev, "saxpy", SAXPY);
    let (x, y) = (dev.upload(&[1.0f32; 8]).unwrap(), dev.upload(&[2.0f32; 8]).unwrap());
    Some((dev, k, x, y))
}

#[test]
fn arguments_are_checked_against_the_kernel_parameters() {
    let Some((dev, k, x, mut y)) = saxpy_of_eight() else { return };
    let cfg = LaunchConfig::for_elements(8, 32);
    let reason = |r: kiln_core::Result<()>| match r {
        Err(Error::InvalidLaunch { kernel, reason }) => {
            assert_eq!(kernel, "saxpy");
            reason
        }
        other => panic!("expected InvalidLaunch, got {other:?}"),
    };
    // Too few: the length is missing.
    // SAFETY (all launches here): rejected before reaching the device.
    let r = reason(unsafe { dev.stream().launch(&k, cfg, Args::new().arg(&x).arg(&mut y).arg(2.0f32)) });
    assert!(r.contains("takes 4 parameter") && r.contains("3 argument"), "{r}");
    // Too many.
    let r = reason(unsafe {
        dev.stream().launch(&k, cfg, Args::new().arg(&x).arg(&mut y).arg(2.0f32).arg(8u64).arg(1u32))
    });
    assert!(r.contains("5 argument"), "{r}");
    // A u32 length where the kernel takes unsigned long long.
    let r = reason(unsafe { dev.stream().launch(&k, cfg, Args::new().arg(&x).arg(&mut y).arg(2.0f32).arg(8u32)) });
    assert!(r.contains("argument 3") && r.contains("u32") && r.contains("8 bytes"), "{r}");
    // A double where the kernel takes float.
    let r = reason(unsafe { dev.stream().launch(&k, cfg, Args::new().arg(&x).arg(&mut y).arg(2.0f64).arg(8u64)) });
    assert!(r.contains("argument 2") && r.contains("f64"), "{r}");
    // A scalar where the kernel takes a pointer.
    let r = reason(unsafe { dev.stream().launch(&k, cfg, Args::new().arg(1.0f32).arg(&mut y).arg(2.0f32).arg(8u64)) });
    assert!(r.contains("argument 0"), "{r}");
    // Nothing ran: y is untouched.
    assert_eq!(y.to_vec().unwrap(), vec![2.0; 8]);
}

#[test]
fn launch_limits_are_named() {
    let Some((dev, k, x, mut y)) = saxpy_of_eight() else { return };
    let mut go = |cfg: LaunchConfig| {
        // SAFETY: rejected before reaching the device, or a valid SAXPY over 8 elements.
        unsafe { dev.stream().launch(&k, cfg, Args::new().arg(&x).arg(&mut y).arg(1.0f32).arg(8u64)) }
    };
    let e = go(LaunchConfig::new(1, 1025)).unwrap_err().to_string();
    assert!(e.contains("1025 threads") && e.contains("1024"), "{e}");
    let e = go(LaunchConfig::new((1, 65536), 32)).unwrap_err().to_string();
    assert!(e.contains("65536 blocks along y") && e.contains("65535"), "{e}");
    let limit = dev.info().limits.max_shared_mem_per_block;
    let e = go(LaunchConfig::new(1, 32).with_shared_mem(limit + 1)).unwrap_err().to_string();
    assert!(e.contains(&format!("{}", limit + 1)) && e.contains(&limit.to_string()), "{e}");
    assert!(go(LaunchConfig::new(0, 32)).is_ok(), "an empty launch is a no-op");
    assert_eq!(y.to_vec().unwrap(), vec![2.0; 8]);

    // The kernel's own limit (__launch_bounds__) is tighter than the device's.
    let bounded = kernel(
        &dev,
        "bounded",
        "extern \"C\" __global__ void __launch_bounds__(128) bounded(float* y) { y[threadIdx.x] = 1.0f; }",
    );
    let mut z = dev.alloc::<f32>(256).unwrap();
    // SAFETY: rejected before reaching the device.
    let e = unsafe { dev.stream().launch(&bounded, LaunchConfig::new(1, 256), Args::new().arg(&mut z)) };
    let e = e.unwrap_err().to_string();
    assert!(e.contains("at most 128"), "{e}");
}

#[test]
fn dynamic_shared_memory_past_48_kib_is_granted() {
    let Some(dev) = gpu() else { return };
    let src = r#"
extern "C" __global__ void reverse_block(const float* x, float* y, unsigned int n) {
    extern __shared__ float tile[];
    for (unsigned int i = threadIdx.x; i < n; i += blockDim.x) tile[i] = x[i];
    __syncthreads();
    for (unsigned int i = threadIdx.x; i < n; i += blockDim.x) y[i] = tile[n - 1 - i];
}
"#;
    let k = kernel(&dev, "reverse_block", src);
    let n = 25_000usize; // 100 000 bytes of shared memory
    let xs = random_f32(5, n);
    let x = dev.upload(&xs).unwrap();
    let mut y = dev.alloc::<f32>(n).unwrap();
    y.fill(POISON_F32).unwrap();
    let cfg = LaunchConfig::new(1, 256).with_shared_mem((n * 4) as u32);
    // SAFETY: one block reads x[0..n), writes y[0..n), within n*4 bytes of shared memory.
    unsafe { dev.stream().launch(&k, cfg, Args::new().arg(&x).arg(&mut y).arg(n as u32)) }.unwrap();
    let want: Vec<f32> = xs.iter().rev().copied().collect();
    assert_eq!(y.to_vec().unwrap(), want);
}

#[test]
fn many_arguments_take_the_heap_path() {
    let Some(dev) = gpu() else { return };
    let params: Vec<String> = (0..40).map(|i| format!("unsigned int a{i}")).collect();
    let sum: Vec<String> = (0..40).map(|i| format!("a{i}")).collect();
    let src = format!(
        "extern \"C\" __global__ void sum40(unsigned int* out, {}) {{ out[0] = {}; }}",
        params.join(", "),
        sum.join(" + ")
    );
    let k = dev.kernel(&Program::new("sum40").cuda(src)).unwrap();
    let mut out = dev.alloc::<u32>(1).unwrap();
    out.fill(0xFFFF_FFFF).unwrap();
    let values: Vec<u32> = (0..40).map(|i| i * i + 7).collect();
    let mut args = Args::new().arg(&mut out);
    for v in &values {
        args.push(*v);
    }
    // SAFETY: sum40 writes out[0] only.
    unsafe { dev.stream().launch(&k, LaunchConfig::new(1, 1), args) }.unwrap();
    assert_eq!(out.to_vec().unwrap(), vec![values.iter().sum::<u32>()]);
}

/// Parameter sizes for a kernel without parameters, one with mixed scalar and
/// struct parameters, and one with 41. Drivers before 13.2 have no call that
/// counts them; kiln then counts what the module image declares (never asking
/// the driver for an index past the end, which it would log as an API error).
#[test]
fn parameter_sizes_match_the_signatures() {
    let Some(dev) = gpu() else { return };
    let none = kernel(&dev, "no_params", "extern \"C\" __global__ void no_params() {}");
    assert_eq!(none.raw().param_sizes(), Some(&[][..]));
    let mixed = kernel(
        &dev,
        "mixed",
        "struct Three { float a[3]; };\n\
         extern \"C\" __global__ void mixed(char c, double d, Three s, short h, int* p) {\n\
             p[0] = c + (int)d + (int)s.a[2] + h;\n\
         }",
    );
    assert_eq!(mixed.raw().param_sizes(), Some(&[1, 8, 12, 2, 8][..]));
    let params: Vec<String> = (0..40).map(|i| format!("unsigned int a{i}")).collect();
    let wide = kernel(
        &dev,
        "wide",
        &format!("extern \"C\" __global__ void wide(unsigned int* out, {}) {{ out[0] = a39; }}", params.join(", ")),
    );
    let mut want = vec![8];
    want.extend([4; 40]);
    assert_eq!(wide.raw().param_sizes(), Some(&want[..]));
}

/// Threads launching one kernel at once, each with its own dynamic shared
/// memory past 48 KiB, race to raise the kernel's limit: the driver must end
/// at the largest, or later launches of that size would skip the raise and fail.
#[test]
fn threads_raising_one_kernels_shared_memory_leave_the_largest() {
    use cudarc::driver::sys::CUfunction_attribute as F;
    let Some(dev) = gpu() else { return };
    let limit = dev.info().limits.max_shared_mem_per_block;
    let base = 64 << 10;
    if limit <= base {
        eprintln!("skipped: {limit} bytes of shared memory per block");
        return;
    }
    let sizes: Vec<u32> = (0..8).map(|i| base + i * ((limit - base) / 8 / 16 * 16)).collect();
    let largest = *sizes.iter().max().unwrap();
    let source = "extern \"C\" __global__ void grow() { extern __shared__ float s[]; s[threadIdx.x] = threadIdx.x; }";
    let nonce = format!("{}-{:?}", std::process::id(), std::time::Instant::now());
    for round in 0..40 {
        // A new kernel each round, at the default 48 KiB.
        let k = dev.kernel(&Program::new("grow").cuda(format!("// {nonce} round {round}\n{source}"))).unwrap();
        let barrier = std::sync::Barrier::new(sizes.len());
        std::thread::scope(|s| {
            for &bytes in &sizes {
                let (dev, k, barrier) = (&dev, &k, &barrier);
                s.spawn(move || {
                    barrier.wait();
                    let cfg = LaunchConfig::new(1, 32).with_shared_mem(bytes);
                    // SAFETY: `grow` writes its own shared memory only.
                    unsafe { dev.stream().launch(k, cfg, Args::new()) }.unwrap();
                });
            }
        });
        let attribute = k.raw().driver_function().get_attribute(F::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
        assert_eq!(attribute.unwrap() as u32, largest, "round {round}: the driver's limit is not the largest asked");
        let cfg = LaunchConfig::new(1, 32).with_shared_mem(largest);
        // SAFETY: as above.
        unsafe { dev.stream().launch(&k, cfg, Args::new()) }.unwrap();
    }
    dev.synchronize().unwrap();
}
