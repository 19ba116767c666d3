//! user_kernels: kernels written once in Rust and run on whichever backend
//! the device is: PyCUDA's linear combination `z = a*x + b*y` (an
//! elementwise kernel over any float type), an L2 norm (a reduction with a
//! post-map, of the whole array and of each row) and a running maximum (a
//! scan with a user operator). Every result is checked against the host.
//! Written on the run-time tier.
//!
//! ```sh
//! cargo run --release --example user_kernels -- --backend cpu
//! ```

mod common;

use kiln::kernels::user::expr::{Ty, var};
use kiln::kernels::user::{Elementwise, Reduction, Scan, ScanKind, launch, reduce, reduce_axis, scan};
use kiln::{Args, DType};

/// `n` pseudo-random values in [0, 1), from `seed` (xorshift).
fn unit(seed: u64, n: usize) -> Vec<f32> {
    let mut s = seed | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

/// The kernels, over `n` elements and a `rows` x `n / rows` matrix.
struct UserKernels {
    n: usize,
    rows: usize,
}

impl UserKernels {
    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let s = dev.stream();
        let (n, rows) = (self.n, self.rows);
        let mut lines = Vec::new();
        let t = Ty::param("T");

        // z = a*x + b*y: T is bound at launch (f32 here).
        let lincomb = Elementwise::new("lincomb")
            .scalar("a", t.clone())
            .input("x", t.clone())
            .scalar("b", t.clone())
            .input("y", t.clone())
            .output("z", t.clone())
            .set("z", var("a") * var("x") + var("b") * var("y"))
            .build()?;
        let (x, y) = (unit(1, n), unit(2, n));
        let (dx, dy) = (s.upload(&x)?, s.upload(&y)?);
        let mut dz = s.alloc::<f32>(n)?;
        launch(&s, &lincomb, Args::new().arg(2.5f32).arg(&dx).arg(-0.75f32).arg(&dy).arg(&mut dz))?;
        let want: Vec<f32> = x.iter().zip(&y).map(|(x, y)| (2.5 * *x as f64 - 0.75 * *y as f64) as f32).collect();
        // A GPU may fuse a multiply into the add: within a few ulps of the
        // larger term, since the terms can cancel.
        let close = |g: f32, w: f32| (g - w).abs() <= 4.0 * f32::EPSILON * 2.5;
        common::check("a*x + b*y", &dz.to_vec()?, &want, close)?;
        lines.push(format!("lincomb: z = 2.5 x - 0.75 y over {n} elements"));

        // The L2 norm: squares summed in the accumulator type, the root after.
        let norm = Reduction::new("l2norm", t.clone())
            .input("x", t.clone())
            .map(var("x") * var("x"))
            .reduce(var("a") + var("b"))
            .identity(0)
            .post(t, var("a").sqrt())
            .build()?;
        let got = reduce::<f32>(&s, &norm, Args::new().arg(&dx))?;
        let want = x.iter().map(|v| (*v as f64).powi(2)).sum::<f64>().sqrt();
        // A sum of n positive terms: relative error within log2(n) roundings.
        let bound = |want: f64, n: usize| 4.0 * f32::EPSILON as f64 * (n as f64).log2().max(1.0) * want;
        common::ensure((got as f64 - want).abs() <= bound(want, n), || format!("|x| = {got}, host {want}"))?;
        lines.push(format!("l2norm: |x| = {got} (host {want:.6})"));
        let cols = n / rows;
        let mut row_norms = s.alloc::<f32>(rows)?;
        reduce_axis(&s, &norm, Args::new().arg(dx.slice(0..rows * cols)?), rows, cols, 1, &mut row_norms)?;
        let got = row_norms.to_vec()?;
        for (r, g) in got.iter().enumerate() {
            let want = x[r * cols..(r + 1) * cols].iter().map(|v| (*v as f64).powi(2)).sum::<f64>().sqrt();
            common::ensure((*g as f64 - want).abs() <= bound(want, cols), || format!("|row {r}| = {g}, host {want}"))?;
        }
        lines.push(format!("l2norm along rows: {rows} norms of {cols} elements"));

        // The running maximum, inclusive: exact.
        let running_max = Scan::new("running_max", DType::I32)
            .input("v", DType::I32)
            .scan(var("a").max(var("b")))
            .identity(i32::MIN)
            .build()?;
        let v: Vec<i32> = unit(3, n).iter().zip(0..).map(|(u, i)| (u * 1e6) as i32 - 500_000 + i / 4).collect();
        let dv = s.upload(&v)?;
        let mut dm = s.alloc::<i32>(n)?;
        scan(&s, &running_max, ScanKind::Inclusive, Args::new().arg(&dv), &mut dm)?;
        let want: Vec<i32> = v
            .iter()
            .scan(i32::MIN, |m, x| {
                *m = (*m).max(*x);
                Some(*m)
            })
            .collect();
        common::check("running maximum", &dm.to_vec()?, &want, |g, w| g == w)?;
        lines.push(format!("running_max: last = {}", want.last().copied().unwrap_or(i32::MIN)));
        Ok(lines.join("\n"))
    }
}

fn main() -> std::process::ExitCode {
    let kernels = UserKernels { n: 1 << 22, rows: 1024 };
    common::run("user_kernels", |dev| kernels.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_kernels_on_every_backend() {
        for (n, rows) in [(1, 1), (1000, 10), (100_003, 37)] {
            let kernels = UserKernels { n, rows };
            common::on_every_device(|dev| kernels.run(dev));
        }
    }
}
