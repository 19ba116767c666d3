//! Running a Python peer script of the dedicated benches (`--fft`,
//! `--linalg`): the script and `peer_common.py` written to a fresh
//! directory, run with the cases as JSON and kiln's sampling arguments, and
//! its times read back.

use std::path::PathBuf;
use std::process::Command;

use kiln::BackendKind;

/// The sampling every Python peer shares, which the scripts import.
const PEER_COMMON: &str = include_str!("../../benches/peers/peer_common.py");

/// A peer's time of one case.
#[derive(Debug, serde::Deserialize)]
pub struct PeerTime {
    /// The peer's name ("cupy.fft").
    pub peer: String,
    /// The case's name.
    #[serde(default)]
    pub case: String,
    /// Median ms per call.
    #[serde(default)]
    pub ms: f64,
    /// Fastest ms per call.
    #[serde(default)]
    pub min_ms: f64,
    /// Why the peer could not run, when it could not.
    #[serde(default)]
    pub absent: Option<String>,
}

/// Kiln's sampling, as the scripts take it.
#[derive(Debug, Clone, Copy)]
pub struct PeerSampling {
    pub runs: usize,
    pub sample_ms: f64,
    pub warmup_ms: f64,
    /// Time the CPU peers too.
    pub cpu: bool,
}

/// Run script `name` (its text `script`) on `cases` (JSON); the times, and
/// the peers that could not run.
pub fn run_peers(
    name: &str,
    script: &str,
    cases: &str,
    sampling: PeerSampling,
) -> std::io::Result<(Vec<PeerTime>, Vec<String>)> {
    let dir = std::env::temp_dir().join(format!("kiln-peers-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let path = dir.join(format!("{name}.py"));
    let out = dir.join(format!("{name}.json"));
    std::fs::write(&path, script)?;
    std::fs::write(dir.join("peer_common.py"), PEER_COMMON)?;
    let python = std::env::var("KILN_PYTHON").unwrap_or_else(|_| "python3".into());
    let mut cmd = Command::new(python);
    cmd.arg(&path).args(["--cases", cases, "--runs", &sampling.runs.to_string()]);
    cmd.args(["--sample-ms", &sampling.sample_ms.to_string(), "--warmup-ms", &sampling.warmup_ms.to_string()]);
    cmd.arg("--json").arg(&out);
    if sampling.cpu {
        cmd.arg("--cpu");
    }
    let status = cmd.status()?;
    if !status.success() {
        return Ok((Vec::new(), vec![format!("the peers' script exited with {status}")]));
    }
    let times: Vec<PeerTime> = serde_json::from_slice(&std::fs::read(&out)?).unwrap_or_default();
    let (absent, found): (Vec<_>, Vec<_>) = times.into_iter().partition(|t| t.absent.is_some());
    Ok((found, absent.into_iter().map(|t| format!("{}: {}", t.peer, t.absent.unwrap_or_default())).collect()))
}

/// Write `report` as pretty JSON to `path`.
pub fn write_json(path: &PathBuf, report: &impl serde::Serialize, what: &str) -> kiln::Result<()> {
    let text = serde_json::to_string_pretty(report).map_err(|e| kiln::Error::invalid(what, e.to_string()))?;
    std::fs::write(path, text).map_err(|e| kiln::Error::invalid(what, format!("{}: {e}", path.display())))
}

/// The "vs peers" cell of a kiln row of backend `who` taking `ms`, among
/// `rows` (who and ms of every row of the same case): each peer whose name
/// starts with one of `gpu_peers` (for CUDA) or `cpu_peers` (for the CPU)
/// as `peer time / kiln time`, and wgpu against CUDA.
pub fn versus(who: &str, ms: f64, rows: &[(&str, f64)], gpu_peers: &[&str], cpu_peers: &[&str]) -> String {
    let of = |names: &[&str]| -> String {
        rows.iter()
            .filter(|(p, _)| names.iter().any(|n| p.starts_with(n)))
            .map(|(p, t)| format!("{p} {:.2}", t / ms))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match who {
        "cuda" => of(gpu_peers),
        "cpu" => of(cpu_peers),
        "wgpu" => {
            rows.iter().find(|(p, _)| *p == "cuda").map(|(_, t)| format!("cuda {:.2}", t / ms)).unwrap_or_default()
        }
        _ => String::new(),
    }
}

/// The devices of `backends` (CUDA, wgpu and the CPU when empty) that
/// open, each with its backend; those that do not are printed as absent.
pub fn open_devices(backends: &[BackendKind]) -> Vec<(BackendKind, kiln::Device)> {
    let kinds = if backends.is_empty() {
        vec![BackendKind::Cuda, BackendKind::Wgpu, BackendKind::Cpu]
    } else {
        backends.to_vec()
    };
    kinds
        .into_iter()
        .filter_map(|kind| match kiln::Device::open(kind, 0) {
            Ok(d) => Some((kind, d)),
            Err(e) => {
                println!("{kind}: absent ({e})");
                None
            }
        })
        .collect()
}
