//! `kiln bench --fft`: kiln's f32 transforms on every backend found, with
//! cupy.fft (cuFFT) and torch.fft beside the CUDA rows and numpy.fft and
//! scipy.fft beside the CPU rows, in the same run.
//!
//! Cases: batched 1-D transforms (2^14 of 2^10 points, 64 of 2^20, one of
//! 2^24) and a 2-D transform of 4096^2, complex to complex and real to
//! complex. Rates are GFLOP/s by the usual count (`5 n log2 n` per complex
//! transform of `n` points, half that for a real one) and GB/s for reading
//! the input and writing the output once.

use std::path::PathBuf;
use std::process::ExitCode;

use kiln::typed::kernels::fft::{fft, rfft, FftNorm, FftShape};
use kiln::BackendKind;
use kiln_benches::{time_runs, utc_now, Sampling};
use kiln_core::{Backend, Complex, Device, DeviceVisitor, Result};
use serde::Serialize;

use crate::peer_script::{open_devices, run_peers, versus, write_json, PeerSampling};

/// The peers' script, written beside the report when it runs.
const PEER_SCRIPT: &str = include_str!("../../benches/peers/fft_peer.py");

/// One transform the bench times.
#[derive(Debug, Clone, Serialize)]
pub struct FftCase {
    /// Its name in the table ("c2c_1d_1024x16384").
    pub name: String,
    /// The array's shape.
    pub shape: Vec<usize>,
    /// The transformed axes.
    pub axes: Vec<usize>,
    /// Real to complex (else complex to complex).
    pub real: bool,
}

impl FftCase {
    fn new(shape: &[usize], axes: &[usize], real: bool) -> Self {
        let kind = if real { "r2c" } else { "c2c" };
        let dims = if axes.len() > 1 { format!("{}d", axes.len()) } else { "1d".into() };
        let n: usize = axes.iter().map(|&a| shape[a]).product();
        let batch = shape.iter().product::<usize>() / n;
        let sides: Vec<String> = axes.iter().map(|&a| shape[a].to_string()).collect();
        FftCase {
            name: format!("{kind}_{dims}_{}x{batch}", sides.join("x")),
            shape: shape.to_vec(),
            axes: axes.to_vec(),
            real,
        }
    }

    fn spec(&self) -> FftShape {
        FftShape::new(&self.shape).along(&self.axes)
    }

    /// Floating-point operations by the usual count.
    fn flops(&self) -> f64 {
        let spec = self.spec();
        let n = spec.points() as f64;
        let batch = spec.len() as f64 / n;
        let per = 5.0 * n * n.log2() * if self.real { 0.5 } else { 1.0 };
        per * batch
    }

    /// Bytes read and written once.
    fn bytes(&self) -> f64 {
        let spec = self.spec();
        let out = if self.real { spec.half_shape().iter().product::<usize>() } else { spec.len() } * 8;
        let input = spec.len() * if self.real { 4 } else { 8 };
        (input + out) as f64
    }
}

/// The cases, in table order.
pub fn cases() -> Vec<FftCase> {
    let mut all = Vec::new();
    for real in [false, true] {
        all.push(FftCase::new(&[1 << 14, 1 << 10], &[1], real));
        all.push(FftCase::new(&[64, 1 << 20], &[1], real));
        all.push(FftCase::new(&[1 << 24], &[0], real));
        all.push(FftCase::new(&[4096, 4096], &[0, 1], real));
    }
    all
}

/// One timed case on one backend, or its peer.
#[derive(Debug, Clone, Serialize)]
pub struct FftRow {
    /// "cuda", "wgpu", "cpu", or the peer's name.
    pub who: String,
    /// The case's name.
    pub case: String,
    /// Median ms per transform.
    pub ms: f64,
    /// Fastest ms per transform.
    pub min_ms: f64,
    /// GFLOP/s at the median.
    pub gflop_per_s: f64,
    /// GB/s at the median.
    pub gb_per_s: f64,
    /// The median SM clock while timing, MHz (GPUs whose clock is read).
    pub sm_clock_mhz: Option<u32>,
}

struct Visitor<'a> {
    cases: &'a [FftCase],
    sampling: Sampling,
}

impl DeviceVisitor for Visitor<'_> {
    type Output = Result<Vec<FftRow>>;

    fn visit<B: Backend>(self, device: &Device<B>) -> Result<Vec<FftRow>> {
        let s = device.stream();
        let mut rows = Vec::new();
        for case in self.cases {
            let spec = case.spec();
            let len = spec.len();
            let half: usize = spec.half_shape().iter().product();
            let values: Vec<f32> = (0..2 * len).map(|i| ((i * 7919 % 1013) as f32 / 1013.0) - 0.5).collect();
            let timing = if case.real {
                let x = s.upload(&values[..len])?;
                let mut y = s.alloc::<Complex<f32>>(half)?;
                time_runs(&s, &self.sampling, |_| rfft(&s, &x, &mut y, spec.clone(), FftNorm::Backward))?
            } else {
                let c: Vec<Complex<f32>> = values.chunks_exact(2).map(|p| Complex::new(p[0], p[1])).collect();
                let x = s.upload(&c)?;
                let mut y = s.alloc::<Complex<f32>>(len)?;
                time_runs(&s, &self.sampling, |_| fft(&s, &x, &mut y, spec.clone(), FftNorm::Backward))?
            };
            rows.push(row(B::KIND.name(), case, timing.median_ms, timing.min_ms, timing.sm_clock_mhz));
        }
        Ok(rows)
    }
}

