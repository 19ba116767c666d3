//! The batched routines for many small matrices, one call for the whole
//! batch instead of one per matrix: cuBLAS's `getrfBatched` and
//! `getrsBatched` (LU of up to 64 x 64), cuSOLVER's `potrfBatched`
//! (Cholesky of up to 64 x 64) and `syevjBatched` (Jacobi eigenvalues of up
//! to 32 x 32, sorted ascending, to machine precision). The routines that
//! take arrays of matrix addresses find them in the call's work area,
//! copied there on the call's stream before the call.

use std::ffi::c_int;

use cudarc::cublas::sys::{self as blas, cublasStatus_t as BlasStatus};
use cudarc::cusolver::sys::{self, cublasFillMode_t as Fill, cusolverEigMode_t as Eig, cusolverStatus_t as Status};
use cudarc::driver::sys::CUstream;
use kiln_core::{BackendKind, Error, Result, SolverLayout, SolverOp};

use super::imp::{fill, jobz, Addresses};

/// Whether `layout` runs as one batched call: a batch of more than one
/// matrix small enough for the batched routine.
pub(super) fn runs_batched(layout: &SolverLayout) -> bool {
    layout.batch > 1
        && match layout.op {
            SolverOp::Lu | SolverOp::LuSolve { .. } | SolverOp::Cholesky { .. } => layout.cols <= 64,
            SolverOp::Eigh { .. } => layout.cols <= 32,
            SolverOp::Qr | SolverOp::QrQ { .. } => false,
        }
}

/// The handles a batched call uses.
#[derive(Clone, Copy)]
pub(super) struct Handles {
    pub(super) solver: sys::cusolverDnHandle_t,
    pub(super) blas: Option<blas::cublasHandle_t>,
    pub(super) syevj: Option<sys::syevjInfo_t>,
}

/// One precision's batched routines, each a thin call of the library's.
///
/// The contract of every (unsafe) method: the handle is live, its context current and bound to the
/// call's stream; each address (and each address in an array of them, which
/// lies in device memory) holds what the routine reads and writes for `n`,
/// `nrhs` and `batch` column-major matrices of leading dimension `n`; nothing
/// else touches them until the call has run. A host `info` is a valid `int`.
pub(super) trait Batched: Sized {
    /// `getrfBatched`.
    ///
    /// # Safety
    /// The trait's contract.
    unsafe fn getrf(
        h: blas::cublasHandle_t,
        n: c_int,
        a: *const *mut Self,
        p: *mut c_int,
        info: *mut c_int,
        batch: c_int,
    ) -> BlasStatus;
    /// `getrsBatched`.
    ///
    /// # Safety
    /// The trait's contract.
    #[allow(clippy::too_many_arguments, reason = "cuBLAS's arguments")]
    unsafe fn getrs(
        h: blas::cublasHandle_t,
        trans: blas::cublasOperation_t,
        n: c_int,
        nrhs: c_int,
        a: *const *const Self,
        p: *const c_int,
        b: *const *mut Self,
        info: *mut c_int,
        batch: c_int,
    ) -> BlasStatus;
    /// `potrfBatched`.
    ///
    /// # Safety
    /// The trait's contract.
    unsafe fn potrf(
        h: sys::cusolverDnHandle_t,
        fill: Fill,
        n: c_int,
        a: *mut *mut Self,
        info: *mut c_int,
        batch: c_int,
    ) -> Status;
    /// `syevjBatched_bufferSize`.
    ///
    /// # Safety
    /// The trait's contract.
    #[allow(clippy::too_many_arguments, reason = "cuSOLVER's arguments")]
    unsafe fn syevj_size(
        h: sys::cusolverDnHandle_t,
        jobz: Eig,
        fill: Fill,
        n: c_int,
        lwork: *mut c_int,
        params: sys::syevjInfo_t,
        batch: c_int,
    ) -> Status;
    /// `syevjBatched`.
    ///
    /// # Safety
    /// The trait's contract.
    #[allow(clippy::too_many_arguments, reason = "cuSOLVER's arguments")]
    unsafe fn syevj(
        h: sys::cusolverDnHandle_t,
        jobz: Eig,
        fill: Fill,
        n: c_int,
        a: *mut Self,
        w: *mut Self,
        work: *mut Self,
        lwork: c_int,
        info: *mut c_int,
        params: sys::syevjInfo_t,
        batch: c_int,
    ) -> Status;
}

