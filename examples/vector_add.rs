//! Vector add, `c = a + b`, written once as a `Program` with a source for
//! each backend (CUDA C for NVRTC, WGSL, a Rust fn for the CPU), following
//! the kernel ABI of kernels/README.md, launched on the run-time tier.
//!
//! ```sh
//! cargo run --release --example vector_add -- --backend cpu
//! ```

mod common;

use kiln::{Args, HostArgs, LaunchConfig, Program};

/// CUDA: a grid-stride loop with 64-bit indices, so any length works.
const CUDA: &str = r#"
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, unsigned long long n) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        c[i] = a[i] + b[i];
    }
}
"#;

/// WGSL: buffers bind in argument order, scalars in one uniform struct; the
/// block shape comes from the launch through the `block_*` overrides, and a
/// grid-stride loop covers grids capped at the adapter's limit.
const WGSL: &str = r#"
@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
struct Params { n: u32 }
@group(1) @binding(0) var<uniform> params: Params;

override block_x: u32 = 64;
override block_y: u32 = 1;
override block_z: u32 = 1;

@compute @workgroup_size(block_x, block_y, block_z)
fn vector_add(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * block_x;
    for (var i = gid.x; i < params.n; i += stride) {
        c[i] = a[i] + b[i];
    }
}
"#;

/// CPU: the whole launch at once.
fn vector_add_host(args: &mut HostArgs<'_>) -> kiln::Result<()> {
    let (a, b) = (args.input::<f32>(0)?, args.input::<f32>(1)?);
    for ((c, a), b) in args.output::<f32>(2)?.iter_mut().zip(a).zip(b) {
        *c = a + b;
    }
    Ok(())
}

fn program() -> Program {
    Program::new("vector_add").cuda(CUDA).wgsl(WGSL).host(vector_add_host)
}

/// Add two vectors of `n` elements on the device and check against the host.
struct VectorAdd {
    n: usize,
}

impl VectorAdd {
    /// On the run-time tier: `dev` is whichever device was found.
    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let n = self.n;
        let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
        let b: Vec<f32> = (0..n).map(|i| 1000.0 - i as f32).collect();
        let kernel = dev.kernel(&program())?;
        let (da, db) = (dev.upload(&a)?, dev.upload(&b)?);
        let mut dc = dev.alloc::<f32>(n)?;
        dc.fill(f32::NAN)?; // so an element the kernel misses shows
        // The length as the device's kernels index: u32 on wgpu, u64 elsewhere.
        let args =
            Args::new().arg(&da).arg(&db).arg(&mut dc).length(dev.info().features.index_width, n, "vector_add")?;
        // SAFETY: the kernel reads a[0..n) and b[0..n) and writes c[0..n), each of length n.
        unsafe { dev.stream().launch(&kernel, LaunchConfig::for_elements(n, 256), args)? };
        let c = dc.to_vec()?;
        let want: Vec<f32> = a.iter().zip(&b).map(|(a, b)| a + b).collect();
        // One IEEE addition on every backend: the results are identical.
        common::check("c", &c, &want, |g, w| g == w)?;
        Ok(format!("c = a + b over {n} elements; c[0] = {}, c[{}] = {}", c[0], n - 1, c[n - 1]))
    }
}

fn main() -> std::process::ExitCode {
    let program = VectorAdd { n: 1 << 20 };
    common::run("vector_add", |dev| program.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_on_every_backend_at_odd_sizes() {
        for n in [1, 255, 257, 100_003] {
            common::on_every_device(|dev| VectorAdd { n }.run(dev));
        }
    }

    #[test]
    fn backend_argument() {
        let args = |v: &[&str]| common::backend_arg(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(args(&["--backend", "cpu"]).unwrap().as_deref(), Some("cpu"));
        assert_eq!(args(&["--backend=wgpu"]).unwrap().as_deref(), Some("wgpu"));
        assert_eq!(args(&[]).unwrap(), None);
        assert!(args(&["--backend"]).unwrap_err().to_string().contains("needs a name"));
        assert!(args(&["--fast"]).unwrap_err().to_string().contains("unknown argument"));
    }
}
