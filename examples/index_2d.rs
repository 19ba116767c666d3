//! 2D indexing: a kernel launched over a width x height grid of 16 x 16
//! blocks writes each element's own coordinates, `out[y][x] = y << 16 | x`,
//! so a wrong row stride, a swapped axis or a missed edge shows at once.
//! One `Program` with CUDA C, WGSL and a host fn, following the kernel ABI,
//! launched on the run-time tier.
//!
//! ```sh
//! cargo run --release --example index_2d -- --backend cpu
//! ```

mod common;

use kiln::{Args, HostArgs, LaunchConfig, Program};

/// CUDA: grid-stride along both axes, 64-bit indices.
const CUDA: &str = r#"
extern "C" __global__ void index_2d(unsigned int* out, unsigned long long width, unsigned long long height) {
    for (unsigned long long y = (unsigned long long)blockIdx.y * blockDim.y + threadIdx.y; y < height;
         y += (unsigned long long)gridDim.y * blockDim.y) {
        for (unsigned long long x = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; x < width;
             x += (unsigned long long)gridDim.x * blockDim.x) {
            out[y * width + x] = (unsigned int)((y << 16) | x);
        }
    }
}
"#;

/// WGSL: the same loops; the workgroup shape comes from the launch's block.
const WGSL: &str = r#"
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
struct Params { width: u32, height: u32 }
@group(1) @binding(0) var<uniform> params: Params;

override block_x: u32 = 16;
override block_y: u32 = 16;
override block_z: u32 = 1;

@compute @workgroup_size(block_x, block_y, block_z)
fn index_2d(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    for (var y = gid.y; y < params.height; y += groups.y * block_y) {
        for (var x = gid.x; x < params.width; x += groups.x * block_x) {
            out[y * params.width + x] = (y << 16u) | x;
        }
    }
}
"#;

/// CPU: every (x, y) of the launch, row by row.
fn index_2d_host(args: &mut HostArgs<'_>) -> kiln::Result<()> {
    let (width, height) = (args.scalar::<u64>(1)? as usize, args.scalar::<u64>(2)? as usize);
    let out = args.output::<u32>(0)?;
    for (y, row) in out.chunks_mut(width.max(1)).take(height).enumerate() {
        for (x, v) in row.iter_mut().enumerate() {
            *v = ((y << 16) | x) as u32;
        }
    }
    Ok(())
}

fn program() -> Program {
    Program::new("index_2d").cuda(CUDA).wgsl(WGSL).host(index_2d_host)
}

/// Fill a `width` x `height` grid (both below 2^16, so coordinates stay distinct).
struct Index2d {
    width: usize,
    height: usize,
}

impl Index2d {
    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let (w, h) = (self.width, self.height);
        let kernel = dev.kernel(&program())?;
        let mut out = dev.alloc::<u32>(w * h)?;
        out.fill(u32::MAX)?; // no (x, y) below 2^16 encodes to this
        let width = dev.info().features.index_width;
        let args = Args::new().arg(&mut out).length(width, w, "index_2d")?.length(width, h, "index_2d")?;
        let config = LaunchConfig::for_2d(w, h, 16, 16);
        // SAFETY: the kernel writes out[y * w + x] for x < w, y < h: inside out's w * h elements.
        unsafe { dev.stream().launch(&kernel, config, args)? };
        let got = out.to_vec()?;
        let want: Vec<u32> = (0..h).flat_map(|y| (0..w).map(move |x| ((y << 16) | x) as u32)).collect();
        common::check("out", &got, &want, |g, w| g == w)?;
        let corner = got.last().map(|v| format!("(x {}, y {})", v & 0xffff, v >> 16)).unwrap_or_default();
        Ok(format!(
            "{w} x {h} grid in blocks of 16 x 16 ({} x {} blocks); last element holds {corner}",
            config.grid.x, config.grid.y
        ))
    }
}

fn main() -> std::process::ExitCode {
    common::run("index_2d", |dev| Index2d { width: 1000, height: 333 }.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_on_every_backend_at_edge_shapes() {
        for (width, height) in [(1, 1), (17, 3), (3, 17), (300, 257)] {
            common::on_every_device(|dev| Index2d { width, height }.run(dev));
        }
    }
}
