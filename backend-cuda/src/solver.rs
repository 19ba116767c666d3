//! cuSOLVER, the CUDA backend's vendor solver ([`RawDevice::vendor_solver`]
//! and [`RawDevice::solver`]; kiln-kernels' `linalg` calls it where the
//! device offers it). Built with the `cusolver` feature (default on);
//! without it the device offers no vendor solver.
//!
//! Each [`SolverOp`] is one of cuSOLVER's dense LAPACK routines (`getrf`,
//! `getrs`, `potrf`, `geqrf`, `orgqr`, `syevd`) in `f32` or `f64`, called
//! once per matrix of the batch on the call's stream, with one work area
//! for the whole batch (the matrices run one after another, so they may
//! share it): the routine's `bufferSize` answer, then a slot for the
//! `info` of the routines whose `info` the call does not ask for.
//!
//! **One handle per opened device**, created at the first call and
//! destroyed when the device is dropped (`cusolverDnDestroy`). Calls take
//! the handle's lock, point it at the call's stream (`cusolverDnSetStream`)
//! and enqueue: the lock is held for the enqueue only, never while the GPU
//! works.
//!
//! Every call into cuSOLVER is in this file, each with its `SAFETY` note.
//! cudarc panics when a library is missing, so the device offers cuSOLVER
//! only where the library loads.
//!
//! [`RawDevice::vendor_solver`]: kiln_core::RawDevice::vendor_solver
//! [`RawDevice::solver`]: kiln_core::RawDevice::solver
//! [`SolverOp`]: kiln_core::SolverOp

pub(crate) use imp::Solver;

#[cfg(feature = "cusolver")]
mod batched;

#[cfg(not(feature = "cusolver"))]
mod imp {
    use std::sync::Arc;

    use kiln_core::{BackendKind, Error, Result, SolverCall, SolverLayout, VendorSolver};

    use crate::state::DeviceState;
    use crate::{Cuda, CudaStream};

    /// No vendor solver: kiln-cuda was built without its `cusolver` feature.
    pub(crate) struct Solver;

    impl Solver {
        pub(crate) fn new(_: Arc<DeviceState>) -> Self {
            Solver
        }

        pub(crate) fn offer(&self) -> Option<VendorSolver> {
            None
        }

        pub(crate) fn work_size(&self, _: &SolverLayout) -> Result<usize> {
            Ok(0)
        }

        /// # Safety
        /// As [`RawDevice::solver`](kiln_core::RawDevice::solver) (nothing is enqueued).
        pub(crate) unsafe fn solve(&self, _: &CudaStream, call: &SolverCall<'_, Cuda>) -> Result<()> {
            Err(Error::unsupported(
                BackendKind::Cuda,
                call.to_string(),
                "kiln-cuda was built without its `cusolver` feature",
            ))
        }
    }
}

#[cfg(feature = "cusolver")]
mod imp {
    use std::ffi::c_int;
    use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

    use cudarc::cusolver::sys::{
        self, cublasFillMode_t as Fill, cublasOperation_t as Op, cusolverEigMode_t as Eig, cusolverStatus_t as Status,
    };
    use kiln_core::{BackendKind, DType, Error, RawBuffer, Result, SolverCall, SolverLayout, SolverOp, VendorSolver};

    use crate::state::DeviceState;
    use crate::{Cuda, CudaStream};

    /// The element types kiln factors with cuSOLVER.
    const PRECISIONS: &[DType] = &[DType::F32, DType::F64];

    /// The bytes kept at the end of a work area for an `info` the caller does not read.
    const INFO_SLOT: usize = 256;

    /// The name kernels faulting inside cuSOLVER are reported under.
    const KERNEL_NAME: &str = "cuSOLVER";

    /// Whether libcusolver can be loaded.
    fn present() -> bool {
        static PRESENT: OnceLock<bool> = OnceLock::new();
        // SAFETY: only tries to load the library under its usual names; no symbol is called.
        *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
    }

