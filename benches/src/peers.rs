//! The peers run as programs beside kiln: CUB's device algorithms and
//! cuRAND (a C++ program built with nvcc), CuPy, PyCUDA and PyTorch beside
//! the CUDA rows, NumPy beside the CPU rows. Their sources are kept in
//! `benches/peers/` and built into `kiln bench`, which runs them on its own
//! machine with the cases, sizes and sampling of its rows and merges their
//! JSON into the table.
//!
//! A peer is given `--cases` (pattern names) and `--sizes` (the sweep);
//! the `matmul_*` products, whose sizes are their own
//! ([`Pattern::sizes_in`]), are given as `name@size` entries, one per size,
//! and only to the peers that measure them. CuPy reads `CUPY_TF32` once
//! per process, at its first f32 product, so its TF32 rows run in a second
//! process started with `CUPY_TF32=1`, every other row in one with
//! `CUPY_TF32=0`, and the two are merged into one peer.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

use kiln_core::{BackendKind, Precision};
use serde::Deserialize;

use crate::case::Pattern;
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
/// What the Python peers share (their arguments, kiln's sampling), written beside each.
const PEER_COMMON: &str = include_str!("../peers/peer_common.py");

/// How a peer runs.
#[derive(Clone, Copy)]
enum Program {
    /// A Python script, run with `python3` (or `KILN_PYTHON`).
    Python(&'static str),
    /// A CUDA C++ program, built with `nvcc` (or `KILN_NVCC`) against CUB
    /// and cuRAND, then run.
    Cuda(&'static str),
}

/// A peer: its program (built into the binary, so `kiln bench` needs no
/// checkout), how it is run, and the backend whose rows it is compared with.
struct PeerProgram {
    /// Its name, the column's ("cupy").
    name: &'static str,
    program: Program,
    /// Its own arguments.
    args: &'static [&'static str],
    /// The backend whose rows it is compared with.
    backend: BackendKind,
    /// Whether it measures the `matmul_*` products (the others are not given them).
    products: bool,
    /// The environment variable that, set to "1", lets the peer's f32
    /// products use TF32 (CuPy's `CUPY_TF32`), read once per process: its
    /// TF32 rows run in a second process with it "1", the others with it "0".
    tf32_env: Option<&'static str>,
}

/// The PyTorch script: `torch.matmul` on the products.
const TORCH: &str = include_str!("../peers/torch_bench.py");

/// Every peer.
const PEERS: [PeerProgram; 6] = [
    PeerProgram {
        name: "cub",
        program: Program::Cuda(include_str!("../peers/cub_bench.cu")),
        args: &[],
        backend: BackendKind::Cuda,
        products: false,
        tf32_env: None,
    },
    PeerProgram {
        name: "cupy",
        program: Program::Python(CUPY),
        args: &[],
        backend: BackendKind::Cuda,
        products: true,
        tf32_env: Some("CUPY_TF32"),
    },
    PeerProgram {
        name: "cupy.fuse",
        program: Program::Python(CUPY),
        args: &["--fuse"],
        backend: BackendKind::Cuda,
        products: false,
        tf32_env: None,
    },
    PeerProgram {
        name: "pycuda",
        program: Program::Python(include_str!("../peers/pycuda_bench.py")),
        args: &[],
        backend: BackendKind::Cuda,
        products: false,
        tf32_env: None,
    },
    PeerProgram {
        name: "torch",
        program: Program::Python(TORCH),
        args: &[],
        backend: BackendKind::Cuda,
        products: true,
        tf32_env: None,
    },
    PeerProgram {
        name: "numpy",
        program: Program::Python(include_str!("../peers/numpy_bench.py")),
        args: &[],
        backend: BackendKind::Cpu,
        products: true,
        tf32_env: None,
    },
];

/// Names of the peers of `backend`'s rows.
pub fn peer_names(backend: BackendKind) -> Vec<&'static str> {
    PEERS.iter().filter(|p| p.backend == backend).map(|p| p.name).collect()
}

/// The `--cases` entries of a run of `patterns` over `sweep`: each
/// pattern's name, except the `matmul_*` products, which run at their own
/// sizes ([`Pattern::sizes_in`]): one `name@size` entry per size where the
/// peer measures products (`products`), none where it does not.
fn case_entries(patterns: &[String], sweep: &[usize], products: bool) -> Vec<String> {
    let mut entries = Vec::new();
    for name in patterns {
        match Pattern::from_name(name) {
            Some(p @ Pattern::Matmul(_)) if products => {
                entries.extend(p.sizes_in(sweep).into_iter().map(|n| format!("{name}@{n}")));
            }
            Some(Pattern::Matmul(_)) => {}
            _ => entries.push(name.clone()),
        }
    }
    entries
}

