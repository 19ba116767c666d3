//! cuBLAS, offered to kiln-kernels' `matmul` as the CUDA backend's vendor
//! matrix product (`MatmulStrategy::Cublas`, and `Auto` for large products).
//!
//! kiln's matrices are row-major and cuBLAS's column-major: a row-major
//! `m x k` matrix is the column-major `k x m` matrix of its transpose, so
//! `C = A B` (row-major) is computed as `C^T = B^T A^T` (column-major) with
//! no transposition: `gemm(N, N, n, m, k, B, ldb = n, A, lda = k, C, ldc = n)`.
//! f32 and f64 go through `cublasSgemm`/`cublasDgemm` in their default math
//! mode (plain fp32/fp64, never TF32); f16 and bf16 inputs through
//! `cublasGemmEx` with f32 output and f32 accumulation.
//!
//! Every call into cuBLAS is in this file, each with its `SAFETY` note.
//! cudarc panics when a library is missing, so cuBLAS is registered only
//! where the library loads. One handle per device, kept for the process and
//! used under a lock (its stream is set for each call).

use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard, OnceLock};

use cudarc::cublas::result::{self as cublas, CublasError};
use cudarc::cublas::sys;
use kiln_core::{BackendKind, DType, Error, Result, Stream};
use kiln_kernels::matmul::{register_vendor_matmul, VendorCall, VendorMatmul, VendorOperand};

use crate::{Cuda, CudaBuffer};

/// Whether libcublas can be loaded.
fn present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to load the library under its usual names; no symbol is called.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

/// Register cuBLAS as the CUDA backend's vendor matrix product, where the
/// library is installed (idempotent; called when a device opens).
pub(crate) fn register() {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        if present() {
            register_vendor_matmul(BackendKind::Cuda, VendorMatmul { name: "cuBLAS", supports, run: gemm });
        }
    });
}

/// The input dtypes cuBLAS multiplies here.
fn supports(dtype: DType) -> bool {
    matches!(dtype, DType::F32 | DType::F64 | DType::F16 | DType::BF16)
}

/// A cuBLAS handle; handles are created once per device and never destroyed
/// (they live as long as the process, like the primary contexts they use).
struct Handle(sys::cublasHandle_t);

// SAFETY: a cuBLAS handle may be used from any thread; kiln uses each one
// under the `HANDLES` lock only, so never from two threads at once.
unsafe impl Send for Handle {}

static HANDLES: Mutex<Option<HashMap<usize, Handle>>> = Mutex::new(None);

fn lock() -> MutexGuard<'static, Option<HashMap<usize, Handle>>> {
    HANDLES.lock().unwrap_or_else(|p| p.into_inner())
}

fn failed(call: &str, e: CublasError) -> Error {
    Error::driver(BackendKind::Cuda, call, format!("{:?}", e.0))
}

/// The device address of an operand.
fn address(operand: &VendorOperand<'_>, name: &str) -> Result<u64> {
    let buffer = operand
        .buffer
        .downcast_ref::<CudaBuffer>()
        .ok_or_else(|| Error::invalid(format!("cuBLAS matmul operand {name}"), "the buffer is not a CUDA buffer"))?;
    Ok(buffer.device_ptr() + operand.offset as u64)
}

/// A dimension as cuBLAS's `int`.
fn dim(value: usize, name: &str) -> Result<c_int> {
    c_int::try_from(value).map_err(|_| {
        Error::unsupported(
            BackendKind::Cuda,
            format!("cuBLAS matmul with {name} = {value}"),
            "cuBLAS takes 32-bit dimensions",
        )
    })
}

/// Enqueue `call` on its stream (the vendor hook's `run`).
///
/// # Safety
/// As [`VendorMatmul::run`]: the operands are this backend's buffers on the
/// stream's device, each holding its matrix exactly; `c` overlaps neither
/// input; nothing else writes them until the product has run.
unsafe fn gemm(call: &VendorCall<'_>) -> Result<()> {
    let stream = call
        .stream
        .downcast_ref::<Stream<Cuda>>()
        .ok_or_else(|| Error::invalid("cuBLAS matmul", "the stream is not a CUDA stream"))?;
    let raw = stream.raw();
    let (a, b, c) = (address(&call.a, "a")?, address(&call.b, "b")?, address(&call.c, "c")?);
    let (m, n, k) = (dim(call.m, "m")?, dim(call.n, "n")?, dim(call.k, "k")?);
    raw.state.check_usable()?;
    raw.state.bind("cuBLAS matmul")?;
    let mut guard = lock();
    let handles = guard.get_or_insert_with(HashMap::new);
    let handle = match handles.get(&raw.state.ordinal) {
        Some(h) => h.0,
        None => {
            let h = cublas::create_handle().map_err(|e| failed("cublasCreate_v2", e))?;
            handles.insert(raw.state.ordinal, Handle(h));
            h
        }
    };
    // SAFETY: `handle` is a live handle of this device's context, which is
    // current; the stream belongs to the same context.
    unsafe { cublas::set_stream(handle, raw.stream.cu_stream() as sys::cudaStream_t) }
        .map_err(|e| failed("cublasSetStream_v2", e))?;
    let op = sys::cublasOperation_t::CUBLAS_OP_N;
    match (call.input, call.output) {
        (DType::F32, DType::F32) => {
            let (alpha, beta) = (1.0f32, 0.0f32);
            // SAFETY: the pointers address matrices of the shapes given (the
            // caller's contract), column-major views of the row-major
            // operands as the module docs explain; alpha and beta are host values.
            unsafe {
                cublas::sgemm(
                    handle,
                    op,
                    op,
                    n,
                    m,
                    k,
                    &alpha,
                    b as *const f32,
                    n,
                    a as *const f32,
                    k,
                    &beta,
                    c as *mut f32,
                    n,
                )
            }
            .map_err(|e| failed("cublasSgemm_v2", e))
        }
        (DType::F64, DType::F64) => {
            let (alpha, beta) = (1.0f64, 0.0f64);
            // SAFETY: as for sgemm.
            unsafe {
                cublas::dgemm(
                    handle,
                    op,
                    op,
                    n,
                    m,
                    k,
                    &alpha,
                    b as *const f64,
                    n,
                    a as *const f64,
                    k,
                    &beta,
                    c as *mut f64,
                    n,
                )
            }
            .map_err(|e| failed("cublasDgemm_v2", e))
        }
        (DType::F16 | DType::BF16, DType::F32) => {
            let input =
                if call.input == DType::F16 { sys::cudaDataType::CUDA_R_16F } else { sys::cudaDataType::CUDA_R_16BF };
            let (alpha, beta) = (1.0f32, 0.0f32);
            // SAFETY: as for sgemm; alpha and beta are f32, the compute type's scalars.
            unsafe {
                cublas::gemm_ex(
                    handle,
                    op,
                    op,
                    n,
                    m,
                    k,
                    &alpha as *const f32 as *const c_void,
                    b as *const c_void,
                    input,
                    n,
                    a as *const c_void,
                    input,
                    k,
                    &beta as *const f32 as *const c_void,
                    c as *mut c_void,
                    sys::cudaDataType::CUDA_R_32F,
                    n,
                    sys::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            }
            .map_err(|e| failed("cublasGemmEx", e))
        }
        (input, output) => Err(Error::unsupported(
            BackendKind::Cuda,
            format!("cuBLAS matmul of {input} into {output}"),
            "kiln offers cuBLAS for f32, f64, and f16 or bf16 into f32",
        )),
    }
}
