//! `kiln bench --linalg`: kiln's factorisations on every backend found,
//! with cupy.linalg (cuSOLVER) and torch.linalg beside the CUDA rows and
//! numpy.linalg and scipy.linalg (LAPACK) beside the CPU rows, in the same
//! run.
//!
//! Cases: `solve` (one right-hand side), `lu` (`lu_factor`: the
//! factorisation alone), `cholesky`, `qr` (reduced, Q formed) and `eigh`
//! (with vectors) of one matrix of 1024, 4096 and 8192
//! and of a batch of 10^4 matrices of 32, in f32 and f64. Rates are GFLOP/s
//! by LAPACK's counts: `2/3 n^3` for LU (plus `2 n^2` for the solve),
//! `1/3 n^3` for Cholesky, `8/3 n^3` for QR with Q formed (`geqrf` and
//! `orgqr`, `4/3 n^3` each), and `9 n^3` for the symmetric eigensolver
//! with vectors (the usual estimate; every row uses the same count, so the
//! ratios are the times'). The CPU rows stop at 4096 (the 8192 cases take
//! minutes there).

use std::path::PathBuf;
use std::process::ExitCode;

use kiln::typed::kernels::linalg::{cholesky, eigh, lu_factor, qr, solve, MatrixShape, QrMode};
use kiln::BackendKind;
use kiln_benches::{time_runs, utc_now, Sampling};
use kiln_core::{Backend, Device, DeviceVisitor, Result};
use serde::Serialize;

use crate::peer_script::{open_devices, run_peers, versus, write_json, PeerSampling};

/// The peers' script, written beside the report when it runs.
const PEER_SCRIPT: &str = include_str!("../../benches/peers/linalg_peer.py");

/// Whether the CPU rows (kiln's and the peers') time `case`: every case
/// up to 1024, and solve, LU and Cholesky up to 4096 (the larger QR and eigh
/// cases take minutes on the CPU).
fn on_cpu(case: &LinalgCase) -> bool {
    case.n <= 1024 || (case.n <= 4096 && matches!(case.op, "solve" | "lu" | "cholesky"))
}

/// One factorisation the bench times.
#[derive(Debug, Clone, Serialize)]
pub struct LinalgCase {
    /// Its name in the table ("solve_f32_4096x1").
    pub name: String,
    /// "solve", "lu", "cholesky", "qr" or "eigh".
    pub op: &'static str,
    /// Matrices.
    pub batch: usize,
    /// Their order.
    pub n: usize,
    /// "f32" or "f64".
    pub dtype: &'static str,
    /// Whether the CPU rows time it.
    pub cpu: bool,
}

impl LinalgCase {
    fn new(op: &'static str, dtype: &'static str, batch: usize, n: usize) -> Self {
        let mut case = LinalgCase { name: format!("{op}_{dtype}_{n}x{batch}"), op, batch, n, dtype, cpu: false };
        case.cpu = on_cpu(&case);
        case
    }

    /// Floating-point operations by LAPACK's counts.
    fn flops(&self) -> f64 {
        let n = self.n as f64;
        let per = match self.op {
            "solve" => 2.0 / 3.0 * n * n * n + 2.0 * n * n,
            "lu" => 2.0 / 3.0 * n * n * n,
            "cholesky" => n * n * n / 3.0,
            "qr" => 8.0 / 3.0 * n * n * n,
            _ => 9.0 * n * n * n,
        };
        per * self.batch as f64
    }
}

/// The cases, in table order.
pub fn cases() -> Vec<LinalgCase> {
    let mut all = Vec::new();
    for op in ["solve", "lu", "cholesky", "qr", "eigh"] {
        for dtype in ["f32", "f64"] {
            for n in [1024, 4096, 8192] {
                all.push(LinalgCase::new(op, dtype, 1, n));
            }
            all.push(LinalgCase::new(op, dtype, 10_000, 32));
        }
    }
    all
}

/// One timed case on one backend, or its peer.
#[derive(Debug, Clone, Serialize)]
pub struct LinalgRow {
    /// "cuda", "wgpu", "cpu", or the peer's name.
    pub who: String,
    /// The case's name.
    pub case: String,
    /// Median ms per call.
    pub ms: f64,
    /// Fastest ms per call.
    pub min_ms: f64,
    /// GFLOP/s at the median.
    pub gflop_per_s: f64,
    /// The median SM clock while timing, MHz (GPUs whose clock is read).
    pub sm_clock_mhz: Option<u32>,
}

