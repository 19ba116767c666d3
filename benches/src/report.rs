//! Bench rows and the report that holds them, as JSON.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::row::Row;

/// What a report's reader needs to trust and reproduce it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Header {
    /// kiln's version.
    pub kiln_version: String,
    /// The commit the benches were built from.
    pub git_commit: String,
    /// UTC date and time of the run.
    pub date: String,
    /// The command line that produced the report.
    pub command: String,
    /// Every device measured, with its driver.
    pub devices: Vec<String>,
    /// Versions of the libraries underneath.
    pub versions: BTreeMap<String, String>,
    /// Each peer's status ("cupy 14.2" or why absent).
    pub peers: BTreeMap<String, String>,
    /// The ceiling measured per device, GB/s.
    pub ceilings_gb_per_s: BTreeMap<String, f64>,
}

/// A whole bench run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Context.
    pub header: Header,
    /// One row per case and device.
    pub rows: Vec<Row>,
    /// Per backend (and peer) and pattern: where fixed costs stop
    /// dominating, from the sweep's rows.
    pub scaling: Vec<crate::scaling::Scaling>,
    /// The end-to-end latency of small work, per backend and peer.
    pub latency: Vec<crate::latency::Latency>,
    /// The CUDA system cases (launch overhead, NVRTC, pinned copies,
    /// pipeline), when CUDA was measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_system: Option<serde_json::Value>,
}

/// The current UTC time as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z", rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    #[test]
    fn utc_date_is_well_formed() {
        let d = super::utc_now();
        assert_eq!(d.len(), 20, "{d}");
        assert!(d.starts_with("20") && d.ends_with('Z'), "{d}");
    }
}