    /// A live cuSOLVER handle of the device's context, with the cuBLAS
    /// handle and Jacobi parameters of the batched routines, made at their
    /// first use.
    struct Handle {
        raw: sys::cusolverDnHandle_t,
        kernel: u32,
        blas: Option<cudarc::cublas::sys::cublasHandle_t>,
        syevj: Option<sys::syevjInfo_t>,
    }

    // SAFETY: a cuSOLVER handle may be used from any thread with its context
    // current; kiln uses it under `Solver::handle`'s lock only.
    unsafe impl Send for Handle {}

    /// cuSOLVER for one opened device: its handle, made at the first call.
    pub(crate) struct Solver {
        state: Arc<DeviceState>,
        handle: Mutex<Option<Handle>>,
    }

    /// A cuSOLVER routine that failed and what it answered.
    type Failed = (&'static str, Status);

    fn check(name: &'static str, status: Status) -> std::result::Result<(), Failed> {
        match status {
            Status::CUSOLVER_STATUS_SUCCESS => Ok(()),
            s => Err((name, s)),
        }
    }

    impl Solver {
        pub(crate) fn new(state: Arc<DeviceState>) -> Self {
            Solver { state, handle: Mutex::new(None) }
        }

        /// cuSOLVER, where the library loads.
        pub(crate) fn offer(&self) -> Option<VendorSolver> {
            present().then_some(VendorSolver { name: "cuSOLVER", precisions: PRECISIONS })
        }

        fn lock(&self) -> MutexGuard<'_, Option<Handle>> {
            self.handle.lock().unwrap_or_else(|p| p.into_inner())
        }

        /// The kiln error for routine `name` of `what` failing with `status`.
        fn failed(&self, what: &dyn std::fmt::Display, (name, status): Failed) -> Error {
            match status {
                Status::CUSOLVER_STATUS_ALLOC_FAILED => {
                    self.state.out_of_memory(&format!("cuSOLVER's own memory for {what} (size not known)"), 0)
                }
                Status::CUSOLVER_STATUS_ARCH_MISMATCH | Status::CUSOLVER_STATUS_NOT_SUPPORTED => Error::unsupported(
                    BackendKind::Cuda,
                    format!("{what} on {}", self.state.name),
                    format!("{name}: cuSOLVER answered {status:?}"),
                ),
                Status::CUSOLVER_STATUS_NOT_INITIALIZED => Error::driver(
                    BackendKind::Cuda,
                    name,
                    "CUSOLVER_STATUS_NOT_INITIALIZED: cuSOLVER could not start on this device \
                     (a library built for a newer driver, or no memory for its resources)",
                ),
                status => Error::driver(BackendKind::Cuda, name, format!("{status:?} ({what})")),
            }
        }

        /// The live handle (made now at the first call), with the batched
        /// routines' parts `layout` needs; the context is current.
        fn handle<'g>(
            &self,
            guard: &'g mut MutexGuard<'_, Option<Handle>>,
            layout: &SolverLayout,
        ) -> Result<&'g Handle> {
            if guard.is_none() {
                let mut raw = std::ptr::null_mut();
                // SAFETY: writes a new handle of the current context into `raw`.
                let status = unsafe { sys::cusolverDnCreate(&mut raw) };
                check("cusolverDnCreate", status).map_err(|f| self.failed(&"a cuSOLVER handle", f))?;
                let kernel = self.state.register_kernel(KERNEL_NAME);
                **guard = Some(Handle { raw, kernel, blas: None, syevj: None });
            }
            let h = guard.as_mut().expect("made above");
            if super::batched::runs_batched(layout) {
                if h.blas.is_none() && matches!(layout.op, SolverOp::Lu | SolverOp::LuSolve { .. }) {
                    let blas = cudarc::cublas::result::create_handle()
                        .map_err(|e| Error::driver(BackendKind::Cuda, "cublasCreate_v2", format!("{:?}", e.0)))?;
                    h.blas = Some(blas);
                }
                if h.syevj.is_none() && matches!(layout.op, SolverOp::Eigh { .. }) {
                    let mut params = std::ptr::null_mut();
                    // SAFETY: writes new default Jacobi parameters into `params`.
                    let status = unsafe { sys::cusolverDnCreateSyevjInfo(&mut params) };
                    check("cusolverDnCreateSyevjInfo", status).map_err(|f| self.failed(layout, f))?;
                    h.syevj = Some(params);
                }
            }
            Ok(h)
        }

        /// The work area's length in elements `layout`'s routine asks for.
        fn lwork(&self, h: &Handle, layout: &SolverLayout) -> Result<c_int> {
            // SAFETY: the handle (and its Jacobi parameters, made for a
            // batched eigh) is live and its context current; the size
            // queries read no matrix and write one `int`.
            unsafe {
                if super::batched::runs_batched(layout) {
                    match layout.precision {
                        DType::F64 => super::batched::lwork::<f64>(h.raw, h.syevj, layout),
                        _ => super::batched::lwork::<f32>(h.raw, h.syevj, layout),
                    }
                } else {
                    match layout.precision {
                        DType::F64 => buffer_size::<f64>(h.raw, layout),
                        _ => buffer_size::<f32>(h.raw, layout),
                    }
                }
            }
            .map_err(|f| self.failed(layout, f))
        }

        /// The bytes of work area a call of `layout` needs.
        pub(crate) fn work_size(&self, layout: &SolverLayout) -> Result<usize> {
            if self.offer().is_none_or(|v| !v.supports(layout.precision)) {
                return Ok(0);
            }
            layout.check()?;
            self.state.check_usable()?;
            self.state.bind("cuSOLVER")?;
            let mut guard = self.lock();
            let h = self.handle(&mut guard, layout)?;
            Ok(Regions::of(layout, self.lwork(h, layout)?).total)
        }

        /// Enqueue `call` on `stream`.
        ///
        /// # Safety
        /// As [`RawDevice::solver`](kiln_core::RawDevice::solver).
        pub(crate) unsafe fn solve(&self, stream: &CudaStream, call: &SolverCall<'_, Cuda>) -> Result<()> {
            let layout = call.layout;
            if self.offer().is_none_or(|v| !v.supports(layout.precision)) {
                return Err(Error::unsupported(
                    BackendKind::Cuda,
                    call.to_string(),
                    if present() { "kiln offers cuSOLVER for f32 and f64" } else { "libcusolver is not installed" },
                ));
            }
            if !Arc::ptr_eq(&stream.state, &self.state) {
                return Err(Error::DeviceMismatch {
                    what: call.to_string(),
                    first: self.state.name.clone(),
                    second: format!("the stream's device, {}", stream.state.name),
                });
            }
            call.check()?;
            self.state.check_usable()?;
            self.state.bind("cuSOLVER")?;
            let mut guard = self.lock();
            let h = self.handle(&mut guard, &layout)?;
            let regions = Regions::of(&layout, self.lwork(h, &layout)?);
            let work = match &call.work {
                Some(w) if w.buffer.len().saturating_sub(w.offset) >= regions.total => {
                    w.buffer.device_ptr() + w.offset as u64
                }
                _ => {
                    return Err(Error::invalid(
                        format!("cuSOLVER {call}"),
                        format!("it needs a work area of {} bytes (RawDevice::solver_work_size)", regions.total),
                    ))
                }
            };
            let (handle, kernel, blas, syevj) = (h.raw, h.kernel, h.blas, h.syevj);
            let cu_stream = stream.stream.cu_stream();
            // SAFETY: the handles are live and of this context; the stream is
            // of the same context (checked above).
            let status = unsafe { sys::cusolverDnSetStream(handle, cu_stream as sys::cudaStream_t) };
            check("cusolverDnSetStream", status).map_err(|f| self.failed(call, f))?;
            if let Some(blas) = blas {
                // SAFETY: as above.
                unsafe { cudarc::cublas::result::set_stream(blas, cu_stream as cudarc::cublas::sys::cudaStream_t) }
                    .map_err(|e| Error::driver(BackendKind::Cuda, "cublasSetStream_v2", format!("{:?}", e.0)))?;
            }
            let at =
                |op: &Option<kiln_core::GemmOperand<'_, Cuda>>| op.map(|o| o.buffer.device_ptr() + o.offset as u64);
            let addresses = Addresses {
                a: call.a.buffer.device_ptr() + call.a.offset as u64,
                b: at(&call.b),
                pivots: at(&call.pivots),
                info: at(&call.info),
                work,
                pointers: work + regions.lwork_bytes as u64,
                info_slot: work + (regions.lwork_bytes + regions.pointer_bytes) as u64,
                lwork: (regions.lwork_bytes / layout.precision.size()) as c_int,
            };
            let mut buffers = vec![call.a.buffer];
            buffers.extend([call.b, call.pivots, call.info, call.work].iter().flatten().map(|o| o.buffer));
            let done = crate::memory::library_work(stream, kernel, &buffers, || {
                // SAFETY: the handle is bound to `stream`; every operand lies
                // inside its buffer with the spans the layout gives it (the
                // caller's contract), the work area holds `need` bytes, and
                // nothing else touches them until the call has run.
                unsafe {
                    if super::batched::runs_batched(&layout) {
                        let handles = super::batched::Handles { solver: handle, blas, syevj };
                        match layout.precision {
                            DType::F64 => super::batched::enqueue::<f64>(handles, cu_stream, &layout, &addresses),
                            _ => super::batched::enqueue::<f32>(handles, cu_stream, &layout, &addresses),
                        }
                    } else {
                        match layout.precision {
                            DType::F64 => enqueue::<f64>(handle, &layout, &addresses),
                            _ => enqueue::<f32>(handle, &layout, &addresses),
                        }
                        .map_err(|f| self.failed(call, f))
                    }
                }
            });
            drop(guard);
            done
        }
    }

    impl Drop for Solver {
        fn drop(&mut self) {
            let Some(handle) = self.handle.get_mut().unwrap_or_else(|p| p.into_inner()).take() else {
                return;
            };
            if self.state.is_lost() || self.state.bind("cusolverDnDestroy").is_err() {
                return;
            }
            if let Err(e) = self.state.ctx.synchronize() {
                self.state.defer("waiting for the device before destroying its cuSOLVER handle, so keeping it", e);
                return;
            }
            // SAFETY: made by `cusolverDnCreate`, `cublasCreate` and
            // `cusolverDnCreateSyevjInfo` on this context, which `state` keeps
            // alive and is current and idle; destroyed once (taken above).
            unsafe {
                let _ = sys::cusolverDnDestroy(handle.raw);
                if let Some(blas) = handle.blas {
                    let _ = cudarc::cublas::result::destroy_handle(blas);
                }
                if let Some(params) = handle.syevj {
                    let _ = sys::cusolverDnDestroySyevjInfo(params);
                }
            }
        }
    }

    /// The device addresses of a call's operands.
    pub(super) struct Addresses {
        pub(super) a: u64,
        pub(super) b: Option<u64>,
        pub(super) pivots: Option<u64>,
        pub(super) info: Option<u64>,
        /// The routine's work area (`lwork` elements).
        pub(super) work: u64,
        /// The batched routines' arrays of matrix addresses.
        pub(super) pointers: u64,
        /// Where routines whose `info` the call does not ask for write it.
        pub(super) info_slot: u64,
        /// The routine's work area's length in elements.
        pub(super) lwork: c_int,
    }

    /// How a call's work area is cut: the routine's own work, the arrays
    /// of addresses of the batched routines, then an `info` slot, each
    /// rounded up to `INFO_SLOT` bytes.
    struct Regions {
        lwork_bytes: usize,
        pointer_bytes: usize,
        total: usize,
    }

    impl Regions {
        fn of(layout: &SolverLayout, lwork: c_int) -> Self {
            let round = |b: usize| b.div_ceil(INFO_SLOT) * INFO_SLOT;
            let lwork_bytes = round(usize::try_from(lwork.max(0)).unwrap_or(0) * layout.precision.size());
            let pointer_bytes = if super::batched::runs_batched(layout) { round(2 * 8 * layout.batch) } else { 0 };
            Regions { lwork_bytes, pointer_bytes, total: lwork_bytes + pointer_bytes + INFO_SLOT }
        }
    }

    /// cuSOLVER's routines in one precision.
    trait Lapack: Sized {
        /// # Safety
        /// The handle is live and its context current; the pointers are
        /// cuSOLVER's to read and write as each routine documents.
        unsafe fn call(handle: sys::cusolverDnHandle_t, op: Routine<Self>) -> Status;
    }

    /// One routine's arguments, in LAPACK's order; `Size` variants ask for
    /// the work area's length.
    enum Routine<T> {
        GetrfSize { n: c_int, lwork: *mut c_int },
        Getrf { n: c_int, a: *mut T, work: *mut T, pivots: *mut c_int, info: *mut c_int },
        Getrs { trans: Op, n: c_int, nrhs: c_int, a: *const T, pivots: *const c_int, b: *mut T, info: *mut c_int },
        PotrfSize { fill: Fill, n: c_int, lwork: *mut c_int },
        Potrf { fill: Fill, n: c_int, a: *mut T, work: *mut T, lwork: c_int, info: *mut c_int },
        GeqrfSize { m: c_int, n: c_int, lwork: *mut c_int },
        Geqrf { m: c_int, n: c_int, a: *mut T, tau: *mut T, work: *mut T, lwork: c_int, info: *mut c_int },
        OrgqrSize { m: c_int, n: c_int, k: c_int, lwork: *mut c_int },
        Orgqr { m: c_int, n: c_int, k: c_int, a: *mut T, tau: *const T, work: *mut T, lwork: c_int, info: *mut c_int },
        SyevdSize { jobz: Eig, fill: Fill, n: c_int, lwork: *mut c_int },
        Syevd { jobz: Eig, fill: Fill, n: c_int, a: *mut T, w: *mut T, work: *mut T, lwork: c_int, info: *mut c_int },
    }

    macro_rules! lapack {
        ($t:ty, $getrf_size:ident, $getrf:ident, $getrs:ident, $potrf_size:ident, $potrf:ident,
         $geqrf_size:ident, $geqrf:ident, $orgqr_size:ident, $orgqr:ident, $syevd_size:ident, $syevd:ident) => {
            impl Lapack for $t {
                unsafe fn call(h: sys::cusolverDnHandle_t, op: Routine<Self>) -> Status {
                    use std::ptr::null_mut;
                    // SAFETY: the caller's contract; the size queries read no
                    // matrix, and column-major leading dimensions are the rows.
                    unsafe {
                        match op {
                            Routine::GetrfSize { n, lwork } => sys::$getrf_size(h, n, n, null_mut(), n, lwork),
                            Routine::Getrf { n, a, work, pivots, info } => {
                                sys::$getrf(h, n, n, a, n, work, pivots, info)
                            }
                            Routine::Getrs { trans, n, nrhs, a, pivots, b, info } => {
                                sys::$getrs(h, trans, n, nrhs, a, n, pivots, b, n, info)
                            }
                            Routine::PotrfSize { fill, n, lwork } => sys::$potrf_size(h, fill, n, null_mut(), n, lwork),
                            Routine::Potrf { fill, n, a, work, lwork, info } => {
                                sys::$potrf(h, fill, n, a, n, work, lwork, info)
                            }
                            Routine::GeqrfSize { m, n, lwork } => sys::$geqrf_size(h, m, n, null_mut(), m, lwork),
                            Routine::Geqrf { m, n, a, tau, work, lwork, info } => {
                                sys::$geqrf(h, m, n, a, m, tau, work, lwork, info)
                            }
                            Routine::OrgqrSize { m, n, k, lwork } => {
                                sys::$orgqr_size(h, m, n, k, std::ptr::null(), m, std::ptr::null(), lwork)
                            }
                            Routine::Orgqr { m, n, k, a, tau, work, lwork, info } => {
                                sys::$orgqr(h, m, n, k, a, m, tau, work, lwork, info)
                            }
                            Routine::SyevdSize { jobz, fill, n, lwork } => {
                                sys::$syevd_size(h, jobz, fill, n, std::ptr::null(), n, std::ptr::null(), lwork)
                            }
                            Routine::Syevd { jobz, fill, n, a, w, work, lwork, info } => {
                                sys::$syevd(h, jobz, fill, n, a, n, w, work, lwork, info)
                            }
                        }
                    }
                }
            }
        };
    }

    lapack!(
        f32,
        cusolverDnSgetrf_bufferSize,
        cusolverDnSgetrf,
        cusolverDnSgetrs,
        cusolverDnSpotrf_bufferSize,
        cusolverDnSpotrf,
        cusolverDnSgeqrf_bufferSize,
        cusolverDnSgeqrf,
        cusolverDnSorgqr_bufferSize,
        cusolverDnSorgqr,
        cusolverDnSsyevd_bufferSize,
        cusolverDnSsyevd
    );
    lapack!(
        f64,
        cusolverDnDgetrf_bufferSize,
        cusolverDnDgetrf,
        cusolverDnDgetrs,
        cusolverDnDpotrf_bufferSize,
        cusolverDnDpotrf,
        cusolverDnDgeqrf_bufferSize,
        cusolverDnDgeqrf,
        cusolverDnDorgqr_bufferSize,
        cusolverDnDorgqr,
        cusolverDnDsyevd_bufferSize,
        cusolverDnDsyevd
    );

    pub(super) fn fill(lower: bool) -> Fill {
        if lower {
            Fill::CUBLAS_FILL_MODE_LOWER
        } else {
            Fill::CUBLAS_FILL_MODE_UPPER
        }
    }

    pub(super) fn jobz(vectors: bool) -> Eig {
        if vectors {
            Eig::CUSOLVER_EIG_MODE_VECTOR
        } else {
            Eig::CUSOLVER_EIG_MODE_NOVECTOR
        }
    }

    /// The work-area length (in elements) `layout`'s routine asks for.
    ///
    /// # Safety
    /// `handle` is live and its context current.
    unsafe fn buffer_size<T: Lapack>(
        handle: sys::cusolverDnHandle_t,
        layout: &SolverLayout,
    ) -> std::result::Result<c_int, Failed> {
        // `check` has kept the sizes within `c_int`.
        let (m, n) = (layout.rows as c_int, layout.cols as c_int);
        let mut lwork: c_int = 0;
        let p = &mut lwork as *mut c_int;
        let (name, routine) = match layout.op {
            SolverOp::Lu => ("getrf_bufferSize", Routine::GetrfSize { n, lwork: p }),
            SolverOp::LuSolve { .. } => return Ok(0),
            SolverOp::Cholesky { lower } => ("potrf_bufferSize", Routine::PotrfSize { fill: fill(lower), n, lwork: p }),
            SolverOp::Qr => ("geqrf_bufferSize", Routine::GeqrfSize { m, n, lwork: p }),
            SolverOp::QrQ { reflectors } => {
                ("orgqr_bufferSize", Routine::OrgqrSize { m, n, k: reflectors as c_int, lwork: p })
            }
            SolverOp::Eigh { vectors, lower } => {
                ("syevd_bufferSize", Routine::SyevdSize { jobz: jobz(vectors), fill: fill(lower), n, lwork: p })
            }
        };
        // SAFETY: the caller's contract; the query writes `lwork` only.
        check(name, unsafe { T::call(handle, routine) })?;
        Ok(lwork)
    }

    /// Enqueue `layout`'s routine once per matrix of the batch.
    ///
    /// # Safety
    /// `handle` is live, its context current and bound to the call's
    /// stream; each address holds the elements the layout spans from it,
    /// and the work area `lwork` elements then `INFO_SLOT` bytes.
    unsafe fn enqueue<T: Lapack>(
        handle: sys::cusolverDnHandle_t,
        layout: &SolverLayout,
        at: &Addresses,
    ) -> std::result::Result<(), Failed> {
        let (m, n) = (layout.rows as c_int, layout.cols as c_int);
        let size = std::mem::size_of::<T>() as u64;
        let mat = (layout.rows * layout.cols) as u64 * size;
        let ptr = |base: u64, i: usize, each: u64| (base + i as u64 * each) as *mut T;
        let int = |base: u64, i: usize, each: u64| (base + i as u64 * each * 4) as *mut c_int;
        let work = at.work as *mut T;
        let slot = at.info_slot as *mut c_int;
        let b = at.b.unwrap_or(0);
        for i in 0..layout.batch {
            let a = ptr(at.a, i, mat);
            let (name, routine) = match layout.op {
                SolverOp::Lu => (
                    "getrf",
                    Routine::Getrf {
                        n,
                        a,
                        work,
                        pivots: int(at.pivots.unwrap_or(0), i, n as u64),
                        info: int(at.info.unwrap_or(0), i, 1),
                    },
                ),
                SolverOp::LuSolve { nrhs, transpose } => (
                    "getrs",
                    Routine::Getrs {
                        trans: if transpose { Op::CUBLAS_OP_T } else { Op::CUBLAS_OP_N },
                        n,
                        nrhs: nrhs as c_int,
                        a,
                        pivots: int(at.pivots.unwrap_or(0), i, n as u64),
                        b: ptr(b, i, (layout.cols * nrhs) as u64 * size),
                        info: slot,
                    },
                ),
                SolverOp::Cholesky { lower } => (
                    "potrf",
                    Routine::Potrf {
                        fill: fill(lower),
                        n,
                        a,
                        work,
                        lwork: at.lwork,
                        info: int(at.info.unwrap_or(0), i, 1),
                    },
                ),
                SolverOp::Qr => (
                    "geqrf",
                    Routine::Geqrf {
                        m,
                        n,
                        a,
                        tau: ptr(b, i, m.min(n) as u64 * size),
                        work,
                        lwork: at.lwork,
                        info: slot,
                    },
                ),
                SolverOp::QrQ { reflectors } => (
                    "orgqr",
                    Routine::Orgqr {
                        m,
                        n,
                        k: reflectors as c_int,
                        a,
                        tau: ptr(b, i, reflectors as u64 * size),
                        work,
                        lwork: at.lwork,
                        info: slot,
                    },
                ),
                SolverOp::Eigh { vectors, lower } => (
                    "syevd",
                    Routine::Syevd {
                        jobz: jobz(vectors),
                        fill: fill(lower),
                        n,
                        a,
                        w: ptr(b, i, n as u64 * size),
                        work,
                        lwork: at.lwork,
                        info: int(at.info.unwrap_or(0), i, 1),
                    },
                ),
            };
            // SAFETY: the caller's contract; matrix `i`'s operands lie at
            // their batch offsets inside the spans.
            check(name, unsafe { T::call(handle, routine) })?;
        }
        Ok(())
    }
}
