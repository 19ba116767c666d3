//! The `kiln` command and the facade's run-time backend choice, as a user meets them.

use std::process::{Command, Output};

use kiln::{BackendKind, Error};

fn kiln(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kiln")).args(args).output().expect("the kiln binary runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A backend that is not compiled in or cannot run here, with its reason.
fn absent_backend() -> Option<(BackendKind, String)> {
    kiln::probe().into_iter().find_map(|(kind, found)| match found {
        Err(Error::BackendUnavailable { reason, .. }) => Some((kind, reason)),
        _ => None,
    })
}

#[test]
fn devices_lists_every_backend_or_why_it_is_absent() {
    let out = kiln(&["devices"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.lines().any(|l| l.starts_with("cpu:0 ")), "{stdout}");
    for kind in BackendKind::ALL {
        assert!(stdout.lines().any(|l| l.starts_with(kind.name())), "no line for {kind}:\n{stdout}");
    }
    if let Some((kind, reason)) = absent_backend() {
        assert!(stdout.contains(&format!("{:<5} absent: {reason}", kind.name())), "{stdout}");
    }
}

/// `kiln devices` ends with what `Device::best()` takes and, one line each,
/// what it passed over and why: the same report a program gets.
#[test]
fn devices_says_what_best_takes_and_why_it_passed_over_the_rest() {
    if std::env::var("KILN_BACKEND").is_ok_and(|v| !v.trim().is_empty()) {
        eprintln!("KILN_BACKEND is set, so best() opens what it names; nothing to check");
        return;
    }
    let out = kiln(&["devices"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (device, report) = kiln::Device::best_with_report().expect("the CPU at least");
    assert!(stdout.contains(&format!("Device::best() takes {}", device.info())), "{stdout}");
    for skipped in &report.passed_over {
        assert!(stdout.contains(&format!("    passed over {skipped}\n")), "{skipped} not in:\n{stdout}");
    }
    // Landing on the CPU, every absent GPU backend was passed over.
    let on_cpu = device.info().backend == BackendKind::Cpu;
    if let Some((kind, reason)) = absent_backend().filter(|(kind, _)| on_cpu && *kind != BackendKind::Cpu) {
        assert!(stdout.contains(&format!("    passed over {kind}: {reason}")), "{stdout}");
    }
}

/// A GPU emulated in software is marked, and Mesa's device-selection layer
/// (22.3) does not get libwayland to print an `XDG_RUNTIME_DIR` error on a
/// machine with no display.
#[test]
fn devices_marks_software_adapters_and_prints_no_wayland_error() {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_kiln"));
    for var in ["XDG_RUNTIME_DIR", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "NODEVICE_SELECT", "MESA_VK_DEVICE_SELECT"] {
        cmd.env_remove(var);
    }
    let out = cmd.env_remove("DRI_PRIME").arg("devices").output().expect("the kiln binary runs");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("XDG_RUNTIME_DIR"), "{stderr}");
    let software: Vec<kiln::DeviceInfo> = kiln::probe()
        .into_iter()
        .flat_map(|(_, found)| found.unwrap_or_default())
        .filter(|d| d.kind.is_software())
        .collect();
    for d in software {
        let at = stdout.find(&d.to_string()).unwrap_or_else(|| panic!("{d} not listed:\n{stdout}"));
        assert!(stdout[at..].lines().nth(2).is_some_and(|l| l.contains("Device::best() skips it")), "{stdout}");
    }
}

#[test]
fn conform_prints_the_matrix_and_writes_json() {
    let path = std::env::temp_dir().join(format!("kiln-conform-{}.json", std::process::id()));
    let out = kiln(&["conform", "--quick", "--backend", "cpu", "--json", path.to_str().unwrap()]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let header = stdout.lines().find(|l| l.starts_with("pattern")).expect("a matrix header");
    assert!(header.split_whitespace().eq(["pattern", "cpu"]), "{header}");
    for row in ["fill ", "sequence ", "map/square ", "elementwise/div ", "axpy_in_place ", "memory/copy_range "] {
        let line = stdout.lines().find(|l| l.starts_with(row)).unwrap_or_else(|| panic!("no row {row:?}:\n{stdout}"));
        assert!(line.ends_with(" pass"), "{line}");
    }
    assert!(stdout.lines().any(|l| l.starts_with("map/sqrt ") && l.ends_with("pass, unsup i32,u32")), "{stdout}");

    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).ok();
    let records: Vec<kiln_conformance::Record> = serde_json::from_value(json["records"].clone()).unwrap();
    let sizes = kiln_conformance::QUICK_SIZES.len();
    assert_eq!(records.len(), kiln_conformance::cases::<kiln::Cpu>().len() * sizes);
    assert!(records.iter().all(|r| r.backend == "cpu" && !r.status.is_failure()));
    assert_eq!(json["summary"]["fail"], 0);
    let refused = records.iter().filter(|r| r.pattern.starts_with("map") && r.status.name() == "unsupported");
    assert_eq!(refused.count(), 4 * sizes, "sqrt on i32 and u32, two forms");
    assert_eq!(
        json["summary"]["pass"].as_u64(),
        Some(records.iter().filter(|r| r.status.name() == "pass").count() as u64)
    );
    assert_eq!(json["backends"][0]["backend"], "cpu");
}

#[test]
fn conform_filters_by_pattern_and_refuses_unknown_ones() {
    let out = kiln(&["conform", "--quick", "--backend", "cpu", "--pattern", "memory"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let rows: Vec<&str> = stdout.lines().filter(|l| l.ends_with(" pass")).collect();
    assert_eq!(rows.len(), 4, "{stdout}");
    assert!(rows.iter().all(|r| r.starts_with("memory/")), "{stdout}");

    let out = kiln(&["conform", "--pattern", "no_such_pattern"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("no pattern matches \"no_such_pattern\"") && stderr.contains("map/sqrt"), "{stderr}");
}

#[test]
fn a_backend_asked_for_by_name_that_is_not_there_is_a_clear_error() {
    let out = kiln(&["conform", "--backend", "opencl"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown backend \"opencl\": expected one of cpu, cuda, wgpu"));

    let err = kiln::Device::by_name("opencl").unwrap_err();
    assert_eq!(err, Error::UnknownBackend { name: "opencl".into() });

    if let Some((kind, reason)) = absent_backend() {
        let err = kiln::Device::by_name(kind.name()).unwrap_err();
        assert!(matches!(&err, Error::BackendUnavailable { backend, .. } if *backend == kind), "{err:?}");
        assert!(err.to_string().contains(&reason), "{err}");
        let out = kiln(&["conform", "--quick", "--backend", kind.name()]);
        assert_eq!(out.status.code(), Some(2));
        assert!(text(&out.stderr).contains(&reason), "{}", text(&out.stderr));
    }
}

#[test]
fn bad_arguments_and_unwritable_files_are_errors() {
    let out = kiln(&["conform", "--seed", "twelve"]);
    assert_eq!(out.status.code(), Some(2), "clap reports usage errors with 2");
    assert!(text(&out.stderr).contains("not a decimal or 0x-prefixed hex u64"));

    let out =
        kiln(&["conform", "--quick", "--backend", "cpu", "--pattern", "fill", "--json", "/nonexistent/dir/x.json"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert!(stderr.contains("writing the conformance records to /nonexistent/dir/x.json"), "{stderr}");

    let out = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(["conform", "--quick"])
        .env("KILN_CONFORMANCE_SEED", "seedy")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("KILN_CONFORMANCE_SEED: \"seedy\" is not a seed"), "{}", text(&out.stderr));
}

#[test]
fn bench_prints_the_scaling_and_latency_summaries_and_writes_them() {
    let path = std::env::temp_dir().join(format!("kiln-bench-{}.json", std::process::id()));
    let args = ["bench", "--backend", "cpu", "--pattern", "vector_add", "--pattern", "reduce_latency"];
    let out = kiln(
        &[&args[..], &["--size", "4Ki", "--size", "64Ki", "--runs", "3", "--json", path.to_str().unwrap()]].concat(),
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let table = |title: &str| {
        let start = stdout.find(title).unwrap_or_else(|| panic!("no {title:?} table:\n{stdout}"));
        stdout[start..].lines().skip(2).take_while(|l| !l.is_empty()).collect::<Vec<_>>()
    };
    let scaling = table("scaling: n_1/2");
    // vector_add on the CPU, and NumPy's beside it where NumPy is installed (CI installs it).
    let numpy = Command::new("python3").args(["-c", "import numpy"]).status().is_ok_and(|s| s.success());
    assert_eq!(scaling.len(), 1 + usize::from(numpy), "vector_add on the CPU (and NumPy): {scaling:?}");
    assert!(scaling[0].starts_with("cpu ") && scaling[0].contains("vector_add") && scaling[0].contains("GB/s"));
    if numpy {
        assert!(scaling[1].starts_with("numpy on cpu ") && scaling[1].contains("vector_add"), "{scaling:?}");
    }
    let latency = table("end-to-end latency");
    assert_eq!(latency.len(), 1, "{latency:?}");
    assert!(latency[0].starts_with("cpu ") && latency[0].ends_with("EndToEnd"), "{latency:?}");

    let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    std::fs::remove_file(&path).ok();
    let rows = json["rows"].as_array().unwrap();
    let latency_rows: Vec<_> = rows.iter().filter(|r| r["pattern"] == "reduce_latency").collect();
    assert_eq!(latency_rows.len(), 1, "once, whatever the sizes");
    let row = latency_rows[0];
    assert_eq!((row["size"].as_u64(), row["timer"].as_str()), (Some(1024), Some("end-to-end")));
    assert!(row["gb_per_s"].is_null() && row["ceiling_fraction"].is_null(), "{row}");
    assert!(row["runs"].as_u64().unwrap() >= 100, "{row}");
    assert_eq!(json["scaling"][0]["pattern"], "vector_add");
    assert_eq!(json["scaling"][0]["sizes"], 2);
    assert!(json["scaling"][0]["fixed_cost_us"].as_f64().unwrap() > 0.0);
    assert!(json["latency"][0]["median_us"].as_f64().unwrap() > 0.0);
    let cubecl = json["header"]["peers"]["cubecl"].as_str().unwrap();
    if cfg!(feature = "cubecl") {
        assert!(cubecl.contains("no wgpu device in this run"), "{cubecl}");
    } else {
        assert!(cubecl.contains("--features cubecl"), "{cubecl}");
    }
}

#[test]
fn stress_runs_briefly_on_the_cpu_and_prints_its_summary() {
    let args = ["stress", "--backend", "cpu", "--iterations", "60", "--threads", "2", "--max-alloc", "1MiB"];
    let out = kiln(&[&args[..], &["--seed", "0x51"]].concat());
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.starts_with("kiln stress: seed 0x51 (--seed to repeat), 2 threads x 3 streams, 60 steps"),
        "{stdout}"
    );
    assert!(stdout.lines().any(|l| l.starts_with("cpu:0 ")), "{stdout}");
    assert!(stdout.contains("allocations up to 1.0 MiB") && stdout.contains(" 60 steps in "), "{stdout}");
    let ops = stdout.lines().find(|l| l.starts_with("  ops: ")).unwrap_or_else(|| panic!("no ops line:\n{stdout}"));
    assert!(ops.contains("handoff ") && ops.contains("drop_in_flight ") && ops.contains("churn "), "{ops}");
    assert!(stdout.contains("  memory: free "), "the CPU reports its memory:\n{stdout}");
    assert!(stdout.lines().any(|l| l == "cpu: PASS"), "{stdout}");

    let out = kiln(&["stress", "--backend", "cpu", "--max-alloc", "lots"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("\"lots\" is not a size"), "{}", text(&out.stderr));
    let out = kiln(&["stress", "--backend", "cpu", "--duration", "5 fortnights"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("unknown unit"), "{}", text(&out.stderr));
}
