//! reduce: the sum, minimum, maximum, product and dot product of an array,
//! the position of its extremes, and sums along each axis of a matrix;
//! results read on the host, or kept on the device for the next kernel.
//! Every number is checked against the host. Written on the run-time tier:
//! plain functions of a `kiln::Device`, whichever backend it is.
//!
//! ```sh
//! cargo run --release --example reduce -- --backend cpu
//! ```

mod common;

use kiln::kernels::reduce::{ReduceOp, argmax, argmin, dot, reduce, reduce_axis, reduce_into};

/// Reductions over `n` values and a `rows` x `cols` matrix.
struct Reductions {
    n: usize,
    rows: usize,
    cols: usize,
}

/// Whether a float sum of `n` terms of total magnitude `magnitude` is close
/// enough to the host's f64 sum (GPUs add in a tree, so not bit for bit).
fn sum_close(got: f32, want: f64, n: usize, magnitude: f64) -> bool {
    (got as f64 - want).abs() <= 4.0 * f32::EPSILON as f64 * (n as f64).log2().max(1.0) * magnitude
}

impl Reductions {
    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let s = dev.stream();
        let n = self.n;
        // A wave with a single lowest and highest point (at n/4 and 3n/4 of a period).
        let x: Vec<f32> = (0..n).map(|i| ((i % 1000) as f32 * 0.006_283_185).sin() * 10.0).collect();
        let y: Vec<f32> = (0..n).map(|i| (i % 7) as f32 - 3.0).collect();
        let (dx, dy) = (s.upload(&x)?, s.upload(&y)?);
        let mut lines = Vec::new();

        let sum = reduce(&s, ReduceOp::Sum, &dx)?;
        let magnitude: f64 = x.iter().map(|v| v.abs() as f64).sum();
        let want: f64 = x.iter().map(|&v| v as f64).sum();
        common::ensure(sum_close(sum, want, n, magnitude), || format!("sum = {sum}, host {want}"))?;
        lines.push(format!("sum     = {sum:.4} (host {want:.4})"));

        let (min, max) = (reduce(&s, ReduceOp::Min, &dx)?, reduce(&s, ReduceOp::Max, &dx)?);
        let host_min = x.iter().copied().fold(f32::INFINITY, f32::min);
        let host_max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        common::ensure((min, max) == (host_min, host_max), || {
            format!("min, max = {min}, {max}; host {host_min}, {host_max}")
        })?;
        let ((imin, vmin), (imax, vmax)) = (argmin(&s, &dx)?, argmax(&s, &dx)?);
        let first = |v: f32| x.iter().position(|&e| e == v);
        common::ensure((Some(imin), Some(imax)) == (first(vmin), first(vmax)) && (vmin, vmax) == (min, max), || {
            format!("argmin {imin} ({vmin}), argmax {imax} ({vmax}): not the first extremes")
        })?;
        lines.push(format!("min     = {min:.4} first at {imin}; max = {max:.4} first at {imax}"));

        let d = dot(&s, &dx, &dy)?;
        let want_dot: f64 = x.iter().zip(&y).map(|(&a, &b)| a as f64 * b as f64).sum();
        let dot_magnitude: f64 = x.iter().zip(&y).map(|(&a, &b)| (a as f64 * b as f64).abs()).sum();
        common::ensure(sum_close(d, want_dot, n, dot_magnitude), || format!("dot = {d}, host {want_dot}"))?;
        lines.push(format!("dot     = {d:.4} (host {want_dot:.4})"));

        // Integers wrap: the product of the first 40 odd numbers, modulo 2^32.
        let odd: Vec<u32> = (0..40).map(|i| 2 * i + 1).collect();
        let product = reduce(&s, ReduceOp::Product, &s.upload(&odd)?)?;
        let host_product = odd.iter().fold(1u32, |a, &b| a.wrapping_mul(b));
        common::ensure(product == host_product, || format!("product of odd numbers = {product}, host {host_product}"))?;
        lines.push(format!("product of 1, 3, ..., 79 modulo 2^32 = {product}"));

        // Row sums stay on the device; the next kernels fold them into the
        // total and into a slot of a results buffer, without a host round trip.
        let (rows, cols) = (self.rows, self.cols);
        let m: Vec<i32> = (0..rows * cols).map(|i| (i % 11) as i32 - 5).collect();
        let dm = s.upload(&m)?;
        let mut row_sums = s.alloc::<i32>(rows)?;
        reduce_axis(&s, ReduceOp::Sum, &dm, rows, cols, 1, &mut row_sums)?;
        let mut col_max = s.alloc::<i32>(cols)?;
        reduce_axis(&s, ReduceOp::Max, &dm, rows, cols, 0, &mut col_max)?;
        let mut results = s.upload(&[0i32; 2])?;
        reduce_into(&s, ReduceOp::Sum, &row_sums, &mut results.slice_mut(0..1)?)?;
        reduce_into(&s, ReduceOp::Max, &col_max, &mut results.slice_mut(1..2)?)?;
        let got = results.to_vec()?; // the one wait for the host
        let host_total: i32 = m.iter().sum();
        let host_max = *m.iter().max().unwrap_or(&0);
        common::ensure(got == [host_total, host_max], || {
            format!("total and max of the matrix = {got:?}, host [{host_total}, {host_max}]")
        })?;
        lines.push(format!("{rows} x {cols} matrix: sum of row sums = {}, max of column maxima = {}", got[0], got[1]));
        Ok(lines.join("\n"))
    }
}

fn main() -> std::process::ExitCode {
    let reductions = Reductions { n: 1 << 22, rows: 1000, cols: 3000 };
    common::run("reduce", |dev| reductions.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reductions_on_every_backend() {
        for (n, rows, cols) in [(3, 1, 5), (100_003, 37, 129)] {
            let reductions = Reductions { n, rows, cols };
            common::on_every_device(|dev| reductions.run(dev));
        }
    }
}
