//! The run-time tier on every device that opens here (the CPU always,
//! lavapipe or a GPU where present): results against plain-Rust references
//! on seeded random inputs, outputs poisoned first; buffers of two devices
//! mixed are an error naming both; run-time and typed values convert both ways.

use kiln::kernels::elementwise::{BinaryOp, binary};
use kiln::kernels::matmul::{MatmulShape, matmul};
use kiln::kernels::reduce::{ReduceOp, reduce};
use kiln::kernels::scan::{ScanKind, scan};
use kiln::kernels::sort::{SortOrder, sort, sort_pairs};
use kiln::{Args, BackendKind, Device, Error, HostArgs, LaunchConfig, Program};
use rand::Rng;

mod common;
use common::{devices, on_each_device};

/// Device 0 of every backend compiled in that opens here.
/// `y[i] = 3 * x[i] + 1` for `i < n`: CUDA C, WGSL and a Rust fn, with the
/// length passed as the kernel ABI says (u32 to WGSL, u64 elsewhere).
fn affine() -> Program {
    const CUDA: &str = r#"
extern "C" __global__ void affine(const int* x, int* y, unsigned long long n) {
    unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 3 * x[i] + 1;
}"#;
    const WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> x: array<i32>;
@group(0) @binding(1) var<storage, read_write> y: array<i32>;
struct Params { n: u32 }
@group(1) @binding(0) var<uniform> params: Params;
override block_x: u32 = 64;
override block_y: u32 = 1;
override block_z: u32 = 1;
@compute @workgroup_size(block_x, block_y, block_z)
fn affine(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * block_x;
    for (var i = gid.x; i < params.n; i += stride) { y[i] = 3 * x[i] + 1; }
}"#;
    fn host(args: &mut HostArgs<'_>) -> kiln::Result<()> {
        let x = args.input::<i32>(0)?;
        for (y, x) in args.output::<i32>(1)?.iter_mut().zip(x) {
            *y = x.wrapping_mul(3).wrapping_add(1);
        }
        Ok(())
    }
    Program::new("affine").cuda(CUDA).wgsl(WGSL).host(host)
}

/// Upload, a custom program, reduce, scan, sort and matmul, with no visitor
/// and no generic parameter, each against the host.
#[test]
fn a_program_runs_on_whichever_device_it_finds() {
    on_each_device(7, |dev, s, rng| {
        for n in [1usize, 33, 1025, 100_003] {
            let x: Vec<i32> = (0..n).map(|_| rng.random_range(-1000..1000)).collect();
            let dx = s.upload(&x).unwrap();

            let mut y = s.upload(&vec![i32::MIN; n]).unwrap();
            let kernel = dev.kernel(&affine()).unwrap();
            let args = Args::new().arg(&dx).arg(&mut y).length(dev.info().features.index_width, n, "affine").unwrap();
            // SAFETY: `affine` reads x[0..n) and writes y[0..n), both n long.
            unsafe { s.launch(&kernel, LaunchConfig::for_elements(n, 128), args).unwrap() };
            let want: Vec<i32> = x.iter().map(|v| 3 * v + 1).collect();
            assert_eq!(y.to_vec().unwrap(), want, "affine, n = {n}, on {dev}");

            let sum = reduce(s, ReduceOp::Sum, &dx).unwrap();
            assert_eq!(sum, x.iter().fold(0i32, |a, b| a.wrapping_add(*b)), "sum, n = {n}, on {dev}");

            let mut prefix = s.upload(&vec![i32::MAX; n]).unwrap();
            scan(s, ScanKind::Exclusive, &dx, &mut prefix).unwrap();
            let want: Vec<i32> = x.iter().scan(0i32, |acc, v| Some(std::mem::replace(acc, *acc + v))).collect();
            assert_eq!(prefix.to_vec().unwrap(), want, "exclusive scan, n = {n}, on {dev}");

            let mut keys = s.upload(&x).unwrap();
            let mut order = s.upload(&(0..n as u32).collect::<Vec<_>>()).unwrap();
            sort_pairs(s, &mut keys, &mut order, SortOrder::Descending).unwrap();
            let mut want: Vec<(i32, u32)> = x.iter().copied().zip(0..).collect();
            want.sort_by_key(|p| std::cmp::Reverse(p.0)); // stable: equal keys keep their order
            let (wk, wv): (Vec<i32>, Vec<u32>) = want.into_iter().unzip();
            assert_eq!((keys.to_vec().unwrap(), order.to_vec().unwrap()), (wk, wv), "sort_pairs, n = {n}, on {dev}");
        }

        let (m, k, n) = (37, 19, 23);
        let a: Vec<f32> = (0..m * k).map(|_| rng.random_range(-2.0..2.0)).collect();
        let b: Vec<f32> = (0..k * n).map(|_| rng.random_range(-2.0..2.0)).collect();
        let mut c = s.upload(&vec![f32::NAN; m * n]).unwrap();
        matmul(s, &s.upload(&a).unwrap(), &s.upload(&b).unwrap(), &mut c, MatmulShape::new(m, n, k)).unwrap();
        let got = c.to_vec().unwrap();
        for (i, g) in got.iter().enumerate() {
            let (r, col) = (i / n, i % n);
            let want: f64 = (0..k).map(|j| a[r * k + j] as f64 * b[j * n + col] as f64).sum();
            assert!((*g as f64 - want).abs() <= 1e-4 * (1.0 + want.abs()), "c[{r}][{col}] = {g}, want {want} on {dev}");
        }

        let mut f = s.upload(&[f32::NAN; 5]).unwrap();
        sort(s, &mut f, SortOrder::Ascending).unwrap();
        assert!(f.to_vec().unwrap().iter().all(|v| v.is_nan()), "NaN keys stay NaN on {dev}");
    });
}

