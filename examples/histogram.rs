//! histogram: the seed's histogram with atomics, 256 bins over the bytes
//! of a generated picture; then i32 values in 10 bins of a range, and f32
//! values with some outside the range (and a NaN), which are dropped and
//! counted. Every count is checked against the host. Written on the
//! run-time tier.
//!
//! ```sh
//! cargo run --release --example histogram -- --backend cpu
//! ```

mod common;

use kiln::kernels::histogram::histogram;

/// Histograms of `n` values.
struct Histograms {
    n: usize,
}

impl Histograms {
    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let s = dev.stream();
        let n = self.n;
        let mut lines = Vec::new();

        // Bytes of a gradient with a bright square: skewed toward a few values.
        let side = (n as f64).sqrt() as usize;
        let pixels: Vec<u8> = (0..side * side)
            .map(|i| {
                let (r, c) = (i / side, i % side);
                if (side / 4..side / 2).contains(&r) && (side / 4..side / 2).contains(&c) {
                    255
                } else {
                    ((r + c) * 255 / (2 * side).max(1)) as u8
                }
            })
            .collect();
        let mut counts = s.alloc::<u32>(256)?;
        let dropped = histogram(&s, &s.upload(&pixels)?, 256, 0, 256, &mut counts)?;
        let mut want = vec![0u32; 256];
        pixels.iter().for_each(|&p| want[p as usize] += 1);
        let got = counts.to_vec()?;
        common::check("byte histogram", &got, &want, |g, w| g == w)?;
        common::ensure(dropped == 0, || format!("{dropped} bytes dropped from [0, 256)"))?;
        lines.push(format!("{side} x {side} picture: {} pixels at 255, {} at 0", got[255], got[0]));

        // i32 values from -50 to 149 in 10 bins of [0, 100): width 10, half dropped.
        let values: Vec<i32> = (0..n).map(|i| (i % 200) as i32 - 50).collect();
        let mut ten = s.alloc::<u32>(10)?;
        let dropped = histogram(&s, &s.upload(&values)?, 10, 0, 100, &mut ten)?;
        let mut want = vec![0u32; 10];
        let mut want_dropped = 0u64;
        for &v in &values {
            match v {
                0..100 => want[v as usize / 10] += 1,
                _ => want_dropped += 1,
            }
        }
        common::check("i32 histogram", &ten.to_vec()?, &want, |g, w| g == w)?;
        common::ensure(dropped == want_dropped, || format!("i32: {dropped} dropped, host {want_dropped}"))?;
        lines.push(format!("i32 in 10 bins of [0, 100): {want:?}, {dropped} dropped"));

        // f32 in 4 bins of [0, 1): 1.0 itself, negatives and NaN are dropped.
        let mut floats: Vec<f32> = (0..n).map(|i| (i % 13) as f32 / 10.0 - 0.1).collect();
        floats[0] = f32::NAN;
        let mut four = s.alloc::<u32>(4)?;
        let dropped = histogram(&s, &s.upload(&floats)?, 4, 0.0, 1.0, &mut four)?;
        let mut want = vec![0u32; 4];
        let mut want_dropped = 0u64;
        for &v in &floats {
            if (0.0..1.0).contains(&v) {
                want[((v * 4.0) as usize).min(3)] += 1;
            } else {
                want_dropped += 1;
            }
        }
        common::check("f32 histogram", &four.to_vec()?, &want, |g, w| g == w)?;
        common::ensure(dropped == want_dropped, || format!("f32: {dropped} dropped, host {want_dropped}"))?;
        lines.push(format!("f32 in 4 bins of [0, 1): {want:?}, {dropped} dropped (out of range or NaN)"));
        Ok(lines.join("\n"))
    }
}

fn main() -> std::process::ExitCode {
    common::run("histogram", |dev| Histograms { n: 1 << 22 }.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histograms_on_every_backend() {
        for n in [1, 1000, 100_003] {
            common::on_every_device(|dev| Histograms { n }.run(dev));
        }
    }
}