/// The pattern, dtype and size of a `name@size` entry, as the peer's row
/// for it is keyed; `None` for a plain name.
fn entry_case(entry: &str) -> Option<(String, String, usize)> {
    let (name, size) = entry.split_once('@')?;
    let dtype = Pattern::from_name(name)?.fixed_dtype()?;
    Some((name.to_string(), dtype.to_string(), size.parse().ok()?))
}

/// Whether an entry is a product whose mode allows TF32.
fn is_tf32(entry: &str) -> bool {
    let name = entry.split('@').next().unwrap_or(entry);
    matches!(Pattern::from_name(name), Some(Pattern::Matmul(m)) if m.precision == Precision::Tf32)
}

/// One process of a peer: the cases it is given and the environment
/// variables it is started with.
#[derive(Debug, Clone, Default, PartialEq)]
struct Pass {
    cases: Vec<String>,
    env: Vec<(&'static str, &'static str)>,
}

/// The processes a peer runs `cases` in: one, or for a peer with a TF32
/// switch ([`PeerProgram::tf32_env`]) the cases that allow TF32 in a second
/// one with the switch on, the others with it off (whatever the caller's
/// environment says).
fn passes(tf32_env: Option<&'static str>, cases: Vec<String>) -> Vec<Pass> {
    let Some(var) = tf32_env else { return vec![Pass { cases, env: Vec::new() }] };
    let (tf32, rest): (Vec<String>, Vec<String>) = cases.into_iter().partition(|c| is_tf32(c));
    let mut out = vec![Pass { cases: rest, env: vec![(var, "0")] }];
    if !tf32.is_empty() {
        out.push(Pass { cases: tf32, env: vec![(var, "1")] });
    }
    out
}

/// `first` with the rows of a later pass (`later`, run on `pass`): its
/// rows where it ran, else each of its cases refused with the reason.
fn merge(mut first: Peer, pass: &Pass, later: Peer) -> Peer {
    match later.status {
        Ok(_) => first.rows.extend(later.rows),
        Err(reason) => {
            let env: Vec<String> = pass.env.iter().map(|(k, v)| format!("{k}={v}")).collect();
            for (pattern, dtype, size) in pass.cases.iter().filter_map(|c| entry_case(c)) {
                first.refuse(&pattern, &dtype, size, format!("with {}: {reason}", env.join(" ")));
            }
        }
    }
    first.refused.extend(later.refused);
    first
}

/// Run every peer of `backend`'s rows on `patterns` x `sizes` (one dtype;
/// the `matmul_*` products at their own sizes of that sweep), each as a
/// separate process, sampled as kiln's rows are (`opts`: timed samples,
/// warm-up busy time, least work per sample). A peer that cannot run here
/// (no interpreter, no CuPy, no nvcc, no GPU) is absent with the reason.
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
    PEERS.iter().filter(|p| p.backend == backend).map(|p| run_peer(p, job)).collect()
}

/// The last line of a failed process's error output, or `fallback`.
fn last_line(stderr: &[u8], fallback: &str) -> String {
    let err = String::from_utf8_lossy(stderr);
    err.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or(fallback).trim().to_string()
}

