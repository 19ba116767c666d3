//! linear_solve: a Poisson problem, `-laplace(u) = f` on the unit square
//! with `u = 0` on its edges, discretised by the 5-point stencil on a `k`
//! by `k` grid of interior points and solved as one dense system
//! (`Array::solve`, LU with partial pivoting). The solution is checked by
//! its residual `|A u - f| / (|A| |u|)` on the host, and against the exact
//! solution `sin(pi x) sin(pi y)` within the method's `O(h^2)` error; the
//! same matrix's Cholesky factor (it is symmetric positive definite) is
//! checked by `|L L^T - A|`. Written on the run-time tier, with arrays.
//!
//! ```sh
//! cargo run --release --example linear_solve -- --backend cuda
//! ```

mod common;

use kiln::Array;

/// The Poisson problem on a `k` x `k` interior grid.
struct Poisson {
    k: usize,
}

impl Poisson {
    /// The 5-point matrix, row-major, and the right-hand side for the
    /// exact solution `sin(pi x) sin(pi y)`, with that solution.
    fn system(&self) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
        let (k, n) = (self.k, self.k * self.k);
        let h = 1.0 / (k + 1) as f64;
        let mut a = vec![0.0; n * n];
        let mut f = vec![0.0; n];
        let mut exact = vec![0.0; n];
        let pi = std::f64::consts::PI;
        for i in 0..k {
            for j in 0..k {
                let r = i * k + j;
                a[r * n + r] = 4.0 / (h * h);
                for (di, dj) in [(-1i64, 0i64), (1, 0), (0, -1), (0, 1)] {
                    let (ni, nj) = (i as i64 + di, j as i64 + dj);
                    if (0..k as i64).contains(&ni) && (0..k as i64).contains(&nj) {
                        a[r * n + (ni as usize * k + nj as usize)] = -1.0 / (h * h);
                    }
                }
                let (x, y) = ((i + 1) as f64 * h, (j + 1) as f64 * h);
                exact[r] = (pi * x).sin() * (pi * y).sin();
                f[r] = 2.0 * pi * pi * exact[r];
            }
        }
        (a, f, exact)
    }

    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let s = dev.stream();
        let n = self.k * self.k;
        let (a, f, exact) = self.system();
        let da = Array::from_vec(&s, &[n, n], &a)?;
        let df = Array::from_vec(&s, &[n], &f)?;
        let u = match da.solve(&df) {
            Err(kiln::Error::Unsupported { reason, .. }) => return Ok(format!("skipped: {reason}")),
            other => other?.to_vec()?,
        };
        let au: Vec<f64> = (0..n).map(|r| (0..n).map(|c| a[r * n + c] * u[c]).sum()).collect();
        let inf = |v: &[f64]| v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let a_norm = (0..n).map(|r| a[r * n..(r + 1) * n].iter().map(|v| v.abs()).sum::<f64>()).fold(0.0, f64::max);
        let residual = inf(&au.iter().zip(&f).map(|(p, q)| p - q).collect::<Vec<_>>()) / (a_norm * inf(&u));
        common::ensure(residual <= 16.0 * n as f64 * f64::EPSILON, || format!("residual {residual:.3e}"))?;
        let h = 1.0 / (self.k + 1) as f64;
        let error = inf(&u.iter().zip(&exact).map(|(p, q)| p - q).collect::<Vec<_>>());
        common::ensure(error <= h * h, || format!("error {error:.3e} against sin(pi x) sin(pi y), past h^2"))?;

        let l = da.cholesky()?.to_vec()?;
        let llt = (0..n * n).map(|rc| {
            let (r, c) = (rc / n, rc % n);
            (0..=r.min(c)).map(|t| l[r * n + t] * l[c * n + t]).sum::<f64>()
        });
        let worst = llt.zip(&a).map(|(p, q)| (p - q).abs()).fold(0.0f64, f64::max);
        common::ensure(worst <= 16.0 * n as f64 * f64::EPSILON * a_norm, || format!("|L L^T - A| = {worst:.3e}"))?;
        Ok(format!(
            "Poisson on a {k}x{k} grid ({n} unknowns): residual {residual:.1e}, error {error:.1e} (h^2 = {:.1e}), \
             |L L^T - A| = {worst:.1e}",
            h * h,
            k = self.k
        ))
    }
}

fn main() -> std::process::ExitCode {
    common::run("linear_solve", |dev| Poisson { k: 32 }.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn poisson_on_every_backend() {
        for k in [3, 12] {
            common::on_every_device(|dev| Poisson { k }.run(dev));
        }
    }
}
