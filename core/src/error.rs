//! The one error type of kiln: every failure names what, where and why.

use crate::BackendKind;

/// Shorthand for `Result<T, kiln_core::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in kiln, from a missing driver to a device fault.
///
/// Messages are written for the person reading them: they name the operation,
/// the object (kernel, buffer, device) and the reason, with numbers where a
/// limit was crossed.
///
/// # Examples
/// ```
/// use kiln_core::{BackendKind, Error};
/// let e = Error::BackendUnavailable {
///     backend: BackendKind::Cuda,
///     reason: "no CUDA driver: libcuda.so not found".into(),
/// };
/// assert_eq!(e.to_string(), "cuda backend unavailable: no CUDA driver: libcuda.so not found");
/// ```
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The backend cannot run on this machine (no driver, no adapter, not compiled in).
    #[error("{backend} backend unavailable: {reason}")]
    BackendUnavailable {
        /// Which backend.
        backend: BackendKind,
        /// Why it is absent, e.g. "no CUDA driver: libcuda.so not found".
        reason: String,
    },
    /// A backend name that kiln does not know (from `KILN_BACKEND` or the CLI).
    #[error("unknown backend {name:?}: expected one of {}", BackendKind::names())]
    UnknownBackend {
        /// The name that was asked for.
        name: String,
    },
    /// A device ordinal past the end of the device list.
    #[error("{backend} device {ordinal} not found: {count} device(s) present")]
    DeviceNotFound {
        /// Which backend.
        backend: BackendKind,
        /// The ordinal asked for.
        ordinal: usize,
        /// How many devices the backend sees.
        count: usize,
    },
    /// An allocation failed for lack of memory.
    #[error("out of memory on {device}: {what} asked for {requested} bytes{}", counts.note())]
    OutOfMemory {
        /// The device's name.
        device: String,
        /// What was being allocated ("device buffer of 1048576 f32", "page-locked host buffer").
        what: String,
        /// Bytes requested.
        requested: u64,
        /// Where the device's memory stood, as far as known (boxed: errors
        /// travel in every `Result`, and this one is rare).
        counts: Box<MemoryCounts>,
    },
    /// A kernel failed to compile; `log` holds the compiler's full output.
    #[error("{backend} compile of kernel `{kernel}` failed (options: [{}]):\n{log}", options.join(" "))]
    Compile {
        /// Which backend's compiler.
        backend: BackendKind,
        /// The kernel (program) name.
        kernel: String,
        /// The options it was compiled with.
        options: Vec<String>,
        /// The compiler's log, complete.
        log: String,
    },
    /// A launch shape or argument list the device or kernel cannot take.
    #[error("launch of kernel `{kernel}` rejected: {reason}")]
    InvalidLaunch {
        /// The kernel name.
        kernel: String,
        /// Which limit was crossed and by how much.
        reason: String,
    },
    /// Two lengths that must agree do not.
    #[error("{what}: length mismatch, expected {expected} elements, got {actual}")]
    LengthMismatch {
        /// The operation and the operands.
        what: String,
        /// The length required.
        expected: usize,
        /// The length given.
        actual: usize,
    },
    /// A range outside a buffer.
    #[error("{what}: range {start}..{end} is outside a buffer of {len} elements")]
    OutOfRange {
        /// The operation.
        what: String,
        /// Range start (elements).
        start: usize,
        /// Range end (elements).
        end: usize,
        /// Buffer length (elements).
        len: usize,
    },
    /// Objects from different devices were mixed in one operation.
    #[error("{what}: operands live on different devices ({first} and {second})")]
    DeviceMismatch {
        /// The operation.
        what: String,
        /// One device.
        first: String,
        /// The other device.
        second: String,
    },
    /// An argument that is wrong for a reason other than its length.
    #[error("{what}: {reason}")]
    InvalidArgument {
        /// The operation and the argument.
        what: String,
        /// Why it is wrong.
        reason: String,
    },
    /// A feature this backend or device does not have.
    #[error("{backend}: {what} is not supported: {reason}")]
    Unsupported {
        /// Which backend.
        backend: BackendKind,
        /// The operation or feature.
        what: String,
        /// Why (missing hardware feature, no source for this backend, ...).
        reason: String,
    },
    /// A kernel faulted on the device (illegal address, trap). The device is
    /// unusable afterwards and every later call on it says so.
    #[error("device fault on {device}{}: {detail}", kernel_note(kernel))]
    DeviceFault {
        /// The device's name.
        device: String,
        /// The kernel running when the fault was seen, when known.
        kernel: Option<String>,
        /// The driver's description.
        detail: String,
    },
    /// A device that faulted or was lost earlier; nothing more can run on it.
    #[error("device {device} is unusable after an earlier failure: {cause}")]
    DeviceLost {
        /// The device's name.
        device: String,
        /// The first failure, as it was reported.
        cause: String,
    },
    /// A driver or API call failed for a reason not covered above.
    #[error("{backend} {call} failed: {detail}")]
    Driver {
        /// Which backend.
        backend: BackendKind,
        /// The driver call or operation ("cuMemcpyHtoDAsync", "map_async").
        call: String,
        /// The driver's code and description.
        detail: String,
    },
    /// A call that a graph capture cannot take (a blocking read, a peer
    /// copy, an event query), or a graph used where it cannot run.
    #[error("{call}: {reason}")]
    Graph {
        /// The call, as the user wrote it ("Stream::copy_to_host during graph capture").
        call: String,
        /// Why, and what to do instead.
        reason: String,
    },
    /// A matrix a linear-algebra routine cannot factor (NumPy's
    /// `LinAlgError`): a singular matrix in a solve or an inverse, one that is
    /// not positive definite in a Cholesky factorisation, an eigensolver that
    /// did not converge. The inputs are left as they were; outputs are not
    /// to be read.
    #[error("{what}: matrix {matrix} of the batch {reason}")]
    LinAlg {
        /// The operation and the shapes ("solve of 10 x 64x64 f32").
        what: String,
        /// The matrix's index in the batch (0 for a single matrix).
        matrix: usize,
        /// What was found, and where ("is singular: the pivot of column 3 is 0").
        reason: String,
    },
    /// A file-system error (kernel cache, result files).
    #[error("{what} {path}: {detail}")]
    Io {
        /// The operation.
        what: String,
        /// The path involved.
        path: String,
        /// The OS error.
        detail: String,
    },
}