/// Run one peer: each of its passes in turn, merged; the later passes only
/// where the first ran.
fn run_peer(peer: &PeerProgram, job: &Job) -> Peer {
    let name = peer.name;
    let dir = std::env::temp_dir().join(format!("kiln-peers-{}-{name}", std::process::id()));
    let result = match std::fs::create_dir_all(&dir) {
        Ok(()) => {
            let cases = case_entries(job.patterns, job.sizes, peer.products);
            let mut passes = passes(peer.tf32_env, cases).into_iter().enumerate();
            let first = passes.next().map(|(_, p)| p).unwrap_or_default();
            let mut result = run_in(&dir, peer, &first, 0, job);
            for (i, pass) in passes {
                if result.status.is_err() {
                    break;
                }
                let later = run_in(&dir, peer, &pass, i, job);
                result = merge(result, &pass, later);
            }
            result
        }
        Err(e) => Peer::absent(name, format!("cannot create {}: {e}", dir.display())),
    };
    let _ = std::fs::remove_dir_all(&dir);
    result
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

/// Build (where it is compiled) and run pass `index` of one peer in `dir`,
/// and read its results.
fn run_in(dir: &std::path::Path, peer: &PeerProgram, pass: &Pass, index: usize, job: &Job) -> Peer {
    let Job { python, nvcc, sizes, dtype, opts, .. } = *job;
    let (name, program) = (peer.name, peer.program);
    let (file, src) = match program {
        Program::Python(src) => (format!("{name}_bench.py"), src),
        Program::Cuda(src) => (format!("{name}_bench.cu"), src),
    };
    let source: PathBuf = dir.join(file);
    // A Python peer imports what the peers share from beside it.
    let common = matches!(program, Program::Python(_)).then(|| (dir.join("peer_common.py"), PEER_COMMON));
    for (path, text) in [(source.clone(), src)].into_iter().chain(common) {
        if let Err(e) = std::fs::write(&path, text) {
            return Peer::absent(name, format!("cannot write {}: {e}", path.display()));
        }
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
    let out = dir.join(format!("{name}-{index}.json"));
    let sizes: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
    let result = command
        .args(["--cases", &pass.cases.join(","), "--sizes", &sizes.join(","), "--dtype", dtype])
        .args(["--runs", &opts.runs.to_string(), "--warmup-ms", &opts.warmup_ms.to_string()])
        .args(["--sample-ms", &opts.sample_ms.to_string(), "--json"])
        .arg(&out)
        .args(peer.args)
        .envs(pass.env.iter().copied())
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
            "matmul_f32",
            "matmul_f32_tf32",
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
                    // At its own size, here the one asked for.
                    ("matmul_f32", "f32"),
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
                // NumPy has no TF32 mode: no row.
                assert!(peers[0].get("matmul_f32_tf32", "f32", 4096).is_none());
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
        assert_eq!(
            peers.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(),
            ["cub", "cupy", "cupy.fuse", "pycuda", "torch"]
        );
        for p in peers {
            let reason = p.status.unwrap_err();
            let program = if p.name == "cub" { "/nonexistent/nvcc" } else { "/nonexistent/python3" };
            assert!(reason.contains(program), "{}: {reason}", p.name);
        }
    }

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// The products go to the peers that measure them as `name@size`, at
    /// their own sizes of the sweep; the other cases as plain names.
    #[test]
    fn products_are_given_at_their_own_sizes() {
        let patterns = names(&["vector_add", "sgemm", "matmul_f32_tf32", "matmul_batch_f16"]);
        assert_eq!(
            case_entries(&patterns, &crate::quick_sizes(), true),
            ["vector_add", "sgemm", "matmul_f32_tf32@16777216", "matmul_batch_f16@67108864"]
        );
        assert_eq!(
            case_entries(&patterns, &crate::sweep_sizes(), true),
            [
                "vector_add",
                "sgemm",
                "matmul_f32_tf32@1048576",
                "matmul_f32_tf32@16777216",
                "matmul_f32_tf32@67108864",
                "matmul_batch_f16@67108864"
            ]
        );
        assert_eq!(case_entries(&patterns, &crate::quick_sizes(), false), ["vector_add", "sgemm"]);
        assert_eq!(entry_case("matmul_batch_f16@67108864"), Some(("matmul_batch_f16".into(), "f16".into(), 1 << 26)));
        assert_eq!((entry_case("sgemm"), entry_case("nothing@4"), entry_case("matmul_f16@x")), (None, None, None));
        let products: Vec<&str> = PEERS.iter().filter(|p| p.products).map(|p| p.name).collect();
        assert_eq!(products, ["cupy", "torch", "numpy"]);
    }

    /// CuPy's TF32 rows run in a process of their own with `CUPY_TF32=1`,
    /// the others with `CUPY_TF32=0`; a peer with no such switch runs all
    /// its cases in one process, its environment untouched.
    #[test]
    fn tf32_rows_run_apart_where_the_peer_reads_a_switch_once() {
        let cases =
            names(&["sgemm", "matmul_f32@16777216", "matmul_f32_tf32@16777216", "matmul_batch_f32_tf32@67108864"]);
        let split = passes(Some("CUPY_TF32"), cases.clone());
        assert_eq!(
            split,
            [
                Pass { cases: names(&["sgemm", "matmul_f32@16777216"]), env: vec![("CUPY_TF32", "0")] },
                Pass {
                    cases: names(&["matmul_f32_tf32@16777216", "matmul_batch_f32_tf32@67108864"]),
                    env: vec![("CUPY_TF32", "1")]
                },
            ]
        );
        assert_eq!(passes(Some("CUPY_TF32"), names(&["sgemm"])).len(), 1, "no TF32 case: one process");
        assert_eq!(passes(None, cases.clone()), [Pass { cases, env: Vec::new() }]);
    }

    /// A later pass that fails leaves its cases refused, with the reason
    /// and the environment it ran with; one that runs adds its rows.
    #[test]
    fn passes_merge_into_one_peer() {
        let row = |pattern: &str, size| PeerRow {
            pattern: pattern.into(),
            dtype: "f32".into(),
            size,
            median_ms: 1.0,
            min_ms: 1.0,
            timer: None,
            calls: None,
        };
        let first = Peer::measured("cupy", "14", vec![row("sgemm", 4)]);
        let pass = Pass { cases: names(&["matmul_f32_tf32@16777216"]), env: vec![("CUPY_TF32", "1")] };
        let merged = merge(first.clone(), &pass, Peer::absent("cupy", "cupy unavailable: no TF32"));
        assert!(merged.get("sgemm", "f32", 4).is_some());
        assert_eq!(
            merged.refusal("matmul_f32_tf32", "f32", 1 << 24),
            Some("with CUPY_TF32=1: cupy unavailable: no TF32")
        );
        let later = Peer::measured("cupy", "14", vec![row("matmul_f32_tf32", 1 << 24)]);
        let merged = merge(first, &pass, later);
        assert!(merged.get("matmul_f32_tf32", "f32", 1 << 24).is_some() && merged.get("sgemm", "f32", 4).is_some());
    }

    /// The whole path, with a stand-in for Python that reports the
    /// environment each of its processes was started with: CuPy's TF32 row
    /// ran with `CUPY_TF32=1`, its exact row with `CUPY_TF32=0`, both in one
    /// peer; the peers that measure no products were not given them.
    #[cfg(unix)]
    #[test]
    fn each_pass_runs_with_its_environment() {
        use std::os::unix::fs::PermissionsExt;
        let _python = PYTHON.lock().unwrap_or_else(|p| p.into_inner());
        let dir = std::env::temp_dir().join(format!("kiln-fake-python-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fake = dir.join("python3");
        // Called as `python3 SCRIPT --cases ... --json OUT ...`: one row per `name@size` case.
        let script = r#"#!/bin/sh
cases=""; out=""
while [ $# -gt 0 ]; do
  case "$1" in --cases) cases="$2"; shift;; --json) out="$2"; shift;; esac
  shift
done
rows=""; sep=""
IFS=,
for c in $cases; do
  case "$c" in *@*)
    row=$(printf '{"pattern": "%s", "dtype": "f32", "size": %s, "median_ms": 1.0, "min_ms": 1.0, "calls": "%s"}' \
      "${c%@*}" "${c#*@}" "CUPY_TF32=${CUPY_TF32-unset}")
    rows="$rows$sep$row"
    sep=", ";;
  esac
done
printf '{"version": "fake", "rows": [%s]}' "$rows" > "$out"
"#;
        std::fs::write(&fake, script).unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let opts = RunOptions { runs: 1, warmup_ms: 0.0, ..Default::default() };
        let patterns = names(&["vector_add", "matmul_f32", "matmul_f32_tf32"]);
        let python = fake.to_string_lossy().to_string();
        let job = Job {
            python: &python,
            nvcc: "/nonexistent/nvcc",
            patterns: &patterns,
            sizes: &crate::quick_sizes(),
            dtype: "f32",
            opts: &opts,
        };
        let peers = peers_with(BackendKind::Cuda, &job);
        let _ = std::fs::remove_dir_all(&dir);
        let peer = |name: &str| peers.iter().find(|p| p.name == name).unwrap();
        let calls = |p: &Peer, case: &str| p.get(case, "f32", 1 << 24).and_then(|r| r.calls.clone());
        let cupy = peer("cupy");
        assert_eq!(cupy.status, Ok("fake".to_string()));
        assert_eq!(calls(cupy, "matmul_f32").as_deref(), Some("CUPY_TF32=0"));
        assert_eq!(calls(cupy, "matmul_f32_tf32").as_deref(), Some("CUPY_TF32=1"));
        let torch = peer("torch");
        assert!(calls(torch, "matmul_f32").is_some() && calls(torch, "matmul_f32_tf32").is_some());
        for other in ["cupy.fuse", "pycuda"] {
            assert_eq!(peer(other).status, Ok("fake".to_string()));
            assert!(peer(other).get("matmul_f32", "f32", 1 << 24).is_none(), "{other}");
        }
    }
}