fn row(who: &str, case: &LinalgCase, ms: f64, min_ms: f64, sm_clock_mhz: Option<u32>) -> LinalgRow {
    LinalgRow {
        who: who.to_string(),
        case: case.name.clone(),
        ms,
        min_ms,
        gflop_per_s: case.flops() / ms / 1e6,
        sm_clock_mhz,
    }
}

struct Visitor<'a> {
    cases: &'a [LinalgCase],
    sampling: Sampling,
    notes: &'a mut Vec<String>,
}

/// The case's input matrices (and one right-hand side each), row-major:
/// random, symmetric, or symmetric with `n` added to the diagonal.
fn inputs(case: &LinalgCase) -> (Vec<f64>, Vec<f64>) {
    // splitmix64, its top 53 bits as a value in [-1, 1).
    let mut state = 47u64;
    let mut next = move || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 52) as f64) - 1.0
    };
    let n = case.n;
    let mut a: Vec<f64> = (0..case.batch * n * n).map(|_| next()).collect();
    if matches!(case.op, "cholesky" | "eigh") {
        for m in a.chunks_mut(n * n) {
            for i in 0..n {
                for j in 0..i {
                    m[j * n + i] = m[i * n + j];
                }
                if case.op == "cholesky" {
                    m[i * n + i] += n as f64;
                }
            }
        }
    }
    let b = (0..case.batch * n).map(|_| next()).collect();
    (a, b)
}

impl Visitor<'_> {
    fn time<B: Backend, T: kiln::typed::kernels::linalg::LinalgFloat>(
        &self,
        device: &Device<B>,
        case: &LinalgCase,
    ) -> Result<LinalgRow> {
        let s = device.stream();
        let (a, b) = inputs(case);
        let narrow = |v: &[f64]| v.iter().map(|&x| T::from_f64(x)).collect::<Vec<T>>();
        let (a, b) = (s.upload(&narrow(&a))?, s.upload(&narrow(&b))?);
        let shape = MatrixShape::square(case.batch, case.n);
        let len = case.batch * case.n * case.n;
        let mut out = s.alloc::<T>(len)?;
        let mut vec = s.alloc::<T>(case.batch * case.n)?;
        let mut sampling = self.sampling;
        if case.n >= 4096 {
            sampling.runs = sampling.runs.min(5);
        }
        let t = match case.op {
            "solve" => time_runs(&s, &sampling, |_| solve(&s, &a, &b, &mut vec, shape, 1))?,
            "lu" => {
                let mut pivots = s.alloc::<i32>(case.batch * case.n)?;
                time_runs(&s, &sampling, |_| lu_factor(&s, &a, &mut out, &mut pivots, shape))?
            }
            "cholesky" => time_runs(&s, &sampling, |_| cholesky(&s, &a, &mut out, shape))?,
            "qr" => {
                let mut r = s.alloc::<T>(len)?;
                time_runs(&s, &sampling, |_| qr(&s, &a, &mut out, &mut r, shape, QrMode::Reduced))?
            }
            _ => time_runs(&s, &sampling, |_| eigh(&s, &a, &mut vec, &mut out, shape))?,
        };
        Ok(row(B::KIND.name(), case, t.median_ms, t.min_ms, t.sm_clock_mhz))
    }
}

