//! Transpose of a row-major f32 matrix, the seed's two ways:
//!
//! - naive: one thread per element, reads along rows (coalesced) and writes
//!   down columns (strided: a warp's 32 writes touch 32 different rows);
//! - padded tiles: a block stages a 32 x 32 tile in shared memory (16 x 16
//!   on WGSL) and writes it out along rows, so reads and writes are both
//!   coalesced; the tile is one column wider than it is tall, so reading
//!   a column of it does not hit one memory bank 32 times.
//!
//! Both are checked bit for bit against the host and timed with events
//! (the GB/s counts one read and one write per element). Written on the
//! run-time tier.
//!
//! ```sh
//! cargo run --release --example transpose -- --backend cpu
//! ```

mod common;

use kiln::kernels::transpose::{TransposeAlgorithm, transpose_with};

/// Transpose a `rows x cols` matrix with both algorithms.
struct Transpose {
    rows: usize,
    cols: usize,
}

impl Transpose {
    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let (rows, cols) = (self.rows, self.cols);
        // Distinct values, so a misplaced element always shows.
        let a: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
        let want: Vec<f32> = (0..cols).flat_map(|c| (0..rows).map(move |r| (r * cols + c) as f32)).collect();
        let s = dev.stream();
        let ab = dev.upload(&a)?;
        let mut t = dev.alloc::<f32>(rows * cols)?;
        let mut lines = vec![format!("{rows} x {cols} f32 matrix transposed")];
        for algorithm in [TransposeAlgorithm::Naive, TransposeAlgorithm::Tiled] {
            t.fill(f32::NAN)?;
            let (start, stop) = (s.record_event()?, dev.create_event()?);
            transpose_with(&s, algorithm, &ab, rows, cols, &mut t)?;
            s.record(&stop)?;
            common::check(&format!("{algorithm} transpose"), &t.to_vec()?, &want, |g, w| g == w)?;
            let bytes = 2.0 * (rows * cols * 4) as f64;
            let rate = match stop.elapsed_since(&start) {
                Ok(d) => format!("{:.3} ms, {:.1} GB/s", d.as_secs_f64() * 1e3, bytes / d.as_secs_f64() / 1e9),
                Err(e) => format!("not timed ({e})"),
            };
            lines.push(format!("  {algorithm:<5} {rate}"));
        }
        Ok(lines.join("\n"))
    }
}

fn main() -> std::process::ExitCode {
    common::run("transpose", |dev| Transpose { rows: 1500, cols: 1001 }.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transposes_on_every_backend_at_edge_shapes() {
        for (rows, cols) in [(1, 1), (1, 100), (100, 1), (33, 31), (64, 97)] {
            common::on_every_device(|dev| Transpose { rows, cols }.run(dev));
        }
    }
}
