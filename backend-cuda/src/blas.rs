//! cuBLAS, the CUDA backend's vendor GEMM ([`RawDevice::vendor_gemm`] and
//! [`RawDevice::gemm`]; kiln-kernels' `matmul` calls it for its `Vendor`
//! strategy, and for large products under `Auto`). Built with the `cublas`
//! feature (default on); without it the device offers no vendor GEMM.
//!
//! kiln's matrices are row-major and cuBLAS's column-major: a row-major
//! `m x k` matrix is the column-major `k x m` matrix of its transpose, so
//! `C = A B` (row-major) is computed as `C^T = B^T A^T` (column-major) with
//! no transposition: `gemm(N, N, n, m, k, B, ldb = n, A, lda = k, C, ldc = n)`;
//! an operand kiln stores transposed takes cuBLAS's `T`, and every call is
//! one `cublasGemmStridedBatchedEx` (a batch of one for a single product).
//! f32 products take `CUBLAS_COMPUTE_32F` (plain fp32: the handle keeps the
//! default math mode, which never uses TF32) unless the call's
//! [`Precision`](kiln_core::Precision) allows TF32 or bf16
//! (`CUBLAS_COMPUTE_32F_FAST_TF32`, `_FAST_16BF`); f64 takes
//! `CUBLAS_COMPUTE_64F` (the FP64 tensor cores, exact fp64 FMA); f16 and
//! bf16 inputs take f32 accumulation into f32 or their own type.
//!
//! **One handle per opened device**, created at the first product and
//! destroyed when the device is dropped (`cublasDestroy`, which waits for the
//! device's work). Calls take the handle's lock, point it at the call's
//! stream (`cublasSetStream`, a host-side assignment) and enqueue: the lock is
//! held for the enqueue only, never while the GPU works, and a handle per
//! stream would cost each stream a handle and its workspace, and tie the
//! streams' lifetimes to cuBLAS's, for no overlap the lock prevents. A
//! failed creation is not remembered: the next call tries again.
//!
//! Every call into cuBLAS is in this file, each with its `SAFETY` note.
//! cudarc panics when a library is missing, so the device offers cuBLAS only
//! where the library loads.
//!
//! [`RawDevice::vendor_gemm`]: kiln_core::RawDevice::vendor_gemm
//! [`RawDevice::gemm`]: kiln_core::RawDevice::gemm

use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) use imp::Blas;

static CREATED: AtomicU64 = AtomicU64::new(0);
static DESTROYED: AtomicU64 = AtomicU64::new(0);

/// How many cuBLAS handles kiln has created and destroyed in this process
/// so far, for leak checks: a device creates one at its first product and
/// destroys it when dropped, so `created - destroyed` handles are alive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CublasHandles {
    /// Handles created (`cublasCreate`).
    pub created: u64,
    /// Handles destroyed (`cublasDestroy`), or released with a context
    /// that faulted (whose handles go with it).
    pub destroyed: u64,
}

/// The counts of cuBLAS handles so far (zero without the `cublas` feature).
///
/// # Examples
/// ```
/// let now = kiln_cuda::cublas_handles();
/// assert!(now.destroyed <= now.created);
/// ```
pub fn cublas_handles() -> CublasHandles {
    // Destroyed first: a handle is counted destroyed only after created.
    let destroyed = DESTROYED.load(Ordering::Acquire);
    CublasHandles { created: CREATED.load(Ordering::Acquire), destroyed }
}

#[cfg(not(feature = "cublas"))]
mod imp {
    use std::sync::Arc;

    use kiln_core::{BackendKind, Error, Gemm, Result, VendorGemm};

    use crate::state::DeviceState;
    use crate::{Cuda, CudaStream};

    /// No vendor GEMM: kiln-cuda was built without its `cublas` feature.
    pub(crate) struct Blas;

    impl Blas {
        pub(crate) fn new(_: Arc<DeviceState>, _: u32) -> Self {
            Blas
        }

        pub(crate) fn offer(&self) -> Option<VendorGemm> {
            None
        }

