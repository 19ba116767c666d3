//! The peers run as programs beside kiln: CUB's device algorithms and
//! cuRAND (a C++ program built with nvcc), CuPy and PyCUDA beside the CUDA
//! rows, NumPy beside the CPU rows. Their sources are kept in
//! `benches/peers/` and built into `kiln bench`, which runs them on its own
//! machine with the cases, sizes and sampling of its rows and merges their
//! JSON into the table.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

use kiln_core::BackendKind;
use serde::Deserialize;

use crate::options::RunOptions;
use crate::timing::Timer;

/// A peer's measurement of one case.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PeerRow {
    /// Pattern name, as kiln names it.
    pub pattern: String,
    /// Element type.
    pub dtype: String,
    /// Elements per array.
    pub size: usize,
    /// Median time, ms.
    pub median_ms: f64,
    /// Fastest time, ms.
    pub min_ms: f64,
    /// How it was timed, where the peer says.
    #[serde(default)]
    pub timer: Option<Timer>,
    /// What the peer called, where it says ("cub::DeviceRadixSort::SortKeys").
    #[serde(default)]
    pub calls: Option<String>,
}

#[derive(Deserialize)]
struct PeerFile {
    version: String,
    rows: Vec<PeerRow>,
}

/// A peer's results, or why it has none.
#[derive(Debug, Clone)]
pub struct Peer {
    /// Its name ("cupy").
    pub name: String,
    /// Its version, or why it is absent.
    pub status: Result<String, String>,
    rows: HashMap<(String, String, usize), PeerRow>,
    refused: HashMap<(String, String, usize), String>,
}

impl Peer {
    /// A peer that did not run, with the reason.
    pub fn absent(name: &str, reason: impl Into<String>) -> Self {
        Peer { name: name.to_string(), status: Err(reason.into()), rows: HashMap::new(), refused: HashMap::new() }
    }

    /// A peer with the given results (for peers measured in-process, such as CubeCL).
    pub fn measured(name: &str, version: &str, rows: Vec<PeerRow>) -> Self {
        let rows = rows.into_iter().map(|r| ((r.pattern.clone(), r.dtype.clone(), r.size), r)).collect();
        Peer { name: name.to_string(), status: Ok(version.to_string()), rows, refused: HashMap::new() }
    }

    /// Record why the peer has no result for a case it has (its result
    /// was wrong, or it failed), so the case reads absent with the reason
    /// rather than as one the peer lacks.
    pub fn refuse(&mut self, pattern: &str, dtype: &str, size: usize, reason: impl Into<String>) {
        self.rows.remove(&(pattern.to_string(), dtype.to_string(), size));
        self.refused.insert((pattern.to_string(), dtype.to_string(), size), reason.into());
    }

    /// Why the peer has no result for one case, if it was refused.
    pub fn refusal(&self, pattern: &str, dtype: &str, size: usize) -> Option<&str> {
        self.refused.get(&(pattern.to_string(), dtype.to_string(), size)).map(String::as_str)
    }

    /// Its result for one case.
    pub fn get(&self, pattern: &str, dtype: &str, size: usize) -> Option<&PeerRow> {
        self.rows.get(&(pattern.to_string(), dtype.to_string(), size))
    }
}

/// The CuPy script: plain CuPy, and with `--fuse` its array cases as `cupy.fuse` kernels.
const CUPY: &str = include_str!("../peers/cupy_bench.py");

/// How a peer runs.
#[derive(Clone, Copy)]
enum Program {
    /// A Python script, run with `python3` (or `KILN_PYTHON`).
    Python(&'static str),
    /// A CUDA C++ program, built with `nvcc` (or `KILN_NVCC`) against CUB
    /// and cuRAND, then run.
    Cuda(&'static str),
}

/// The peers: name, program (built into the binary so `kiln bench` needs
/// no checkout), its own arguments, and the backend whose rows it is
/// compared with.
const PEERS: [(&str, Program, &[&str], BackendKind); 5] = [
    ("cub", Program::Cuda(include_str!("../peers/cub_bench.cu")), &[], BackendKind::Cuda),
    ("cupy", Program::Python(CUPY), &[], BackendKind::Cuda),
    ("cupy.fuse", Program::Python(CUPY), &["--fuse"], BackendKind::Cuda),
    ("pycuda", Program::Python(include_str!("../peers/pycuda_bench.py")), &[], BackendKind::Cuda),
    ("numpy", Program::Python(include_str!("../peers/numpy_bench.py")), &[], BackendKind::Cpu),
];

/// Names of the peers of `backend`'s rows.
pub fn peer_names(backend: BackendKind) -> Vec<&'static str> {
    PEERS.iter().filter(|s| s.3 == backend).map(|s| s.0).collect()
}

/// Run every peer of `backend`'s rows on `patterns` x `sizes` (one dtype),
/// each as a separate process, sampled as kiln's rows are (`opts`: timed
/// samples, warm-up busy time, least work per sample). A peer that cannot
/// run here (no interpreter, no CuPy, no nvcc, no GPU) is absent with the
/// reason.
pub fn run_peers(
    backend: BackendKind,
    patterns: &[String],
    sizes: &[usize],
    dtype: &str,
    opts: &RunOptions,
) -> Vec<Peer> {
    let python = std::env::var("KILN_PYTHON").unwrap_or_else(|_| "python3".into());
    let nvcc = std::env::var("KILN_NVCC").unwrap_or_else(|_| "nvcc".into());
    let job = Job { python: &python, nvcc: &nvcc, patterns, sizes, dtype, opts };
    peers_with(backend, &job)
}

/// What each peer is run with.
struct Job<'a> {
    /// The Python interpreter.
    python: &'a str,
    /// The CUDA compiler driver.
    nvcc: &'a str,
    patterns: &'a [String],
    sizes: &'a [usize],
    dtype: &'a str,
    opts: &'a RunOptions,
}