impl DeviceVisitor for Visitor<'_> {
    type Output = Result<Vec<LinalgRow>>;

    fn visit<B: Backend>(self, device: &Device<B>) -> Result<Vec<LinalgRow>> {
        let mut rows = Vec::new();
        for case in self.cases {
            if B::KIND == kiln_core::BackendKind::Cpu && !case.cpu {
                continue;
            }
            let timed =
                if case.dtype == "f64" { self.time::<B, f64>(device, case) } else { self.time::<B, f32>(device, case) };
            match timed {
                Ok(r) => rows.push(r),
                Err(e @ (kiln_core::Error::Unsupported { .. } | kiln_core::Error::OutOfMemory { .. })) => {
                    self.notes.push(format!("{} {}: {e}", B::KIND.name(), case.name));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(rows)
    }
}

/// The whole report.
#[derive(Debug, Serialize)]
struct Report {
    when: String,
    command: String,
    devices: Vec<String>,
    cases: Vec<LinalgCase>,
    rows: Vec<LinalgRow>,
    notes: Vec<String>,
    peers_absent: Vec<String>,
}

/// Run the linear-algebra bench on `backends` (every one found when
/// empty), on the cases of the operations `ops` ("solve", ...) and of
/// matrices of `sizes` (all when empty), print the table and write the
/// JSON report to `json` where given.
pub fn run(
    backends: &[BackendKind],
    ops: &[String],
    sizes: &[usize],
    runs: usize,
    sample_ms: f64,
    warmup_ms: f64,
    json: Option<&PathBuf>,
) -> kiln::Result<ExitCode> {
    let cases: Vec<LinalgCase> = cases()
        .into_iter()
        .filter(|c| sizes.is_empty() || sizes.contains(&c.n))
        .filter(|c| ops.is_empty() || ops.iter().any(|o| o == c.op))
        .collect();
    let opened = open_devices(backends);
    let mut rows = Vec::new();
    let mut devices = Vec::new();
    let mut notes = Vec::new();
    for (kind, device) in &opened {
        devices.push(format!("{kind}: {}", device.name()));
        let runs = if *kind == BackendKind::Cpu { runs.min(3) } else { runs };
        let sampling = Sampling { warmup: 1, warmup_ms, runs, sample_ms };
        rows.extend(device.visit(Visitor { cases: &cases, sampling, notes: &mut notes })?);
    }
    let mut absent = Vec::new();
    let cpu = opened.iter().any(|(k, _)| *k == BackendKind::Cpu);
    let peer_sampling = PeerSampling { runs, sample_ms, warmup_ms, cpu };
    match run_peers("linalg_peer", PEER_SCRIPT, &serde_json::to_string(&cases).unwrap_or_default(), peer_sampling) {
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
    for n in &notes {
        println!("note: {n}");
    }
    for a in &absent {
        println!("peer absent: {a}");
    }
    if let Some(path) = json {
        let command = std::env::args().collect::<Vec<_>>().join(" ");
        let report = Report { when: utc_now(), command, devices, cases, rows, notes, peers_absent: absent };
        write_json(path, &report, "bench --linalg")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// The table: per case, each backend's and peer's time and rate, and each
/// kiln row's time against the peers of its kind.
fn table(cases: &[LinalgCase], rows: &[LinalgRow]) -> String {
    let mut out = format!(
        "{:<24} {:<16} {:>11} {:>10} {:>8}  {}\n",
        "case", "who", "ms", "GFLOP/s", "MHz", "vs peers (peer time / kiln time)"
    );
    for case in cases {
        let of_case: Vec<(&str, f64)> =
            rows.iter().filter(|r| r.case == case.name).map(|r| (r.who.as_str(), r.ms)).collect();
        for r in rows.iter().filter(|r| r.case == case.name) {
            let versus = versus(&r.who, r.ms, &of_case, &["cupy", "torch"], &["numpy", "scipy"]);
            let mhz = r.sm_clock_mhz.map(|m| m.to_string()).unwrap_or_default();
            out += &format!(
                "{:<24} {:<16} {:>11.4} {:>10.1} {:>8}  {}\n",
                case.name, r.who, r.ms, r.gflop_per_s, mhz, versus
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_count_flops_as_documented() {
        let c = LinalgCase::new("cholesky", "f64", 1, 3);
        assert_eq!(c.name, "cholesky_f64_3x1");
        assert_eq!(c.flops(), 9.0);
        assert_eq!(LinalgCase::new("solve", "f32", 2, 3).flops(), 2.0 * (18.0 + 18.0));
        assert_eq!(LinalgCase::new("lu", "f32", 1, 3).flops(), 18.0);
        assert_eq!(cases().len(), 40);
        let (a, _) = inputs(&LinalgCase::new("eigh", "f32", 2, 5));
        assert!((0..5).all(|i| (0..5).all(|j| a[25 + i * 5 + j] == a[25 + j * 5 + i])), "symmetric");
    }
}
