//! Reports: the pattern x backend matrix, the notes under it, a summary.

use std::fmt::Write as _;

use crate::{Record, Status};

/// Counts of each status.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Passed.
    pub pass: usize,
    /// Failed.
    pub fail: usize,
    /// Failed as a known divergence says.
    pub expected_fail: usize,
    /// Passed though a known divergence says it fails.
    pub unexpected_pass: usize,
    /// Not supported.
    pub unsupported: usize,
}

impl Summary {
    /// Count `records`.
    pub fn of(records: &[Record]) -> Self {
        let mut s = Summary::default();
        for r in records {
            match r.status {
                Status::Pass => s.pass += 1,
                Status::Fail { .. } => s.fail += 1,
                Status::ExpectedFail { .. } => s.expected_fail += 1,
                Status::UnexpectedPass { .. } => s.unexpected_pass += 1,
                Status::Unsupported { .. } => s.unsupported += 1,
            }
        }
        s
    }

    /// Whether nothing failed (expected failures and unsupported cases aside).
    pub fn ok(&self) -> bool {
        self.fail == 0 && self.unexpected_pass == 0
    }
}

impl std::fmt::Display for Summary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} passed, {} failed, {} expected failures, {} unexpected passes, {} unsupported",
            self.pass, self.fail, self.expected_fail, self.unexpected_pass, self.unsupported
        )
    }
}

/// Values in order of first appearance, without repeats.
fn ordered<'a>(items: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for i in items {
        if !out.contains(&i) {
            out.push(i);
        }
    }
    out
}

/// The matrix cell of one pattern on one backend, over its dtypes and sizes:
/// the first failure with its dtype, size and index; else "pass", with the
/// dtypes that are expected failures or unsupported.
fn cell(records: &[&Record]) -> String {
    if records.is_empty() {
        return "-".to_string();
    }
    if let Some(r) = records.iter().find(|r| matches!(r.status, Status::Fail { .. })) {
        let at = match &r.status {
            Status::Fail { index: Some(i), .. } => format!(" @{i}"),
            _ => " error".to_string(),
        };
        return format!("FAIL {} n={}{at}", r.dtype, r.size);
    }
    if let Some(r) = records.iter().find(|r| matches!(r.status, Status::UnexpectedPass { .. })) {
        return format!("XPASS {} n={}", r.dtype, r.size);
    }
    let dtypes = |want: fn(&Status) -> bool| {
        ordered(records.iter().filter(|r| want(&r.status)).map(|r| r.dtype.as_str())).join(",")
    };
    let mut parts = Vec::new();
    if records.iter().any(|r| r.status == Status::Pass) {
        parts.push("pass".to_string());
    }
    let xfail = dtypes(|s| matches!(s, Status::ExpectedFail { .. }));
    if !xfail.is_empty() {
        parts.push(format!("xfail {xfail}"));
    }
    let unsupported = dtypes(|s| matches!(s, Status::Unsupported { .. }));
    if !unsupported.is_empty() {
        parts.push(format!("unsup {unsupported}"));
    }
    parts.join(", ")
}

/// The pattern x backend matrix: one row per pattern, one column per backend.
///
/// # Examples
/// ```
/// use kiln_conformance::{matrix, Record, Status};
/// let rec = |dtype: &str, status| Record {
///     pattern: "map/sqrt".into(), dtype: dtype.into(), size: 1,
///     backend: "cpu".into(), device: "host".into(), status,
/// };
/// let records = [rec("f32", Status::Pass), rec("i32", Status::Unsupported { reason: "floats only".into() })];
/// let m = matrix(&records);
/// assert!(m.contains("map/sqrt"));
/// assert!(m.contains("pass, unsup i32"));
/// ```
pub fn matrix(records: &[Record]) -> String {
    let patterns = ordered(records.iter().map(|r| r.pattern.as_str()));
    let backends = ordered(records.iter().map(|r| r.backend.as_str()));
    let rows: Vec<(String, Vec<String>)> = patterns
        .iter()
        .map(|&p| {
            let cells = backends
                .iter()
                .map(|&b| cell(&records.iter().filter(|r| r.pattern == p && r.backend == b).collect::<Vec<_>>()))
                .collect();
            (p.to_string(), cells)
        })
        .collect();
    let first = rows.iter().map(|(p, _)| p.len()).chain(["pattern".len()]).max().unwrap_or(0);
    let widths: Vec<usize> = backends
        .iter()
        .enumerate()
        .map(|(i, b)| rows.iter().map(|(_, c)| c[i].len()).chain([b.len()]).max().unwrap_or(0))
        .collect();
    let line = |name: &str, cells: &[String]| {
        let mut l = format!("{name:first$}");
        for (c, w) in cells.iter().zip(&widths) {
            let _ = write!(l, "  {c:w$}");
        }
        l.trim_end().to_string() + "\n"
    };
    let mut out = line("pattern", &backends.iter().map(|b| b.to_string()).collect::<Vec<_>>());
    out.push_str(&"-".repeat(first + widths.iter().map(|w| w + 2).sum::<usize>()));
    out.push('\n');
    for (p, cells) in rows {
        out.push_str(&line(&p, &cells));
    }
    out
}

/// The notes under the matrix: each failure in full (with its seed), and the
/// reason for each unsupported or expected-to-fail pattern and dtype, once
/// per backend.
pub fn notes(records: &[Record]) -> String {
    let mut out = String::new();
    let mut seen: Vec<(&str, &str, &str)> = Vec::new();
    for r in records {
        let key = (r.backend.as_str(), r.pattern.as_str(), r.dtype.as_str());
        let line = match &r.status {
            Status::Pass => continue,
            Status::Fail { seed, message, .. } => {
                format!(
                    "FAIL {} {} {} n={} (seed {seed:#x}):\n{}",
                    r.backend,
                    r.pattern,
                    r.dtype,
                    r.size,
                    indent(message)
                )
            }
            _ if seen.contains(&key) => continue,
            Status::ExpectedFail { reason } => format!("xfail {} {} {}: {reason}", r.backend, r.pattern, r.dtype),
            Status::UnexpectedPass { reason } => format!(
                "XPASS {} {} {} n={}: passes, yet listed as a known failure ({reason}); remove the divergence",
                r.backend, r.pattern, r.dtype, r.size
            ),
            Status::Unsupported { reason } => format!("unsup {} {} {}: {reason}", r.backend, r.pattern, r.dtype),
        };
        seen.push(key);
        out.push_str(&line);
        out.push('\n');
    }
    out
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}