fn row(who: &str, case: &FftCase, ms: f64, min_ms: f64, sm_clock_mhz: Option<u32>) -> FftRow {
    FftRow {
        who: who.to_string(),
        case: case.name.clone(),
        ms,
        min_ms,
        gflop_per_s: case.flops() / ms / 1e6,
        gb_per_s: case.bytes() / ms / 1e6,
        sm_clock_mhz,
    }
}

/// The whole report.
#[derive(Debug, Serialize)]
struct Report {
    when: String,
    command: String,
    devices: Vec<String>,
    cases: Vec<FftCase>,
    rows: Vec<FftRow>,
    peers_absent: Vec<String>,
}

/// Run the FFT bench on `backends` (every one found when empty), print the
/// table and write the JSON report to `json` where given.
pub fn run(
    backends: &[BackendKind],
    runs: usize,
    sample_ms: f64,
    warmup_ms: f64,
    json: Option<&PathBuf>,
) -> kiln::Result<ExitCode> {
    let cases = cases();
    let opened = open_devices(backends);
    let mut rows = Vec::new();
    let mut devices = Vec::new();
    for (kind, device) in &opened {
        devices.push(format!("{kind}: {}", device.name()));
        // The CPU's large transforms take up to a second each: three samples, as the CPU peers'.
        let runs = if *kind == BackendKind::Cpu { runs.min(3) } else { runs };
        let sampling = Sampling { warmup: 2, warmup_ms, runs, sample_ms };
        rows.extend(device.visit(Visitor { cases: &cases, sampling })?);
    }
    let mut absent = Vec::new();
    let cpu = opened.iter().any(|(k, _)| *k == BackendKind::Cpu);
    let peer_sampling = PeerSampling { runs, sample_ms, warmup_ms, cpu };
    match run_peers("fft_peer", PEER_SCRIPT, &serde_json::to_string(&cases).unwrap_or_default(), peer_sampling) {
        Ok((found, missing)) => {
            absent = missing;
            for p in found {
                if let Some(case) = cases.iter().find(|c| c.name == p.case) {
                    rows.push(row(&p.peer, case, p.ms, p.min_ms, None));
                }
            }
        }
        Err(e) => absent.push(format!("peers: {e}")),
    }
    print!("{}", table(&cases, &rows));
    for a in &absent {
        println!("peer absent: {a}");
    }
    if let Some(path) = json {
        let report = Report {
            when: utc_now(),
            command: std::env::args().collect::<Vec<_>>().join(" "),
            devices,
            cases,
            rows,
            peers_absent: absent,
        };
        write_json(path, &report, "bench --fft")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The table: per case, each backend's and peer's time and rates, and
/// each kiln row's time against the peers of its kind.
fn table(cases: &[FftCase], rows: &[FftRow]) -> String {
    let mut out = format!(
        "{:<24} {:<24} {:>10} {:>10} {:>9} {:>8}  {}\n",
        "case", "who", "ms", "GFLOP/s", "GB/s", "MHz", "vs peers (peer time / kiln time)"
    );
    for case in cases {
        let of_case: Vec<(&str, f64)> =
            rows.iter().filter(|r| r.case == case.name).map(|r| (r.who.as_str(), r.ms)).collect();
        for r in rows.iter().filter(|r| r.case == case.name) {
            let versus = versus(&r.who, r.ms, &of_case, &["cupy", "torch"], &["numpy", "scipy"]);
            let mhz = r.sm_clock_mhz.map(|m| m.to_string()).unwrap_or_default();
            out += &format!(
                "{:<24} {:<24} {:>10.4} {:>10.1} {:>9.1} {:>8}  {}\n",
                case.name, r.who, r.ms, r.gflop_per_s, r.gb_per_s, mhz, versus
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_count_flops_and_bytes_as_documented() {
        let c = FftCase::new(&[1 << 14, 1 << 10], &[1], false);
        assert_eq!(c.name, "c2c_1d_1024x16384");
        assert_eq!(c.flops(), 5.0 * 1024.0 * 10.0 * 16384.0);
        assert_eq!(c.bytes(), (2 * (1 << 24) * 8) as f64);
        let r = FftCase::new(&[4096, 4096], &[0, 1], true);
        assert_eq!(r.name, "r2c_2d_4096x4096x1");
        assert_eq!(r.bytes(), (4096 * 4096 * 4 + 4096 * 2049 * 8) as f64);
        assert_eq!(cases().len(), 8);
    }
}
