//! An iterative solver whose step is captured once as a graph and replayed:
//! Jacobi iterations `x <- x + D^-1 (b - A x)` for a diagonally dominant
//! system, each step a product, three elementwise kernels, a copy and the
//! residual's squared norm. The same iterations run first launch by launch,
//! then as graph replays; both must match the host's iteration, and the
//! times per step of both are printed.
//!
//! ```text
//! cargo run --release --example graph_solver                  # the best device
//! cargo run --release --example graph_solver -- --backend cpu
//! ```

mod common;

use std::time::Instant;

use kiln::kernels::elementwise::{BinaryOp, binary};
use kiln::kernels::matmul::{MatmulShape, matmul};
use kiln::kernels::reduce::dot_into;
use kiln::{Buffer, Device, Result, Stream};
use std::process::ExitCode;

const N: usize = 256;
const STEPS: usize = 200;

/// The system's buffers on the device, and the step's scratch.
struct Solver {
    a: Buffer<f32>,
    b: Buffer<f32>,
    dinv: Buffer<f32>,
    x: Buffer<f32>,
    ax: Buffer<f32>,
    r: Buffer<f32>,
    step: Buffer<f32>,
    next: Buffer<f32>,
    norm: Buffer<f32>,
}

impl Solver {
    /// One Jacobi step, enqueued on `s` (captured when `s` captures).
    fn step(&mut self, s: &Stream) -> Result<()> {
        matmul(s, &self.a, &self.x, &mut self.ax, MatmulShape::new(N, 1, N))?;
        binary(s, BinaryOp::Sub, &self.b, &self.ax, &mut self.r)?;
        binary(s, BinaryOp::Mul, &self.r, &self.dinv, &mut self.step)?;
        binary(s, BinaryOp::Add, &self.x, &self.step, &mut self.next)?;
        s.copy(&self.next, &mut self.x)?;
        dot_into(s, &self.r, &self.r, &mut self.norm)
    }
}

/// `STEPS` Jacobi steps on the host, in f64: the solution after them and
/// the last residual's squared norm.
fn host(a: &[f32], b: &[f32]) -> (Vec<f64>, f64) {
    let mut x = vec![0.0f64; N];
    let mut norm = 0.0;
    for _ in 0..STEPS {
        let r: Vec<f64> =
            (0..N).map(|i| b[i] as f64 - (0..N).map(|j| a[i * N + j] as f64 * x[j]).sum::<f64>()).collect();
        norm = r.iter().map(|v| v * v).sum();
        x = (0..N).map(|i| x[i] + r[i] / a[i * N + i] as f64).collect();
    }
    (x, norm)
}

/// From x = 0 (and the norm poisoned), `STEPS` calls of `step` on `s`,
/// timed between two synchronizations: the time per step and the solution.
fn timed(s: &Stream, solver: &mut Solver, mut step: impl FnMut(&mut Solver) -> Result<()>) -> Result<(f64, Vec<f32>)> {
    solver.x.fill(0.0)?;
    solver.norm.fill(f32::NAN)?;
    s.synchronize()?;
    let t0 = Instant::now();
    for _ in 0..STEPS {
        step(solver)?;
    }
    s.synchronize()?;
    Ok((t0.elapsed().as_secs_f64() / STEPS as f64, solver.x.to_vec()?))
}

fn run(dev: &Device) -> common::Checked {
    let s = dev.stream();
    // A dense matrix with entries in [-1, 1) and a diagonal of 2N: the
    // iteration contracts by at least half a step.
    let a: Vec<f32> = (0..N * N)
        .map(|k| if k / N == k % N { 2.0 * N as f32 } else { ((k * 7919) % 2000) as f32 / 1000.0 - 1.0 })
        .collect();
    let b: Vec<f32> = (0..N).map(|i| ((i * 31) % 17) as f32 - 8.0).collect();
    let dinv: Vec<f32> = (0..N).map(|i| 1.0 / a[i * N + i]).collect();
    let mut solver = Solver {
        a: s.upload(&a)?,
        b: s.upload(&b)?,
        dinv: s.upload(&dinv)?,
        x: s.alloc_zeroed(N)?,
        ax: s.alloc(N)?,
        r: s.alloc(N)?,
        step: s.alloc(N)?,
        next: s.alloc(N)?,
        norm: s.alloc(1)?,
    };
    let (want, want_norm) = host(&a, &b);
    let close = |g: f32, w: f64| (g as f64 - w).abs() <= 1e-4 * (1.0 + w.abs());

    // Launch by launch, then the step captured once and replayed.
    solver.step(&s)?; // compiles the kernels outside the timing
    let (eager, x_eager) = timed(&s, &mut solver, |solver| solver.step(&s))?;
    s.begin_capture()?;
    solver.step(&s)?;
    let graph = s.end_capture()?;
    let (replayed, x_graph) = timed(&s, &mut solver, |_| graph.launch(&s))?;
    let norm = solver.norm.to_vec()?[0];

    let want32: Vec<f32> = want.iter().map(|&v| v as f32).collect();
    common::check("x launched one by one", &x_eager, &want32, |g, w| close(g, w as f64))?;
    common::check("x replayed as a graph", &x_graph, &want32, |g, w| close(g, w as f64))?;
    let norm_ok = (norm as f64 - want_norm).abs() <= 1e-3 * (1.0 + want_norm);
    common::ensure(norm_ok, || format!("residual norm^2 {norm}, host {want_norm}"))?;
    Ok(format!(
        "{STEPS} Jacobi steps of a {N}x{N} system ({} kernels per step{}): {:.1} us per step launched one by \
             one, {:.1} us replayed as a graph; residual norm^2 {norm:.3e}",
        graph.kernels(),
        match (graph.is_native(), dev.kind()) {
            (true, kiln::BackendKind::Cuda) => ", one CUDA graph",
            (true, _) => ", launches bound once",
            (false, _) => "",
        },
        eager * 1e6,
        replayed * 1e6
    ))
}

fn main() -> ExitCode {
    common::run("graph_solver", run)
}
