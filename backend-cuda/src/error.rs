//! CUDA driver codes, sorted into kiln's error kinds by small named functions.
//!
//! Which object and operation a failure belongs to is known only at the call
//! site; these functions decide what kind of failure a code is, and
//! [`describe`] renders it. [`DeviceState::fail`](crate::state::DeviceState::fail)
//! combines both into a [`kiln_core::Error`].

use cudarc::driver::result::DriverError;
use cudarc::driver::sys::CUresult as R;
use kiln_core::{BackendKind, Error};

/// The reason every CUDA call fails on a machine without libcuda.
pub(crate) const NO_DRIVER: &str = "no CUDA driver: libcuda.so not found";

/// Codes after which the context is unusable: a kernel faulted or the hardware
/// failed. Covers `CUDA_ERROR_ILLEGAL_ADDRESS`, `LAUNCH_FAILED`,
/// `MISALIGNED_ADDRESS`, `ILLEGAL_INSTRUCTION`, `INVALID_ADDRESS_SPACE`,
/// `INVALID_PC`, `HARDWARE_STACK_ERROR`, `ASSERT` (a device-side assert),
/// `LAUNCH_TIMEOUT`, `ECC_UNCORRECTABLE`, `NVLINK_UNCORRECTABLE`,
/// `TENSOR_MEMORY_LEAK`, `CONTAINED` and `EXTERNAL_DEVICE`.
pub(crate) fn is_fault(e: DriverError) -> bool {
    matches!(
        e.0,
        R::CUDA_ERROR_ILLEGAL_ADDRESS
            | R::CUDA_ERROR_LAUNCH_FAILED
            | R::CUDA_ERROR_MISALIGNED_ADDRESS
            | R::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | R::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | R::CUDA_ERROR_INVALID_PC
            | R::CUDA_ERROR_HARDWARE_STACK_ERROR
            | R::CUDA_ERROR_ASSERT
            | R::CUDA_ERROR_LAUNCH_TIMEOUT
            | R::CUDA_ERROR_ECC_UNCORRECTABLE
            | R::CUDA_ERROR_NVLINK_UNCORRECTABLE
            | R::CUDA_ERROR_TENSOR_MEMORY_LEAK
            | R::CUDA_ERROR_CONTAINED
            | R::CUDA_ERROR_EXTERNAL_DEVICE
    )
}

/// Codes meaning an allocation found no room: `CUDA_ERROR_OUT_OF_MEMORY`.
pub(crate) fn is_out_of_memory(e: DriverError) -> bool {
    e.0 == R::CUDA_ERROR_OUT_OF_MEMORY
}

/// Codes meaning the driver or device cannot be used at all on this machine:
/// `CUDA_ERROR_NO_DEVICE`, `NOT_INITIALIZED`, `DEINITIALIZED`, `STUB_LIBRARY`,
/// `SYSTEM_DRIVER_MISMATCH`, `COMPAT_NOT_SUPPORTED_ON_DEVICE`,
/// `SYSTEM_NOT_READY`, `DEVICE_UNAVAILABLE`, `DEVICE_NOT_LICENSED`,
/// `INSUFFICIENT_DRIVER`-like `CALL_REQUIRES_NEWER_DRIVER`.
pub(crate) fn is_unavailable(e: DriverError) -> bool {
    matches!(
        e.0,
        R::CUDA_ERROR_NO_DEVICE
            | R::CUDA_ERROR_NOT_INITIALIZED
            | R::CUDA_ERROR_DEINITIALIZED
            | R::CUDA_ERROR_STUB_LIBRARY
            | R::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
            | R::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE
            | R::CUDA_ERROR_SYSTEM_NOT_READY
            | R::CUDA_ERROR_DEVICE_UNAVAILABLE
            | R::CUDA_ERROR_DEVICE_NOT_LICENSED
            | R::CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER
    )
}

/// Codes a launch returns when its shape or resources do not fit the kernel:
/// `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES` (registers or shared memory for the
/// block), `INVALID_VALUE` (a dimension or the shared-memory size),
/// `COOPERATIVE_LAUNCH_TOO_LARGE` and `INVALID_CLUSTER_SIZE`.
pub(crate) fn is_bad_launch(e: DriverError) -> bool {
    matches!(
        e.0,
        R::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
            | R::CUDA_ERROR_INVALID_VALUE
            | R::CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE
            | R::CUDA_ERROR_INVALID_CLUSTER_SIZE
    )
}

/// Codes meaning a module image was refused: `CUDA_ERROR_INVALID_IMAGE`,
/// `INVALID_PTX`, `NO_BINARY_FOR_GPU`, `UNSUPPORTED_PTX_VERSION`,
/// `JIT_COMPILER_NOT_FOUND` and `JIT_COMPILATION_DISABLED`. A cached image that
/// gets one of these is rebuilt.
pub(crate) fn is_bad_image(e: DriverError) -> bool {
    matches!(
        e.0,
        R::CUDA_ERROR_INVALID_IMAGE
            | R::CUDA_ERROR_INVALID_PTX
            | R::CUDA_ERROR_NO_BINARY_FOR_GPU
            | R::CUDA_ERROR_UNSUPPORTED_PTX_VERSION
            | R::CUDA_ERROR_JIT_COMPILER_NOT_FOUND
            | R::CUDA_ERROR_JIT_COMPILATION_DISABLED
    )
}

/// `CUDA_ERROR_NOT_FOUND`: a module has no function of the name asked for.
pub(crate) fn is_not_found(e: DriverError) -> bool {
    e.0 == R::CUDA_ERROR_NOT_FOUND
}

/// `CUDA_ERROR_INVALID_HANDLE`: for events, one that was never recorded.
pub(crate) fn is_invalid_handle(e: DriverError) -> bool {
    e.0 == R::CUDA_ERROR_INVALID_HANDLE
}

/// "CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access was encountered".
pub(crate) fn describe(e: DriverError) -> String {
    // cuGetErrorString lives in libcuda, which cudarc would panic to find missing.
    let text = if crate::ffi::driver_present() {
        e.error_string().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
    } else {
        String::new()
    };
    if text.is_empty() {
        format!("{:?} ({})", e.0, e.0 as u32)
    } else {
        format!("{:?} ({}): {text}", e.0, e.0 as u32)
    }
}

/// A `BackendUnavailable` error for CUDA.
pub(crate) fn unavailable(reason: impl Into<String>) -> Error {
    Error::BackendUnavailable { backend: BackendKind::Cuda, reason: reason.into() }
}

/// The error for a driver call that failed before any device was opened
/// (listing devices, opening one): unavailability where the code says so.
pub(crate) fn before_open(call: &str, e: DriverError) -> Error {
    if is_unavailable(e) {
        unavailable(format!("{call} failed: {}", describe(e)))
    } else {
        Error::driver(BackendKind::Cuda, call, describe(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_fall_into_one_kind_each() {
        let fault = DriverError(R::CUDA_ERROR_ILLEGAL_ADDRESS);
        assert!(is_fault(fault) && !is_out_of_memory(fault) && !is_bad_launch(fault));
        let oom = DriverError(R::CUDA_ERROR_OUT_OF_MEMORY);
        assert!(is_out_of_memory(oom) && !is_fault(oom));
        let none = DriverError(R::CUDA_ERROR_NO_DEVICE);
        assert!(is_unavailable(none) && !is_fault(none));
        let res = DriverError(R::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
        assert!(is_bad_launch(res) && !is_fault(res));
        assert!(matches!(before_open("cuInit", none), Error::BackendUnavailable { .. }));
        assert!(matches!(before_open("cuInit", res), Error::Driver { .. }));
    }
}
