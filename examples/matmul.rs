//! The typed-tier example: every other example runs on the run-time tier
//! (`kiln::Device`, one `match` per call); this one is written once,
//! generically, for `kiln::typed::Device<B>`, and `Device::visit` runs it
//! with the concrete backend of whichever device was found. Code does so for
//! static dispatch in hot loops, or, as here, to reach the backend itself:
//! `dev.raw()` is the backend's own device, which says whether a vendor GEMM
//! (cuBLAS) is there to compare with kiln's kernels.
//!
//! Matrix multiply, `c = a . b` (row-major f32), the seed's two ways:
//!
//! - naive: one thread per element of `c`, each reading a row of `a` and a
//!   column of `b` from global memory (two loads per multiply-add);
//! - shared-memory tiled: tiles of `a` and `b` staged in shared (workgroup)
//!   memory, so every element loaded serves a whole tile's multiply-adds
//!   (kiln's `MatmulStrategy::Tiled`; on CUDA the register-blocked sgemm).
//!
//! Where the device offers a vendor GEMM (cuBLAS on CUDA) it runs that too.
//! Every result is checked against the host's f64 sum within fp32's bound,
//! `(k + 2) eps sum |a b|`, and timed with events. The shape is not a
//! multiple of any tile.
//!
//! ```sh
//! cargo run --release --example matmul -- --backend cpu
//! ```

mod common;

use kiln::core::RawDevice;
use kiln::typed::kernels::matmul::{MatmulShape, MatmulStrategy, choose, matmul_with};
use kiln::{Backend, DType, DeviceVisitor};
use rand::{Rng, SeedableRng};

/// Multiply an `m x k` by a `k x n` matrix with each strategy the backend has.
struct Matmul {
    shape: MatmulShape,
}

/// Written once for every backend `B`; `Device::visit` picks `B` at run time.
impl DeviceVisitor for Matmul {
    type Output = common::Checked;

    fn visit<B: Backend>(self, dev: &kiln::typed::Device<B>) -> common::Checked {
        let MatmulShape { m, n, k, .. } = self.shape;
        let mut rng = rand::rngs::StdRng::seed_from_u64(7);
        let a: Vec<f32> = (0..m * k).map(|_| rng.random_range(-1.0..1.0)).collect();
        let b: Vec<f32> = (0..k * n).map(|_| rng.random_range(-1.0..1.0)).collect();
        // The host's reference in f64, and each element's fp32 error bound.
        let mut want = vec![(0.0f64, 0.0f64); m * n];
        for (e, w) in want.iter_mut().enumerate() {
            let (i, j) = (e / n, e % n);
            for p in 0..k {
                let t = a[i * k + p] as f64 * b[p * n + j] as f64;
                w.0 += t;
                w.1 += t.abs();
            }
            w.1 *= (k as f64 + 2.0) * f32::EPSILON as f64;
        }
        let s = dev.stream();
        let (ab, bb) = (dev.upload(&a)?, dev.upload(&b)?);
        let mut c = dev.alloc::<f32>(m * n)?;
        let mut strategies = vec![MatmulStrategy::Naive, MatmulStrategy::Tiled];
        if dev.raw().vendor_gemm().is_some_and(|v| v.supports(DType::F32, DType::F32)) {
            strategies.push(MatmulStrategy::Vendor);
        }
        let mut lines = vec![format!(
            "c ({m} x {n}) = a ({m} x {k}) . b ({k} x {n}); automatic choice here: {}",
            choose(dev, DType::F32, self.shape)
        )];
        for strategy in strategies {
            c.fill(f32::NAN)?; // every element must be written
            let (start, stop) = (s.record_event()?, dev.create_event()?);
            let used = matmul_with(&s, strategy, &ab, &bb, &mut c, self.shape)?;
            s.record(&stop)?;
            let got = c.to_vec()?;
            // NaN (an unwritten element) is never within the bound.
            let within = |(&g, &(w, bound)): (&f32, &(f64, f64))| (g as f64 - w).abs() <= bound;
            let bad = got.iter().zip(&want).position(|e| !within(e));
            if let Some(i) = bad {
                let why = format!("{used}: c[{i}] = {}, expected {} within {:.2e}", got[i], want[i].0, want[i].1);
                return Err(common::Mismatch(why).into());
            }
            let rate = match stop.elapsed_since(&start) {
                Ok(t) => format!(
                    "{:.3} ms, {:.1} GFLOP/s",
                    t.as_secs_f64() * 1e3,
                    self.shape.flops() as f64 / t.as_secs_f64() / 1e9
                ),
                Err(e) => format!("not timed ({e})"),
            };
            lines.push(format!("  {used:<6} {rate}"));
        }
        Ok(lines.join("\n"))
    }
}

fn main() -> std::process::ExitCode {
    let shape = MatmulShape::new(500, 333, 257);
    common::run("matmul", |dev| dev.visit(Matmul { shape }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiplies_on_every_backend_at_edge_shapes() {
        for (m, n, k) in [(1, 1, 1), (1, 37, 5), (37, 1, 5), (65, 17, 129), (130, 129, 9)] {
            let shape = MatmulShape::new(m, n, k);
            common::on_every_device(|dev| dev.visit(Matmul { shape }));
        }
    }
}
