//! `kiln conform`: the conformance suite on every available backend.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use kiln::{Backend, BackendKind, DeviceVisitor, Error};
use kiln_conformance::{matrix, notes, Options, Record, Summary, QUICK_SIZES};

use super::devices::absent_reason;

/// Options of `kiln conform`.
#[derive(Debug, Args)]
pub struct ConformArgs {
    /// Run on this backend only (cpu, cuda, wgpu); by default every backend found.
    #[arg(long, value_name = "NAME")]
    backend: Option<String>,
    /// Run only this group or pattern ("map", "map/sqrt").
    #[arg(long, value_name = "NAME")]
    pattern: Option<String>,
    /// Also write every record (pattern, dtype, size, backend, status) as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Run at a few small sizes only.
    #[arg(long)]
    quick: bool,
    /// The base seed (decimal or 0x hex); default: $KILN_CONFORMANCE_SEED, else a fixed one.
    #[arg(long, value_name = "SEED", value_parser = seed)]
    seed: Option<u64>,
    /// Run the cases the known divergences excuse or skip too, judged as any
    /// other (to check again whether a driver still has its known fault).
    #[arg(long)]
    no_divergences: bool,
}

fn seed(text: &str) -> Result<u64, String> {
    kiln_conformance::parse_seed(text).ok_or_else(|| format!("{text:?} is not a decimal or 0x-prefixed hex u64"))
}

/// A backend this run covers, or one it leaves out and why.
enum Column {
    Ran { kind: BackendKind, device: String, records: Vec<Record> },
    Absent { kind: BackendKind, reason: String },
}

/// Run the suite and print the matrix; exit 1 on a failure or an unexpected pass.
pub fn run(args: &ConformArgs) -> kiln::Result<ExitCode> {
    let mut options = Options::from_env()?;
    options.pattern = args.pattern.clone();
    if args.quick {
        options.sizes = QUICK_SIZES.to_vec();
    }
    if let Some(s) = args.seed {
        options.seed = s;
    }
    if args.no_divergences {
        options.divergences.clear();
    }
    check_pattern(&options)?;
    let wanted: Vec<BackendKind> = match &args.backend {
        Some(name) => vec![name.parse()?],
        None => BackendKind::ALL.to_vec(),
    };
    let mut columns = Vec::new();
    for kind in wanted {
        let column = run_backend(kind, &options)?;
        if let (Column::Absent { reason, .. }, Some(_)) = (&column, &args.backend) {
            // Asked for by name: its absence is an error, not a column.
            return Err(Error::BackendUnavailable { backend: kind, reason: reason.clone() });
        }
        columns.push(column);
    }
    let records: Vec<Record> = columns
        .iter()
        .flat_map(|c| match c {
            Column::Ran { records, .. } => records.clone(),
            Column::Absent { .. } => Vec::new(),
        })
        .collect();
    print_report(&columns, &records, &options);
    if let Some(path) = &args.json {
        write_json(path, &columns, &records, &options)?;
        println!("records written to {}", path.display());
    }
    Ok(if Summary::of(&records).ok() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// `Err` when the pattern filter selects nothing, listing what exists.
fn check_pattern(options: &Options) -> kiln::Result<()> {
    let Some(filter) = &options.pattern else {
        return Ok(());
    };
    let cases = kiln_conformance::cases::<kiln::Cpu>();
    if cases.iter().any(|c| options.selects(c.group, &c.pattern)) {
        return Ok(());
    }
    let mut names: Vec<&str> = kiln_conformance::GROUPS.to_vec();
    for c in &cases {
        if !names.contains(&c.pattern.as_str()) {
            names.push(&c.pattern);
        }
    }
    Err(Error::invalid("kiln conform --pattern", format!("no pattern matches {filter:?}; known: {}", names.join(", "))))
}

/// Open device 0 of `kind` and run the suite there, with a progress bar.
fn run_backend(kind: BackendKind, options: &Options) -> kiln::Result<Column> {
    let absent = |e: &Error| Column::Absent { kind, reason: absent_reason(e) };
    let device = match kiln::Device::open(kind, 0) {
        Ok(d) => d,
        Err(e @ (Error::BackendUnavailable { .. } | Error::DeviceNotFound { .. })) => return Ok(absent(&e)),
        Err(e) => return Err(e),
    };
    let bar = ProgressBar::new(0).with_prefix(kind.name());
    if let Ok(style) = ProgressStyle::with_template("{prefix:>5} [{bar:30}] {pos}/{len} {msg}") {
        bar.set_style(style.progress_chars("=> "));
    }
    let records = device.visit(Conform { options, bar: &bar });
    bar.finish_and_clear();
    Ok(Column::Ran { kind, device: device.info().to_string(), records })
}

/// The suite, run with the concrete backend type.
struct Conform<'a> {
    options: &'a Options,
    bar: &'a ProgressBar,
}

impl DeviceVisitor for Conform<'_> {
    type Output = Vec<Record>;

    fn visit<B: Backend>(self, device: &kiln::typed::Device<B>) -> Vec<Record> {
        kiln_conformance::run(device, self.options, &mut |p| {
            self.bar.set_length(p.total as u64);
            self.bar.set_position(p.done as u64);
            self.bar.set_message(format!("{} {} n={}", p.pattern, p.dtype, p.size));
        })
    }
}

fn print_report(columns: &[Column], records: &[Record], options: &Options) {
    println!("kiln conformance: base seed {:#x}, sizes {:?}", options.seed, options.sizes);
    for c in columns {
        match c {
            Column::Ran { device, .. } => println!("  {device}"),
            Column::Absent { kind, reason } => println!("  {kind}: absent ({reason})"),
        }
    }
    println!();
    if records.is_empty() {
        println!("no backend ran");
    } else {
        print!("{}", matrix(records));
    }
    let notes = notes(records);
    if !notes.is_empty() {
        println!("\n{notes}");
    }
    for c in columns {
        if let Column::Ran { kind, records, .. } = c {
            println!("{kind}: {}", Summary::of(records));
        }
    }
}

fn write_json(path: &PathBuf, columns: &[Column], records: &[Record], options: &Options) -> kiln::Result<()> {
    let backends: Vec<serde_json::Value> = columns
        .iter()
        .map(|c| match c {
            Column::Ran { kind, device, .. } => serde_json::json!({ "backend": kind.name(), "device": device }),
            Column::Absent { kind, reason } => serde_json::json!({ "backend": kind.name(), "absent": reason }),
        })
        .collect();
    let s = Summary::of(records);
    let doc = serde_json::json!({
        "seed": options.seed,
        "sizes": options.sizes,
        "backends": backends,
        "summary": {
            "pass": s.pass, "fail": s.fail, "expected_fail": s.expected_fail,
            "unexpected_pass": s.unexpected_pass, "unsupported": s.unsupported,
        },
        "records": records,
    });
    let io = |e: &dyn std::fmt::Display| Error::Io {
        what: "writing the conformance records to".into(),
        path: path.display().to_string(),
        detail: e.to_string(),
    };
    let text = serde_json::to_string_pretty(&doc).map_err(|e| io(&e))?;
    std::fs::write(path, text + "\n").map_err(|e| io(&e))
}
