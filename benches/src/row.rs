//! A bench row and its peers' cells: a leaf of the report and of the
//! summaries and tables made from rows (`report.rs`, `table.rs`,
//! `latency.rs`, `scaling.rs`, `plot.rs`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::peaks::Arithmetic;
use crate::timing::Timer;

/// A peer's result for the same pattern, dtype and size as a kiln row.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum PeerCell {
    /// The peer ran this case.
    Measured {
        /// Its median time.
        median_ms: f64,
        /// Its fastest time.
        min_ms: f64,
        /// Its throughput under the same bytes model (none for latency rows).
        gb_per_s: Option<f64>,
        /// kiln's throughput over the peer's, which is the peer's time over
        /// kiln's (above 1: kiln is faster).
        ratio: f64,
        /// How the peer timed it, where it says.
        #[serde(skip_serializing_if = "Option::is_none")]
        timer: Option<Timer>,
        /// What the peer called, where it says.
        #[serde(skip_serializing_if = "Option::is_none")]
        calls: Option<String>,
    },
    /// The peer is not installed or not usable here, or its result for
    /// this case was wrong (and so not timed).
    Absent {
        /// Why.
        reason: String,
    },
    /// The peer is present but has no such operation or size.
    NoCase,
}

/// One measured (or skipped) case on one device.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Row {
    /// Backend name.
    pub backend: String,
    /// Device name.
    pub device: String,
    /// Pattern name ("vector_add").
    pub pattern: String,
    /// Element type ("f32").
    pub dtype: String,
    /// Elements per array.
    pub size: usize,
    /// Bytes moved, from the case's model.
    pub bytes: u64,
    /// Arithmetic operations, from the case's model.
    pub flops: u64,
    /// Median time, ms (absent when skipped).
    pub median_ms: Option<f64>,
    /// Fastest time, ms.
    pub min_ms: Option<f64>,
    /// Timed samples.
    pub runs: usize,
    /// Operations enqueued back to back in each sample (the times are per operation).
    pub launches: usize,
    /// How it was timed.
    pub timer: Option<Timer>,
    /// The SM clock during the samples, MHz (NVIDIA devices).
    pub sm_clock_mhz: Option<u32>,
    /// The device's highest SM clock, MHz.
    pub max_sm_clock_mhz: Option<u32>,
    /// Throughput in GB/s (1e9 bytes per second) from `bytes` and the median.
    pub gb_per_s: Option<f64>,
    /// Arithmetic rate in TFLOP/s, for compute-bound patterns.
    pub tflop_per_s: Option<f64>,
    /// `gb_per_s` over the device-to-device copy measured in the same run.
    pub ceiling_fraction: Option<f64>,
    /// The arithmetic of a product's inner loop (fp32, tf32, ...), which
    /// sets its peak; none for rows that are no products.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arithmetic: Option<Arithmetic>,
    /// The device's dense peak for that arithmetic, TFLOP/s, where kiln
    /// knows the device ([`peak_tflop_per_s`](crate::peak_tflop_per_s)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_tflop_per_s: Option<f64>,
    /// `tflop_per_s` over `peak_tflop_per_s`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub peak_fraction: Option<f64>,
    /// Each peer's result on the same case.
    pub peers: BTreeMap<String, PeerCell>,
    /// Why the case was skipped, or a remark.
    pub note: Option<String>,
}

impl Row {
    /// Throughput from a bytes count and a time in ms.
    ///
    /// # Examples
    /// ```
    /// assert_eq!(kiln_benches::Row::gbps(4_000_000, 2.0), Some(2.0));
    /// assert_eq!(kiln_benches::Row::gbps(0, 2.0), None);
    /// ```
    pub fn gbps(bytes: u64, ms: f64) -> Option<f64> {
        (bytes > 0 && ms > 0.0).then(|| bytes as f64 / ms / 1e6)
    }

    /// The peak column of the table: "495 (79%)" (the device's peak for
    /// the row's arithmetic, TFLOP/s, and the row's fraction of it),
    /// "unknown" for a product on a device whose peaks kiln does not know,
    /// "-" for rows that are no products.
    ///
    /// # Examples
    /// ```
    /// use kiln_benches::{Arithmetic, Row};
    /// let row = Row { arithmetic: Some(Arithmetic::Tf32), peak_tflop_per_s: Some(495.0), ..Row::default() };
    /// assert_eq!(row.peak_cell(), "495");
    /// assert_eq!(Row { peak_fraction: Some(0.791), ..row.clone() }.peak_cell(), "495 (79%)");
    /// assert_eq!(Row { peak_tflop_per_s: None, ..row }.peak_cell(), "unknown");
    /// assert_eq!(Row::default().peak_cell(), "-");
    /// ```
    pub fn peak_cell(&self) -> String {
        match (self.arithmetic, self.peak_tflop_per_s, self.peak_fraction) {
            (None, _, _) => "-".into(),
            (Some(_), None, _) => "unknown".into(),
            (Some(_), Some(peak), None) => format!("{peak:.0}"),
            (Some(_), Some(peak), Some(f)) => format!("{peak:.0} ({:.0}%)", f * 100.0),
        }
    }

    /// "SM 1410/1980 MHz" when the samples ran below the device's highest
    /// SM clock (within 2%), for the table.
    pub fn low_clock(&self) -> Option<String> {
        let (now, max) = (self.sm_clock_mhz?, self.max_sm_clock_mhz?);
        (f64::from(now) < 0.98 * f64::from(max)).then(|| format!("SM {now}/{max} MHz"))
    }
}