/// [`run_peers`] with the interpreter and compiler given.
fn peers_with(backend: BackendKind, job: &Job) -> Vec<Peer> {
    PEERS
        .iter()
        .filter(|s| s.3 == backend)
        .map(|(name, program, extra, _)| run_peer(name, *program, extra, job))
        .collect()
}

/// The last line of a failed process's error output, or `fallback`.
fn last_line(stderr: &[u8], fallback: &str) -> String {
    let err = String::from_utf8_lossy(stderr);
    err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or(fallback).trim().to_string()
}

fn run_peer(name: &str, program: Program, extra: &[&str], job: &Job) -> Peer {
    let dir = std::env::temp_dir().join(format!("kiln-peers-{}-{name}", std::process::id()));
    let peer = match std::fs::create_dir_all(&dir) {
        Ok(()) => run_in(&dir, name, program, extra, job),
        Err(e) => Peer::absent(name, format!("cannot create {}: {e}", dir.display())),
    };
    let _ = std::fs::remove_dir_all(&dir);
    peer
}

/// The program `src` (written at `source`) built with `nvcc`, kept in the
/// user's cache directory (`kiln/peers/`) under a hash of the source and
/// the compiler, so that later runs reuse it (a build takes about a
/// minute); or why it could not be built.
fn built(name: &str, src: &str, source: &std::path::Path, nvcc: &str) -> Result<PathBuf, String> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (src, nvcc).hash(&mut h);
    let kept = dirs::cache_dir().map(|d| d.join("kiln").join("peers"));
    let binary = kept.as_ref().map(|d| d.join(format!("{name}-bench-{:016x}", h.finish())));
    if let Some(b) = binary.as_ref().filter(|b| b.is_file()) {
        return Ok(b.clone());
    }
    // Built beside the source, then moved into place whole, so that a
    // build cut short never leaves a binary to reuse.
    let fresh = source.with_extension("bin");
    let output = Command::new(nvcc)
        .args(["-O3", "-std=c++17", "-arch=native", "-o"])
        .arg(&fresh)
        .arg(source)
        .arg("-lcurand")
        .output()
        .map_err(|e| format!("{nvcc} not runnable: {e}"))?;
    if !output.status.success() {
        return Err(format!("{nvcc} failed: {}", last_line(&output.stderr, "no message")));
    }
    let keep = |to: &PathBuf| {
        std::fs::create_dir_all(to.parent()?).ok()?;
        // Across file systems: a copy beside it first, so that no partial
        // file ever bears the name.
        let part = to.with_extension("part");
        std::fs::rename(&fresh, to)
            .or_else(|_| std::fs::copy(&fresh, &part).and_then(|_| std::fs::rename(&part, to)))
            .ok()
    };
    match binary {
        Some(to) if keep(&to).is_some() => Ok(to),
        // Unkept, the build still serves this run.
        _ => Ok(fresh),
    }
}

