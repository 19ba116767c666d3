//! array: the GPUArray session of PyCUDA's guide with `kiln`'s Array (an
//! ndarray to the device, doubled, back and printed), and a small real
//! computation: standardising the columns of a matrix (each column less its
//! mean, over its standard deviation) with broadcasting, fused expressions
//! and reductions along an axis; and a Monte-Carlo estimate of pi from
//! Philox uniforms (the same points on every backend). Checked against
//! ndarray and a closed form on the host.
//!
//! ```sh
//! cargo run --release --example array -- --backend cpu
//! ```

mod common;

use common::Mismatch;

use kiln::array::{Array, Fold, where_};
use kiln::kernels::random::Philox;
use kiln::ndarray::{Array2, Axis};

/// The session, the standardisation of a `rows` x `cols` matrix and pi
/// from `points` random points, on `dev` (whichever backend it is).
struct Arrays {
    rows: usize,
    cols: usize,
    points: usize,
}

impl Arrays {
    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let s = dev.stream();
        let mut lines = Vec::new();

        // a_gpu = gpuarray.to_gpu(a); a_gpu *= 2; print(a_gpu.get())
        let a = Array2::from_shape_fn((4, 4), |(i, j)| (i * 4 + j) as f32 * 0.5 - 3.0);
        let mut a_gpu = Array::from_ndarray(&s, &a)?;
        a_gpu *= 2.0f32;
        a_gpu.check()?; // an operator cannot return the error of a failed update
        let doubled = a_gpu.to_ndarray()? == (&a * 2.0).into_dyn();
        common::ensure(doubled, || format!("doubled:\n{a_gpu}\nexpected\n{}", &a * 2.0))?;
        lines.push(format!("a doubled on the device:\n{a_gpu}"));

        // Columns standardised: (x - mean) / std, with std = sqrt(mean(x^2) - mean^2).
        let (rows, cols) = (self.rows, self.cols);
        let x =
            Array2::from_shape_fn((rows, cols), |(i, j)| ((i * 7 + j * 13) % 31) as f64 * (j + 1) as f64 + j as f64);
        let dx = Array::from_ndarray(&s, &x)?;
        let mean = dx.fold_axes(Fold::Mean, &[0])?; // one value per column
        let mean_sq = (&dx * &dx).fold_axes(Fold::Mean, &[0])?; // the squares are never stored
        let std = (&mean_sq - (&mean * &mean)).sqrt().eval()?;
        let z = ((&dx - &mean) / &std).eval()?; // the row of means and deviations repeats down the rows
        let z = z.to_ndarray()?;
        let m = x.mean_axis(Axis(0)).ok_or_else(|| Mismatch("no rows".into()))?;
        let sd = x.std_axis(Axis(0), 0.0);
        let z2 = z.view().into_dimensionality::<ndarray::Ix2>().map_err(|e| Mismatch(e.to_string()))?;
        for ((i, j), &got) in z2.indexed_iter() {
            let want = (x[[i, j]] - m[j]) / sd[j];
            let close = got.is_nan() == want.is_nan() && (got - want).abs() <= 1e-9 * (1.0 + want.abs());
            common::ensure(close, || format!("z[{i}][{j}] = {got}, host {want}"))?;
        }
        let col_means = Array::from_ndarray(&s, &z)?.fold_axes(Fold::Mean, &[0])?.to_vec()?;
        lines.push(format!(
            "{rows} x {cols} columns standardised: largest |column mean| afterwards {:.1e}",
            col_means.iter().fold(0.0f64, |a, b| a.max(b.abs()))
        ));

        // pi from the fraction of uniform points in the unit quarter disc.
        let n = self.points;
        let mut rng = Philox::new(2026);
        let (x, y) = (Array::<f32>::uniform(&s, &mut rng, &[n])?, Array::<f32>::uniform(&s, &mut rng, &[n])?);
        let inside = where_((&x * &x + &y * &y).le(1.0), 1.0, 0.0).sum()?; // one pass, nothing stored
        let pi = 4.0 * f64::from(inside) / n as f64;
        // The count's standard deviation is sqrt(n p (1 - p)), p = pi / 4.
        let sigma = 4.0 * (std::f64::consts::FRAC_PI_4 * (1.0 - std::f64::consts::FRAC_PI_4) / n as f64).sqrt();
        common::ensure((pi - std::f64::consts::PI).abs() <= 6.0 * sigma, || {
            format!("pi estimated as {pi} from {n} points, more than 6 sigma ({sigma:.1e}) off")
        })?;
        lines.push(format!("pi from {n} Philox points: {pi:.5} (sigma {sigma:.1e})"));
        Ok(lines.join("\n"))
    }
}

fn main() -> std::process::ExitCode {
    common::run("array", |dev| Arrays { rows: 1000, cols: 16, points: 1 << 22 }.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrays_on_every_backend() {
        for (rows, cols, points) in [(2, 1, 1), (37, 5, 1000), (1000, 16, 1 << 16)] {
            common::on_every_device(|dev| Arrays { rows, cols, points }.run(dev));
        }
    }
}