impl Error {
    /// A [`Graph`](Error::Graph) error.
    pub(crate) fn graph(call: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Graph { call: call.into(), reason: reason.into() }
    }
}

fn kernel_note(kernel: &Option<String>) -> String {
    kernel.as_ref().map(|k| format!(" in kernel `{k}`")).unwrap_or_default()
}

impl Error {
    /// An `Unsupported` error, for backends that lack an operation.
    pub fn unsupported(backend: BackendKind, what: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::Unsupported { backend, what: what.into(), reason: reason.into() }
    }

    /// An `InvalidArgument` error.
    pub fn invalid(what: impl Into<String>, reason: impl Into<String>) -> Self {
        Error::InvalidArgument { what: what.into(), reason: reason.into() }
    }

    /// A `Driver` error.
    pub fn driver(backend: BackendKind, call: impl Into<String>, detail: impl std::fmt::Display) -> Self {
        Error::Driver { backend, call: call.into(), detail: detail.to_string() }
    }

    /// Whether this error leaves its device unusable.
    pub fn is_fatal(&self) -> bool {
        matches!(self, Error::DeviceFault { .. } | Error::DeviceLost { .. })
    }
}

/// Where a device's memory stood when an allocation failed: each figure
/// where known.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MemoryCounts {
    /// Bytes free on the device (every process), as the backend tells.
    pub free: Option<u64>,
    /// Bytes kiln's buffers held on the device.
    pub used: Option<u64>,
    /// Bytes the backend's allocator held (used, or kept for reuse).
    pub reserved: Option<u64>,
    /// The limit set on the device's memory.
    pub limit: Option<u64>,
}

impl MemoryCounts {
    /// Only the free bytes known (or not).
    pub fn free(free: Option<u64>) -> Box<Self> {
        Box::new(MemoryCounts { free, ..Default::default() })
    }

    /// " (in use 10, reserved 20, limit 30, free 40 bytes)", naming the known ones.
    fn note(&self) -> String {
        let parts: Vec<String> =
            [("in use", self.used), ("reserved", self.reserved), ("limit", self.limit), ("free", self.free)]
                .iter()
                .filter_map(|(name, v)| v.map(|v| format!("{name} {v}")))
                .collect();
        if parts.is_empty() {
            String::new()
        } else {
            format!(" ({} bytes)", parts.join(", "))
        }
    }
}
