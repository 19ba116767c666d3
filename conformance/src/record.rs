//! The result of one case at one size on one backend, serialisable.

use serde::{Deserialize, Serialize};

/// How one case ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum Status {
    /// Every output matched the reference.
    Pass,
    /// An output differed, a call failed or broke its contract.
    Fail {
        /// The case's seed: rerun with it to reproduce.
        seed: u64,
        /// The first bad index, for a wrong output.
        index: Option<usize>,
        /// The expected value there.
        expected: Option<String>,
        /// The value found there.
        got: Option<String>,
        /// The full report: what, where, neighbours, or the error.
        message: String,
    },
    /// Failed, as a known divergence says it does.
    ExpectedFail {
        /// The divergence's reason.
        reason: String,
    },
    /// Passed although a known divergence says it fails: the entry is stale.
    UnexpectedPass {
        /// The divergence's reason.
        reason: String,
    },
    /// Not run or refused by the backend, for the reason given.
    Unsupported {
        /// Why.
        reason: String,
    },
}

impl Status {
    /// Whether this status fails a conformance run (a failure, or an
    /// expected failure that passed).
    pub fn is_failure(&self) -> bool {
        matches!(self, Status::Fail { .. } | Status::UnexpectedPass { .. })
    }

    /// A one-word name ("pass", "fail", "expected_fail", ...), as in the JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail { .. } => "fail",
            Status::ExpectedFail { .. } => "expected_fail",
            Status::UnexpectedPass { .. } => "unexpected_pass",
            Status::Unsupported { .. } => "unsupported",
        }
    }
}

/// One pattern on one dtype at one size on one backend's device.
///
/// # Examples
/// ```
/// use kiln_conformance::{Record, Status};
/// let r = Record {
///     pattern: "map/square".into(), dtype: "f32".into(), size: 33,
///     backend: "cpu".into(), device: "host".into(), status: Status::Pass,
/// };
/// let json = serde_json::to_string(&r).unwrap();
/// assert_eq!(json, r#"{"pattern":"map/square","dtype":"f32","size":33,"backend":"cpu","device":"host","status":"pass"}"#);
/// assert_eq!(serde_json::from_str::<Record>(&json).unwrap(), r);
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The pattern ("map/square").
    pub pattern: String,
    /// The element type ("f32").
    pub dtype: String,
    /// Number of elements.
    pub size: usize,
    /// The backend ("cpu").
    pub backend: String,
    /// The device's name.
    pub device: String,
    /// How it went.
    #[serde(flatten)]
    pub status: Status,
}