        /// # Safety
        /// As [`RawDevice::gemm`](kiln_core::RawDevice::gemm) (nothing is enqueued).
        pub(crate) unsafe fn gemm(&self, _: &CudaStream, call: &Gemm<'_, Cuda>) -> Result<()> {
            Err(Error::unsupported(
                BackendKind::Cuda,
                call.to_string(),
                "kiln-cuda was built without its `cublas` feature",
            ))
        }
    }
}

#[cfg(feature = "cublas")]
mod imp {
    use std::ffi::{c_int, c_void};
    use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

    use cudarc::cublas::result::{self as cublas, CublasError};
    use cudarc::cublas::sys::{self, cublasStatus_t as Status};
    use kiln_core::{BackendKind, DType, Error, Gemm, GemmOperand, MatrixLayout, Precision, Result, VendorGemm};

    use crate::state::DeviceState;
    use crate::{Cuda, CudaBuffer, CudaStream};

    /// What kiln multiplies with cuBLAS: (input, output) dtypes.
    const PRODUCTS: &[(DType, DType)] = &[
        (DType::F32, DType::F32),
        (DType::F64, DType::F64),
        (DType::F16, DType::F32),
        (DType::BF16, DType::F32),
        (DType::F16, DType::F16),
        (DType::BF16, DType::BF16),
    ];

    /// The modes cuBLAS has a faster path for: its TF32 and bf16 tensor-core
    /// paths for f32 inputs (`CUBLAS_COMPUTE_32F_FAST_TF32`, `_FAST_16BF`).
    const FASTER: &[Precision] = &[Precision::Tf32, Precision::Bf16];

    /// The name kernels faulting inside cuBLAS are reported under.
    const KERNEL_NAME: &str = "cuBLAS GEMM";

    /// Whether libcublas can be loaded.
    fn present() -> bool {
        static PRESENT: OnceLock<bool> = OnceLock::new();
        // SAFETY: only tries to load the library under its usual names; no symbol is called.
        *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
    }

    /// A live cuBLAS handle of the device's context, and the id its kernels
    /// are reported under when a fault surfaces.
    struct Handle {
        raw: sys::cublasHandle_t,
        kernel: u32,
    }

    // SAFETY: a cuBLAS handle may be used from any thread with its context
    // current; kiln uses it under `Blas::handle`'s lock only, so never from
    // two threads at once.
    unsafe impl Send for Handle {}

    /// cuBLAS for one opened device: its handle, created at the first product
    /// and destroyed with the device.
    pub(crate) struct Blas {
        /// Keeps the context alive until the handle is destroyed.
        state: Arc<DeviceState>,
        handle: Mutex<Option<Handle>>,
        /// cuBLASLt, for the scaled products of 8-bit floats.
        lt: crate::blas_lt::BlasLt,
    }

    impl Blas {
        /// cuBLAS for the device of `state`, of compute capability `cc`
        /// (major * 10 + minor).
        pub(crate) fn new(state: Arc<DeviceState>, cc: u32) -> Self {
            let lt = crate::blas_lt::BlasLt::new(state.clone(), cc);
            Blas { state, handle: Mutex::new(None), lt }
        }

        /// cuBLAS, where the library loads, with cuBLASLt's scaled products
        /// where it offers them.
        pub(crate) fn offer(&self) -> Option<VendorGemm> {
            present().then(|| VendorGemm {
                name: "cuBLAS",
                products: PRODUCTS,
                faster: FASTER,
                scaled: self.lt.offered(),
            })
        }

        /// Hand what the stream-ordered pool keeps unused back to the driver.
        fn trim_pool(&self) {
            if self.state.pooled {
                let _ = crate::ffi::trim_pool(self.state.ctx.cu_device(), 0);
            }
        }

        fn lock(&self) -> MutexGuard<'_, Option<Handle>> {
            self.handle.lock().unwrap_or_else(|p| p.into_inner())
        }

