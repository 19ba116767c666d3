//! fft: a signal's spectrum and a convolution by FFT. Two tones in a
//! sampled signal show as the two largest bins of its real transform
//! (`rfft`, frequencies from `rfftfreq`); then a signal is convolved with a
//! filter by multiplying their transforms (zero-padded to a length of no
//! small primes, 1009 + 64 - 1 = 1072 = 2^4 x 67), and the result is
//! checked against the direct convolution on the host. Written on the
//! run-time tier, with arrays.
//!
//! ```sh
//! cargo run --release --example fft -- --backend cpu
//! ```

mod common;

use kiln::Array;
use kiln::kernels::fft::FftNorm;

/// The spectrum and convolution of signals of `n` samples.
struct Spectra {
    n: usize,
}

impl Spectra {
    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let s = dev.stream();
        let n = self.n;
        let mut lines = Vec::new();

        // 50 Hz and 120 Hz tones (amplitudes 1 and 0.5), sampled at 1 kHz.
        let rate = 1000.0f64;
        let signal: Vec<f32> = (0..n)
            .map(|i| {
                let t = i as f64 / rate;
                ((2.0 * std::f64::consts::PI * 50.0 * t).sin() + 0.5 * (2.0 * std::f64::consts::PI * 120.0 * t).sin())
                    as f32
            })
            .collect();
        let x = Array::from_vec(&s, &[n], &signal)?;
        let spectrum = x.rfft(0, FftNorm::Backward)?.to_vec()?;
        let freqs = Array::<f32>::rfftfreq(&s, n, 1.0 / rate)?.to_vec()?;
        let mut bins: Vec<usize> = (0..spectrum.len()).collect();
        bins.sort_by(|&a, &b| spectrum[b].norm().total_cmp(&spectrum[a].norm()));
        let mut peaks = [freqs[bins[0]], freqs[bins[1]]];
        peaks.sort_by(f32::total_cmp);
        let near = |f: f32, want: f32| (f - want).abs() <= rate as f32 / n as f32;
        common::ensure(near(peaks[0], 50.0) && near(peaks[1], 120.0), || format!("spectral peaks at {peaks:?} Hz"))?;
        lines.push(format!("{n} samples at 1 kHz: peaks at {:.1} Hz and {:.1} Hz", peaks[0], peaks[1]));

        // A convolution by FFT against the direct one.
        let (len, taps) = (1009usize, 64usize);
        let padded = len + taps - 1;
        let a: Vec<f32> = (0..len).map(|i| ((i * 37 % 101) as f32 / 50.0) - 1.0).collect();
        let h: Vec<f32> = (0..taps).map(|i| (-(i as f32) / 16.0).exp()).collect();
        let pad = |v: &[f32]| -> Vec<f32> { v.iter().copied().chain(std::iter::repeat(0.0)).take(padded).collect() };
        let fa = Array::from_vec(&s, &[padded], &pad(&a))?.rfft(0, FftNorm::Backward)?;
        let fh = Array::from_vec(&s, &[padded], &pad(&h))?.rfft(0, FftNorm::Backward)?;
        let product: Vec<_> = fa.to_vec()?.iter().zip(fh.to_vec()?).map(|(p, q)| p * q).collect();
        let product = Array::from_vec(&s, &[product.len()], &product)?;
        let conv = product.irfft(padded, 0, FftNorm::Backward)?.to_vec()?;
        let direct: Vec<f32> = (0..padded)
            .map(|k| {
                (0..taps).filter(|&j| j <= k && k - j < len).map(|j| f64::from(h[j]) * f64::from(a[k - j])).sum::<f64>()
                    as f32
            })
            .collect();
        common::check("convolution by FFT", &conv, &direct, |g, w| (g - w).abs() <= 1e-4 * (1.0 + w.abs()))?;
        lines.push(format!("{len} samples convolved with {taps} taps by FFT of {padded}: matches the direct sum"));
        Ok(lines.join("\n"))
    }
}

fn main() -> std::process::ExitCode {
    common::run("fft", |dev| Spectra { n: 4000 }.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spectra_on_every_backend() {
        for n in [1000, 4000] {
            common::on_every_device(|dev| Spectra { n }.run(dev));
        }
    }
}
