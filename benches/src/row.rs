//! A bench row and its peers' cells: a leaf of the report and of the
//! summaries and tables made from rows (`report.rs`, `table.rs`,
//! `latency.rs`, `scaling.rs`, `plot.rs`).

use std::collections::BTreeMap;

use serde::Serialize;

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

    /// "SM 1410/1980 MHz" when the samples ran below the device's highest
    /// SM clock (within 2%), for the table.
    pub fn low_clock(&self) -> Option<String> {
        let (now, max) = (self.sm_clock_mhz?, self.max_sm_clock_mhz?);
        (f64::from(now) < 0.98 * f64::from(max)).then(|| format!("SM {now}/{max} MHz"))
    }
}