        /// The kiln error for cuBLAS call `call` failing with `e`:
        ///
        /// - `CUBLAS_STATUS_ALLOC_FAILED`: `OutOfMemory` (the handle's
        ///   resources or its workspace, of a size cuBLAS does not say);
        /// - `CUBLAS_STATUS_ARCH_MISMATCH`, `CUBLAS_STATUS_NOT_SUPPORTED`: `Unsupported`;
        /// - `CUBLAS_STATUS_NOT_INITIALIZED` (at creation: the library could
        ///   not start on this driver or device) and every other code: `Driver`,
        ///   with the code's name.
        fn failed(&self, call: &str, e: CublasError) -> Error {
            match e.0 {
                Status::CUBLAS_STATUS_ALLOC_FAILED => {
                    self.state.out_of_memory(&format!("cuBLAS's own memory for {call} (size not known)"), 0)
                }
                Status::CUBLAS_STATUS_ARCH_MISMATCH | Status::CUBLAS_STATUS_NOT_SUPPORTED => Error::unsupported(
                    BackendKind::Cuda,
                    format!("{call} on {}", self.state.name),
                    format!("cuBLAS answered {:?}", e.0),
                ),
                Status::CUBLAS_STATUS_NOT_INITIALIZED => Error::driver(
                    BackendKind::Cuda,
                    call,
                    "CUBLAS_STATUS_NOT_INITIALIZED: cuBLAS could not start on this device \
                     (a library built for a newer driver, or no memory for its resources)",
                ),
                status => Error::driver(BackendKind::Cuda, call, format!("{status:?}")),
            }
        }

