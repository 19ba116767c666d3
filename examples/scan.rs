//! scan: running sums of millions of elements (many blocks' worth: the
//! seed's single-block scan went wrong past one block), inclusive and
//! exclusive, in place, and in segments, on the run-time tier; checked
//! against the host.
//!
//! ```sh
//! cargo run --release --example scan -- --backend cpu
//! ```

mod common;

use kiln::kernels::scan::{ScanKind, scan, scan_in_place, segmented_scan};

/// Scans of `n` elements.
struct Scans {
    n: usize,
}

impl Scans {
    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let s = dev.stream();
        let n = self.n;
        let mut lines = Vec::new();

        // Integers are exact (and wrap): the running sum of 0, 1, 2, ... is n(n-1)/2 at the end.
        let x: Vec<u32> = (0..n as u32).collect();
        let dx = s.upload(&x)?;
        let mut dy = s.alloc::<u32>(n)?;
        for kind in ScanKind::ALL {
            scan(&s, kind, &dx, &mut dy)?;
            let got = dy.to_vec()?;
            let mut acc = 0u32;
            let want: Vec<u32> = x
                .iter()
                .map(|&v| {
                    let before = acc;
                    acc = acc.wrapping_add(v);
                    if kind == ScanKind::Inclusive { acc } else { before }
                })
                .collect();
            common::check(&format!("{kind} scan"), &got, &want, |g, w| g == w)?;
            lines.push(format!("{kind:>9} scan of 0..{n}: last = {}", got.last().copied().unwrap_or(0)));
        }

        // Floats in place: the running sum of 0.5s is exact in f32 up to 2^24.
        let mut halves = s.upload(&vec![0.5f32; n])?;
        scan_in_place(&s, ScanKind::Inclusive, &mut halves)?;
        let got = halves.to_vec()?;
        let want: Vec<f32> = (1..=n).map(|i| i as f32 * 0.5).collect();
        common::check("in-place scan of 0.5s", &got, &want, |g, w| g == w)?;
        lines.push(format!("in-place scan of {n} halves: last = {}", got.last().copied().unwrap_or(0.0)));

        // Segments of 1000: each restarts its count.
        let ones = s.upload(&vec![1i32; n])?;
        let flags: Vec<u32> = (0..n).map(|i| u32::from(i % 1000 == 0)).collect();
        let mut counts = s.alloc::<i32>(n)?;
        segmented_scan(&s, ScanKind::Exclusive, &ones, &s.upload(&flags)?, &mut counts)?;
        let got = counts.to_vec()?;
        let want: Vec<i32> = (0..n).map(|i| (i % 1000) as i32).collect();
        common::check("segmented exclusive scan", &got, &want, |g, w| g == w)?;
        lines.push("segmented scan: every segment of 1000 counts 0..999".to_string());
        Ok(lines.join("\n"))
    }
}

fn main() -> std::process::ExitCode {
    common::run("scan", |dev| Scans { n: 1 << 22 }.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scans_on_every_backend() {
        for n in [1, 4097, 100_003] {
            common::on_every_device(|dev| Scans { n }.run(dev));
        }
    }
}
