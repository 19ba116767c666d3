//! Helpers shared by the test modules.

use kiln_core::{Args, Device, Error, Kernel, LaunchConfig, Program};
use kiln_cuda::Cuda;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Device 0, or `None` (with a note) on a machine without CUDA.
pub fn gpu() -> Option<Device<Cuda>> {
    match Device::<Cuda>::open(0) {
        Ok(d) => Some(d),
        Err(Error::BackendUnavailable { reason, .. }) => {
            eprintln!("skipped: no GPU here ({reason})");
            None
        }
        Err(e) => panic!("CUDA is present but device 0 did not open: {e}"),
    }
}

/// A seeded generator; tests print the seed with every failure.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// `n` random f32 in [-100, 100).
pub fn random_f32(seed: u64, n: usize) -> Vec<f32> {
    let mut r = rng(seed);
    (0..n).map(|_| r.random_range(-100.0f32..100.0)).collect()
}

/// `n` random bytes.
pub fn random_u8(seed: u64, n: usize) -> Vec<u8> {
    let mut r = rng(seed);
    (0..n).map(|_| r.random()).collect()
}

/// A value no test writes on purpose, to fill outputs before a run.
pub const POISON_F32: f32 = -7777.25;

/// The sizes most tests sweep: tiny, odd, one warp +-1, one block +-1, large and odd.
pub const SIZES: [usize; 8] = [1, 2, 31, 33, 255, 257, 100_003, (1 << 20) + 3];

/// Compile `source` as kernel `name` on `dev`.
pub fn kernel(dev: &Device<Cuda>, name: &str, source: &str) -> Kernel<Cuda> {
    dev.kernel(&Program::new(name).cuda(source)).unwrap_or_else(|e| panic!("compiling `{name}`: {e}"))
}

/// y = a * x + y over u64 lengths, grid-stride.
pub const SAXPY: &str = r#"
extern "C" __global__ void saxpy(const float* x, float* y, float a, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        y[i] = a * x[i] + y[i];
    }
}
"#;

/// Launch SAXPY on the device's default stream.
pub fn saxpy(
    dev: &Device<Cuda>,
    k: &Kernel<Cuda>,
    x: &kiln_core::Buffer<Cuda, f32>,
    y: &mut kiln_core::Buffer<Cuda, f32>,
    a: f32,
) -> kiln_core::Result<()> {
    let n = x.len() as u64;
    let cfg = LaunchConfig::for_elements(x.len().min(1 << 22), 256);
    let args = Args::new().arg(x).arg(y).arg(a).arg(n);
    // SAFETY: SAXPY reads x[0..n) and writes y[0..n), both n long.
    unsafe { dev.stream().launch(k, cfg, args) }
}

/// Whether this process is a child started by [`run_child`] for `test`.
pub fn is_child(var: &str) -> Option<String> {
    std::env::var(var).ok()
}

/// Run test `name` of this binary in a new process with `var=value`; returns its output.
pub fn run_child(name: &str, var: &str, value: &str) -> (bool, String) {
    let exe = std::env::current_exe().expect("test binary path");
    let out = std::process::Command::new(exe)
        .args([name, "--exact", "--nocapture", "--test-threads=1"])
        .env(var, value)
        .output()
        .expect("starting the child test process");
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}