macro_rules! batched {
    ($t:ty, $getrf:ident, $getrs:ident, $potrf:ident, $syevj_size:ident, $syevj:ident) => {
        impl Batched for $t {
            unsafe fn getrf(
                h: blas::cublasHandle_t,
                n: c_int,
                a: *const *mut Self,
                p: *mut c_int,
                info: *mut c_int,
                batch: c_int,
            ) -> BlasStatus {
                // SAFETY: the caller's contract (the trait's methods are thin calls).
                unsafe { blas::$getrf(h, n, a, n, p, info, batch) }
            }
            unsafe fn getrs(
                h: blas::cublasHandle_t,
                trans: blas::cublasOperation_t,
                n: c_int,
                nrhs: c_int,
                a: *const *const Self,
                p: *const c_int,
                b: *const *mut Self,
                info: *mut c_int,
                batch: c_int,
            ) -> BlasStatus {
                // SAFETY: as above.
                unsafe { blas::$getrs(h, trans, n, nrhs, a, n, p, b, n, info, batch) }
            }
            unsafe fn potrf(
                h: sys::cusolverDnHandle_t,
                fill: Fill,
                n: c_int,
                a: *mut *mut Self,
                info: *mut c_int,
                batch: c_int,
            ) -> Status {
                // SAFETY: as above.
                unsafe { sys::$potrf(h, fill, n, a, n, info, batch) }
            }
            unsafe fn syevj_size(
                h: sys::cusolverDnHandle_t,
                jobz: Eig,
                fill: Fill,
                n: c_int,
                lwork: *mut c_int,
                params: sys::syevjInfo_t,
                batch: c_int,
            ) -> Status {
                // SAFETY: as above; the query reads no matrix.
                unsafe {
                    sys::$syevj_size(h, jobz, fill, n, std::ptr::null(), n, std::ptr::null(), lwork, params, batch)
                }
            }
            unsafe fn syevj(
                h: sys::cusolverDnHandle_t,
                jobz: Eig,
                fill: Fill,
                n: c_int,
                a: *mut Self,
                w: *mut Self,
                work: *mut Self,
                lwork: c_int,
                info: *mut c_int,
                params: sys::syevjInfo_t,
                batch: c_int,
            ) -> Status {
                // SAFETY: as above.
                unsafe { sys::$syevj(h, jobz, fill, n, a, n, w, work, lwork, info, params, batch) }
            }
        }
    };
}

batched!(
    f32,
    cublasSgetrfBatched,
    cublasSgetrsBatched,
    cusolverDnSpotrfBatched,
    cusolverDnSsyevjBatched_bufferSize,
    cusolverDnSsyevjBatched
);
batched!(
    f64,
    cublasDgetrfBatched,
    cublasDgetrsBatched,
    cusolverDnDpotrfBatched,
    cusolverDnDsyevjBatched_bufferSize,
    cusolverDnDsyevjBatched
);

/// The work length (elements) a batched `layout` asks for: `syevjBatched`'s
/// for an eigh, none for the others.
///
/// # Safety
/// `solver` is live, its context current, and `syevj` holds live Jacobi
/// parameters for an eigh.
pub(super) unsafe fn lwork<T: Batched>(
    solver: sys::cusolverDnHandle_t,
    syevj: Option<sys::syevjInfo_t>,
    layout: &SolverLayout,
) -> std::result::Result<c_int, (&'static str, Status)> {
    let SolverOp::Eigh { vectors, lower } = layout.op else { return Ok(0) };
    let params = syevj.ok_or(("cusolverDnCreateSyevjInfo", Status::CUSOLVER_STATUS_NOT_INITIALIZED))?;
    let mut lwork = 0;
    let (n, batch) = (layout.cols as c_int, layout.batch as c_int);
    // SAFETY: the caller's contract; writes `lwork` only.
    let status = unsafe { T::syevj_size(solver, jobz(vectors), fill(lower), n, &mut lwork, params, batch) };
    match status {
        Status::CUSOLVER_STATUS_SUCCESS => Ok(lwork),
        s => Err(("syevjBatched_bufferSize", s)),
    }
}

fn blas_failed(name: &str, layout: &SolverLayout, status: BlasStatus) -> Error {
    Error::driver(BackendKind::Cuda, name, format!("{status:?} ({layout})"))
}

fn solver_failed(name: &str, layout: &SolverLayout, status: Status) -> Error {
    Error::driver(BackendKind::Cuda, name, format!("{status:?} ({layout})"))
}