/// A struct holds a buffer on whatever device was found, without a generic.
#[test]
fn a_buffer_on_any_device_fits_in_a_plain_struct() {
    struct Model {
        weights: kiln::Buffer<f32>,
        stream: kiln::Stream,
    }
    impl Model {
        fn scaled_sum(&self, x: &[f32]) -> kiln::Result<f32> {
            let x = self.stream.upload(x)?;
            let mut y = self.stream.alloc::<f32>(x.len())?;
            binary(&self.stream, BinaryOp::Mul, &self.weights, &x, &mut y)?;
            reduce(&self.stream, ReduceOp::Sum, &y)
        }
    }
    for dev in devices() {
        let stream = dev.stream();
        let model = Model { weights: stream.upload(&[0.5f32, 2.0, -1.0]).unwrap(), stream };
        assert_eq!(model.scaled_sum(&[4.0, 1.0, 3.0]).unwrap(), 1.0, "on {dev}");
        assert!(model.weights.device().same(&dev));
    }
}

/// Buffers of another backend, or of another device of the same backend,
/// are an error naming both, and nothing is written.
#[test]
fn mixing_devices_is_an_error_naming_both() {
    let cpu = Device::open(BackendKind::Cpu, 0).unwrap();
    let others: Vec<Device> = devices().into_iter().filter(|d| d.kind() != BackendKind::Cpu).collect();
    let cpu_x = cpu.upload(&[1.0f32, 2.0]).unwrap();
    for other in &others {
        let s = other.stream();
        let mut y = s.upload(&[7.0f32, 7.0]).unwrap();
        let err = binary(&s, BinaryOp::Add, &cpu_x, &cpu_x, &mut y).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, Error::DeviceMismatch { .. }), "{err:?}");
        assert!(text.contains("cpu") && text.contains(other.kind().name()), "{text}");
        assert_eq!(y.to_vec().unwrap(), [7.0, 7.0], "the output is untouched");
        let err = s.copy(&cpu_x, &mut y).unwrap_err();
        assert!(matches!(err, Error::DeviceMismatch { .. }), "{err:?}");
    }
    if others.is_empty() {
        eprintln!("only the CPU here: cross-backend mixing is checked where a GPU backend opens");
    }
}

/// Run-time values give their typed ones, and typed values go back.
#[test]
fn run_time_and_typed_values_convert_both_ways() {
    use kiln::{Cpu, Tier};
    let dev = Device::open(BackendKind::Cpu, 0).unwrap();
    let typed: &kiln::typed::Device<Cpu> = dev.typed::<Cpu>().expect("a CPU device");
    let buf = Cpu::wrap_buffer(typed.upload(&[4u32, 5]).unwrap());
    assert_eq!(buf.to_vec().unwrap(), [4, 5]);
    assert!(buf.typed::<Cpu>().is_some());
    #[cfg(feature = "wgpu")]
    assert!(buf.typed::<kiln::Wgpu>().is_none());
    let again = Cpu::wrap_device(typed.clone());
    assert!(again.same(&dev));
}