        /// Enqueue `call` on `stream`.
        ///
        /// # Safety
        /// As [`RawDevice::gemm`](kiln_core::RawDevice::gemm).
        pub(crate) unsafe fn gemm(&self, stream: &CudaStream, call: &Gemm<'_, Cuda>) -> Result<()> {
            if call.scaled.is_some() {
                // SAFETY: the caller keeps this method's contract, which `BlasLt::gemm` shares.
                return unsafe { self.lt.gemm(stream, call) };
            }
            if self.offer().is_none_or(|v| !v.supports(call.input, call.output)) {
                return Err(Error::unsupported(
                    BackendKind::Cuda,
                    call.to_string(),
                    if present() {
                        "kiln offers cuBLAS for f32, f64, and f16 or bf16 into f32 or themselves"
                    } else {
                        "libcublas is not installed"
                    },
                ));
            }
            if !Arc::ptr_eq(&stream.state, &self.state) {
                return Err(Error::DeviceMismatch {
                    what: call.to_string(),
                    first: self.state.name.clone(),
                    second: format!("the stream's device, {}", stream.state.name),
                });
            }
            // Cheap, and the bounds are what keeps a wrong call from writing
            // past a buffer, so checked here as well as by the caller.
            call.check()?;
            self.state.check_usable()?;
            self.state.bind("cuBLAS GEMM")?;
            // Held until the product is enqueued: the handle's stream is ours till then.
            let mut guard = self.lock();
            let (handle, kernel) = match guard.as_ref() {
                Some(h) => (h.raw, h.kernel),
                None => {
                    let raw = match cublas::create_handle() {
                        Err(e) if e.0 == Status::CUBLAS_STATUS_ALLOC_FAILED => {
                            self.trim_pool();
                            cublas::create_handle()
                        }
                        created => created,
                    };
                    let raw = raw.map_err(|e| self.failed("cublasCreate_v2", e))?;
                    super::CREATED.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
                    let kernel = self.state.register_kernel(KERNEL_NAME);
                    *guard = Some(Handle { raw, kernel });
                    (raw, kernel)
                }
            };
            // SAFETY: `handle` is a live handle of this device's context, which
            // is current; the stream belongs to the same context (checked above).
            unsafe { cublas::set_stream(handle, stream.stream.cu_stream() as sys::cudaStream_t) }
                .map_err(|e| self.failed("cublasSetStream_v2", e))?;
            let buffers = [call.a.buffer, call.b.buffer, call.c.buffer];
            let done = crate::memory::library_work(stream, kernel, &buffers, || {
                // SAFETY: the handle is this device's and bound to `stream`; the
                // operands are this device's buffers, each matrix inside its
                // buffer and `c` apart from `a` and `b` (checked above), and
                // nothing else touches them until the product has run (caller's contract).
                let mut done = unsafe { enqueue(handle, call) };
                if matches!(done, Err(Failed::Cublas(_, e)) if e.0 == Status::CUBLAS_STATUS_ALLOC_FAILED) {
                    // No room for cuBLAS's workspace: hand back what the pool
                    // keeps unused and try once more, as an allocation does.
                    self.trim_pool();
                    // SAFETY: as above; the failed call enqueued no product.
                    done = unsafe { enqueue(handle, call) };
                }
                done.map_err(|failed| match failed {
                    Failed::Cublas(name, e) => self.failed(name, e),
                    Failed::Kiln(e) => e,
                })
            });
            drop(guard);
            done
        }
    }

    impl Drop for Blas {
        fn drop(&mut self) {
            let Some(handle) = self.handle.get_mut().unwrap_or_else(|p| p.into_inner()).take() else {
                return;
            };
            super::DESTROYED.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
            // A faulted context refuses every call; the handle goes with it.
            if self.state.is_lost() || self.state.bind("cublasDestroy_v2").is_err() {
                return;
            }
            // SAFETY: the handle was created by `create_handle` on this
            // context, which `state` keeps alive and is current, and is
            // destroyed once (taken out above). cublasDestroy waits for the
            // device's work, so no product using its workspace is in flight.
            // A failure here has no one left to report to (the device is
            // gone) and leaves only the handle's memory behind.
            let _ = unsafe { cublas::destroy_handle(handle.raw) };
        }
    }

    /// A size as cuBLAS's `int`.
    fn dim(value: usize, name: &str) -> Result<c_int> {
        c_int::try_from(value).map_err(|_| {
            Error::unsupported(
                BackendKind::Cuda,
                format!("cuBLAS GEMM with {name} = {value}"),
                "cuBLAS takes 32-bit sizes and leading dimensions",
            )
        })
    }

    /// The device address of an operand's first element.
    fn address(buffer: &CudaBuffer, offset: usize) -> u64 {
        buffer.device_ptr() + offset as u64
    }

    /// What cuBLAS is told about one operand: its operation, leading
    /// dimension and batch stride. A stored matrix of one row takes any
    /// leading dimension in kiln, but not in cuBLAS: it is given its width.
    struct Side {
        op: sys::cublasOperation_t,
        ld: c_int,
        stride: i64,
    }

    fn side(layout: &MatrixLayout, rows: usize, cols: usize, name: &str) -> Result<Side> {
        let (r, c) = layout.stored(rows, cols);
        let ld = if r > 1 { layout.ld } else { c.max(1) };
        let op =
            if layout.transposed { sys::cublasOperation_t::CUBLAS_OP_T } else { sys::cublasOperation_t::CUBLAS_OP_N };
        let stride = i64::try_from(layout.stride).map_err(|_| {
            Error::unsupported(
                BackendKind::Cuda,
                format!("cuBLAS GEMM with {name}'s stride {}", layout.stride),
                "over 2^63",
            )
        })?;
        Ok(Side { op, ld: dim(ld, &format!("{name}'s leading dimension"))?, stride })
    }

    /// The cuBLAS types of a call: (a and b, c, compute type), and whether
    /// alpha and beta are f64 (else f32). `None` outside [`PRODUCTS`].
    fn types(call: &Gemm<'_, Cuda>) -> Option<(sys::cudaDataType, sys::cudaDataType, sys::cublasComputeType_t, bool)> {
        use sys::cublasComputeType_t as C;
        use sys::cudaDataType as D;
        let data = |dtype| match dtype {
            DType::F32 => Some(D::CUDA_R_32F),
            DType::F64 => Some(D::CUDA_R_64F),
            DType::F16 => Some(D::CUDA_R_16F),
            DType::BF16 => Some(D::CUDA_R_16BF),
            _ => None,
        };
        if !PRODUCTS.contains(&(call.input, call.output)) {
            return None;
        }
        let compute = match (call.input, call.shape.precision) {
            (DType::F64, _) => C::CUBLAS_COMPUTE_64F,
            (DType::F32, Precision::Tf32) => C::CUBLAS_COMPUTE_32F_FAST_TF32,
            (DType::F32, Precision::Bf16) => C::CUBLAS_COMPUTE_32F_FAST_16BF,
            // Plain fp32 arithmetic: the handle's math mode is the default,
            // which never rounds to TF32.
            _ => C::CUBLAS_COMPUTE_32F,
        };
        Some((data(call.input)?, data(call.output)?, compute, call.input == DType::F64))
    }

    /// Enqueue the products on the stream `handle` is bound to, in batches
    /// of at most `c_int::MAX`; the failing call's name with the error.
    ///
    /// kiln's row-major `c = a . b` is cuBLAS's column-major
    /// `c^T = b^T . a^T`: b first, then a, each with its own operation.
    ///
    /// # Safety
    /// - `handle` is live, its context current and its stream the call's.
    /// - `call` has passed `Gemm::check`, its dtypes are one of
    ///   [`PRODUCTS`], and its buffers belong to the handle's context and
    ///   are not touched by other work until the product has run.
    unsafe fn enqueue(handle: sys::cublasHandle_t, call: &Gemm<'_, Cuda>) -> std::result::Result<(), Failed> {
        let shape = &call.shape;
        let Some((input, output, compute, double)) = types(call) else {
            // Refused before any call gets here.
            return Err(Failed::Kiln(Error::unsupported(BackendKind::Cuda, call.to_string(), "not a cuBLAS product")));
        };
        let sides = (|| {
            Ok::<_, Error>((
                side(&shape.a, shape.m, shape.k, "a")?,
                side(&shape.b, shape.k, shape.n, "b")?,
                side(&shape.c, shape.m, shape.n, "c")?,
                [dim(shape.m, "m")?, dim(shape.n, "n")?, dim(shape.k, "k")?],
            ))
        })();
        let (sa, sb, sc, [m, n, k]) = sides.map_err(Failed::Kiln)?;
        let (one64, zero64, one32, zero32) = (1.0f64, 0.0f64, 1.0f32, 0.0f32);
        let (alpha, beta) = if double {
            (&one64 as *const f64 as *const c_void, &zero64 as *const f64 as *const c_void)
        } else {
            (&one32 as *const f32 as *const c_void, &zero32 as *const f32 as *const c_void)
        };
        let (isize, osize) = (call.input.size() as u64, call.output.size() as u64);
        let mut first = 0usize;
        while first < shape.batch {
            let count = (shape.batch - first).min(c_int::MAX as usize);
            let at = |op: &GemmOperand<'_, Cuda>, stride: i64, size: u64| {
                address(op.buffer, op.offset) + first as u64 * stride as u64 * size
            };
            let (a, b, c) =
                (at(&call.a, sa.stride, isize), at(&call.b, sb.stride, isize), at(&call.c, sc.stride, osize));
            // SAFETY: the pointers address `count` matrices of the shapes
            // and layouts given, inside their buffers (`check`, the
            // caller's contract), column-major views of the row-major
            // operands as the module docs explain; alpha and beta are host
            // values of the compute type's scale type.
            unsafe {
                cublas::gemm_strided_batched_ex(
                    handle,
                    sb.op,
                    sa.op,
                    n,
                    m,
                    k,
                    alpha,
                    b as *const c_void,
                    input,
                    sb.ld,
                    sb.stride,
                    a as *const c_void,
                    input,
                    sa.ld,
                    sa.stride,
                    beta,
                    c as *mut c_void,
                    output,
                    sc.ld,
                    sc.stride,
                    count as c_int,
                    compute,
                    sys::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            }
            .map_err(|e| Failed::Cublas("cublasGemmStridedBatchedEx", e))?;
            first += count;
        }
        Ok(())
    }

    /// Why [`enqueue`] failed: cuBLAS's answer to a call, or a size cuBLAS
    /// cannot take.
    enum Failed {
        Cublas(&'static str, CublasError),
        Kiln(Error),
    }
}