/// Build (where it is compiled) and run one peer in `dir`, and read its results.
fn run_in(dir: &std::path::Path, name: &str, program: Program, extra: &[&str], job: &Job) -> Peer {
    let Job { python, nvcc, patterns, sizes, dtype, opts } = *job;
    let (file, src) = match program {
        Program::Python(src) => (format!("{name}_bench.py"), src),
        Program::Cuda(src) => (format!("{name}_bench.cu"), src),
    };
    let source: PathBuf = dir.join(file);
    if let Err(e) = std::fs::write(&source, src) {
        return Peer::absent(name, format!("cannot write {}: {e}", source.display()));
    }
    let mut command = match program {
        Program::Python(_) => {
            let mut c = Command::new(python);
            c.arg(&source);
            c
        }
        Program::Cuda(src) => match built(name, src, &source, nvcc) {
            Ok(binary) => Command::new(binary),
            Err(reason) => return Peer::absent(name, reason),
        },
    };
    let out = dir.join(format!("{name}.json"));
    let sizes: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
    let result = command
        .args(["--cases", &patterns.join(","), "--sizes", &sizes.join(","), "--dtype", dtype])
        .args(["--runs", &opts.runs.to_string(), "--warmup-ms", &opts.warmup_ms.to_string()])
        .args(["--sample-ms", &opts.sample_ms.to_string(), "--json"])
        .arg(&out)
        .args(extra)
        .output();
    match result {
        Err(e) => Peer::absent(name, format!("{} not runnable: {e}", command.get_program().to_string_lossy())),
        Ok(o) if !o.status.success() => Peer::absent(name, last_line(&o.stderr, "exited with an error")),
        Ok(_) => match std::fs::read_to_string(&out)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<PeerFile>(&t).map_err(|e| format!("unreadable results: {e}")))
        {
            Ok(f) => Peer::measured(name, &f.version, f.rows),
            Err(e) => Peer::absent(name, e),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Held by the tests that run the scripts, which share a temporary folder.
    static PYTHON: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn lookup_by_case() {
        let p = Peer::measured(
            "x",
            "1.0",
            vec![PeerRow {
                pattern: "axpy".into(),
                dtype: "f32".into(),
                size: 4,
                median_ms: 2.0,
                min_ms: 1.0,
                timer: None,
                calls: None,
            }],
        );
        assert_eq!(p.get("axpy", "f32", 4).map(|r| r.median_ms), Some(2.0));
        assert!(p.get("axpy", "f32", 8).is_none());
        let mut p = p;
        p.refuse("axpy", "f32", 4, "wrong sum");
        assert!(p.get("axpy", "f32", 4).is_none());
        assert_eq!(p.refusal("axpy", "f32", 4), Some("wrong sum"));
    }

    #[test]
    fn peer_rows_may_name_their_timer_and_call() {
        let f: PeerFile = serde_json::from_str(
            r#"{"version": "1", "rows": [
                {"pattern": "axpy", "dtype": "f32", "size": 4, "median_ms": 2.0, "min_ms": 1.0},
                {"pattern": "reduce_latency", "dtype": "f32", "size": 1024, "median_ms": 0.02, "min_ms": 0.01,
                 "timer": "end-to-end", "calls": "cub::DeviceReduce::Sum"}]}"#,
        )
        .unwrap();
        assert_eq!((f.rows[0].timer, f.rows[0].calls.as_deref()), (None, None));
        assert_eq!(f.rows[1].timer, Some(Timer::EndToEnd));
        assert_eq!(f.rows[1].calls.as_deref(), Some("cub::DeviceReduce::Sum"));
    }

    /// Where NumPy is installed (CI installs it), its script measures the
    /// CPU rows' cases; elsewhere it is absent with the reason.
    #[test]
    fn numpy_measures_the_cpu_cases_where_it_is_installed() {
        let _python = PYTHON.lock().unwrap_or_else(|p| p.into_inner());
        let opts = RunOptions { runs: 2, warmup_ms: 0.0, sample_ms: 0.1, ..Default::default() };
        let cases: Vec<String> = [
            "vector_add",
            "sort_u32",
            "sgemm",
            "array_fused_sum",
            "random_normal",
            "histogram_i32",
            "histogram_f32_skewed",
            "no_such_case",
        ]
        .map(String::from)
        .into();
        let peers = run_peers(BackendKind::Cpu, &cases, &[4096], "f32", &opts);
        assert_eq!(peers.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["numpy"]);
        let has_numpy = Command::new("python3").args(["-c", "import numpy"]).status().is_ok_and(|s| s.success());
        match (&peers[0].status, has_numpy) {
            (Ok(version), true) => {
                assert!(!version.is_empty());
                let measured = [
                    ("vector_add", "f32"),
                    ("sort_u32", "u32"),
                    ("sgemm", "f32"),
                    ("array_fused_sum", "f32"),
                    ("random_normal", "f32"),
                    ("histogram_i32", "i32"),
                    ("histogram_f32_skewed", "f32"),
                ];
                for (case, dtype) in measured {
                    let row = peers[0].get(case, dtype, 4096).unwrap_or_else(|| panic!("no numpy row for {case}"));
                    assert!(row.median_ms > 0.0 && row.min_ms <= row.median_ms, "{row:?}");
                }
                assert!(peers[0].get("no_such_case", "f32", 4096).is_none());
            }
            (Err(reason), false) => assert!(reason.contains("numpy"), "{reason}"),
            (status, has) => panic!("numpy installed: {has}, peer status {status:?}"),
        }
    }

    #[test]
    fn a_missing_interpreter_or_compiler_is_absent_with_its_reason() {
        let _python = PYTHON.lock().unwrap_or_else(|p| p.into_inner());
        let opts = RunOptions { runs: 1, warmup_ms: 0.0, ..Default::default() };
        let job = Job {
            python: "/nonexistent/python3",
            nvcc: "/nonexistent/nvcc",
            patterns: &["axpy".into()],
            sizes: &[16],
            dtype: "f32",
            opts: &opts,
        };
        let peers = peers_with(BackendKind::Cuda, &job);
        assert_eq!(peers.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["cub", "cupy", "cupy.fuse", "pycuda"]);
        for p in peers {
            let reason = p.status.unwrap_err();
            let program = if p.name == "cub" { "/nonexistent/nvcc" } else { "/nonexistent/python3" };
            assert!(reason.contains(program), "{}: {reason}", p.name);
        }
    }
}