/// Enqueue `layout`'s batched routine on `stream`.
///
/// # Safety
/// The handles are live, their context current and bound to `stream`
/// (`blas` made for an LU, `syevj` for an eigh); each address holds the
/// elements the layout spans from it, the work area its routine's length
/// and then `16 * batch` bytes for the arrays of addresses; nothing else
/// touches them until the call has run.
pub(super) unsafe fn enqueue<T: Batched>(
    h: Handles,
    stream: CUstream,
    layout: &SolverLayout,
    at: &Addresses,
) -> Result<()> {
    let (n, batch) = (layout.cols, layout.batch);
    let size = std::mem::size_of::<T>() as u64;
    let each = (n * n) as u64 * size;
    let a_ptrs: Vec<u64> = (0..batch as u64).map(|i| at.a + i * each).collect();
    let b_ptrs = at.pointers + 8 * batch as u64;
    let upload = |dst: u64, src: &[u64]| {
        // SAFETY: `dst` holds `8 * batch` bytes of the work area; a copy
        // from pageable memory is staged before the call returns, so `src`
        // may go after it.
        unsafe { cudarc::driver::result::memcpy_htod_async(dst, src, stream) }.map_err(|e| {
            Error::driver(BackendKind::Cuda, "cuMemcpyHtoDAsync", format!("{e:?} (the batch's addresses)"))
        })
    };
    let (ni, bi) = (n as c_int, batch as c_int);
    let need_blas = || h.blas.ok_or_else(|| Error::invalid(layout.to_string(), "no cuBLAS handle for a batched LU"));
    // SAFETY (every call below): the caller's contract; the arrays of
    // addresses were copied to the work area on `stream` before the call.
    unsafe {
        match layout.op {
            SolverOp::Lu => {
                upload(at.pointers, &a_ptrs)?;
                let (p, info) = (at.pivots.unwrap_or(0) as *mut c_int, at.info.unwrap_or(0) as *mut c_int);
                match T::getrf(need_blas()?, ni, at.pointers as *const *mut T, p, info, bi) {
                    BlasStatus::CUBLAS_STATUS_SUCCESS => Ok(()),
                    s => Err(blas_failed("getrfBatched", layout, s)),
                }
            }
            SolverOp::LuSolve { nrhs, transpose } => {
                let b_each = (n * nrhs) as u64 * size;
                let bs: Vec<u64> = (0..batch as u64).map(|i| at.b.unwrap_or(0) + i * b_each).collect();
                upload(at.pointers, &a_ptrs)?;
                upload(b_ptrs, &bs)?;
                let trans =
                    if transpose { blas::cublasOperation_t::CUBLAS_OP_T } else { blas::cublasOperation_t::CUBLAS_OP_N };
                let mut host_info: c_int = 0;
                let p = at.pivots.unwrap_or(0) as *const c_int;
                let status = T::getrs(
                    need_blas()?,
                    trans,
                    ni,
                    nrhs as c_int,
                    at.pointers as *const *const T,
                    p,
                    b_ptrs as *const *mut T,
                    &mut host_info,
                    bi,
                );
                match (status, host_info) {
                    (BlasStatus::CUBLAS_STATUS_SUCCESS, 0) => Ok(()),
                    (BlasStatus::CUBLAS_STATUS_SUCCESS, bad) => {
                        Err(Error::invalid(layout.to_string(), format!("getrsBatched refused argument {}", -bad)))
                    }
                    (s, _) => Err(blas_failed("getrsBatched", layout, s)),
                }
            }
            SolverOp::Cholesky { lower } => {
                upload(at.pointers, &a_ptrs)?;
                let info = at.info.unwrap_or(0) as *mut c_int;
                match T::potrf(h.solver, fill(lower), ni, at.pointers as *mut *mut T, info, bi) {
                    Status::CUSOLVER_STATUS_SUCCESS => Ok(()),
                    s => Err(solver_failed("potrfBatched", layout, s)),
                }
            }
            SolverOp::Eigh { vectors, lower } => {
                let params = h
                    .syevj
                    .ok_or_else(|| Error::invalid(layout.to_string(), "no Jacobi parameters for a batched eigh"))?;
                let status = T::syevj(
                    h.solver,
                    jobz(vectors),
                    fill(lower),
                    ni,
                    at.a as *mut T,
                    at.b.unwrap_or(0) as *mut T,
                    at.work as *mut T,
                    at.lwork,
                    at.info.unwrap_or(0) as *mut c_int,
                    params,
                    bi,
                );
                match status {
                    Status::CUSOLVER_STATUS_SUCCESS => Ok(()),
                    s => Err(solver_failed("syevjBatched", layout, s)),
                }
            }
            SolverOp::Qr | SolverOp::QrQ { .. } => {
                Err(Error::invalid(layout.to_string(), "QR has no batched routine here (run one matrix at a time)"))
            }
        }
    }
}
