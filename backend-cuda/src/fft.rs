//! cuFFT, the CUDA backend's vendor FFT ([`RawDevice::vendor_fft`] and
//! [`RawDevice::fft`]; kiln-kernels' `fft` calls it where the device offers
//! it). Built with the `cufft` feature (default on); without it the device
//! offers no vendor FFT.
//!
//! **One plan per layout.** A call's [`FftLayout`](kiln_core::FftLayout) is
//! cuFFT's advanced layout (`plan.rs` converts it), and each distinct layout
//! gets one plan (`cufftCreate`, `cufftSetAutoAllocation(0)`,
//! `cufftMakePlanMany64`), made at its first call, kept in the device's
//! cache and destroyed when the device is dropped (`cufftDestroy`, after a
//! context synchronize: no transform may still be reading the plan's
//! tables). The cache keeps every layout met; a failed creation is not
//! remembered: the next call tries again.
//!
//! **A work area per call.** Plans own no scratch memory: the device says
//! each plan's size ([`RawDevice::fft_work_size`]), and each call brings a
//! work area of that size ([`FftCall::work`]; kiln-core's `Stream` takes it
//! from kiln's stream-ordered memory on the call's stream, a buffer like any
//! other, counted in `MemoryStats` and held to their limit, and frees it
//! behind the transform). The call points the plan at it
//! (`cufftSetWorkArea`), so two streams transforming with one plan never
//! share scratch.
//!
//! **A lock per plan.** Calls take their plan's lock, point it at the
//! call's stream (`cufftSetStream`) and work area and enqueue: the lock is
//! held for the enqueue only, never while the GPU works, and calls of other
//! layouts never wait for it.
//!
//! Every call into cuFFT is in this file, each with its `SAFETY` note.
//! cudarc panics when a library is missing, so the device offers cuFFT only
//! where the library loads.
//!
//! [`RawDevice::vendor_fft`]: kiln_core::RawDevice::vendor_fft
//! [`RawDevice::fft`]: kiln_core::RawDevice::fft
//! [`RawDevice::fft_work_size`]: kiln_core::RawDevice::fft_work_size
//! [`FftCall::work`]: kiln_core::FftCall::work

use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) use imp::Fft;

#[cfg(feature = "cufft")]
mod plan;
#[cfg(feature = "cufft")]
mod ranges;

static CREATED: AtomicU64 = AtomicU64::new(0);
static DESTROYED: AtomicU64 = AtomicU64::new(0);

/// How many cuFFT plans kiln has created and destroyed in this process so
/// far, for leak checks: a device creates one at the first call of each
/// distinct layout and destroys them all when dropped, so
/// `created - destroyed` plans are alive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CufftPlans {
    /// Plans created (`cufftCreate`).
    pub created: u64,
    /// Plans destroyed (`cufftDestroy`), or released with a context that
    /// faulted (whose plans go with it).
    pub destroyed: u64,
}

/// The counts of cuFFT plans so far (zero without the `cufft` feature).
///
/// # Examples
/// ```
/// let now = kiln_cuda::cufft_plans();
/// assert!(now.destroyed <= now.created);
/// ```
pub fn cufft_plans() -> CufftPlans {
    // Destroyed first: a plan is counted destroyed only after created.
    let destroyed = DESTROYED.load(Ordering::Acquire);
    CufftPlans { created: CREATED.load(Ordering::Acquire), destroyed }
}

#[cfg(not(feature = "cufft"))]
mod imp {
    use std::sync::Arc;

    use kiln_core::{BackendKind, Error, FftCall, FftLayout, Result, VendorFft};

    use crate::state::DeviceState;
    use crate::{Cuda, CudaStream};

    /// No vendor FFT: kiln-cuda was built without its `cufft` feature.
    pub(crate) struct Fft;

    impl Fft {
        pub(crate) fn new(_: Arc<DeviceState>) -> Self {
            Fft
        }

        pub(crate) fn offer(&self) -> Option<VendorFft> {
            None
        }

        pub(crate) fn work_size(&self, _: &FftLayout) -> Result<usize> {
            Ok(0)
        }

        /// # Safety
        /// As [`RawDevice::fft`](kiln_core::RawDevice::fft) (nothing is enqueued).
        pub(crate) unsafe fn fft(&self, _: &CudaStream, call: &FftCall<'_, Cuda>) -> Result<()> {
            Err(Error::unsupported(
                BackendKind::Cuda,
                call.to_string(),
                "kiln-cuda was built without its `cufft` feature",
            ))
        }
    }
}

#[cfg(feature = "cufft")]
mod imp {
    use std::collections::HashMap;
    use std::ffi::{c_int, c_void};
    use std::fmt;
    use std::sync::atomic::Ordering;
    use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

    use cudarc::cufft::result::{self as cufft, CufftError};
    use cudarc::cufft::sys::{self, cufftResult as Status};
    use kiln_core::{
        BackendKind, DType, Error, FftCall, FftDirection, FftKind, FftLayout, RawBuffer, Result, VendorFft,
    };

    use super::plan::{plan_params, PlanParams};
    use crate::state::DeviceState;
    use crate::{Cuda, CudaStream};

    /// The real types kiln transforms with cuFFT (complex c64 and c128).
    const PRECISIONS: &[DType] = &[DType::F32, DType::F64];

    /// cuFFT's exponent signs (`CUFFT_FORWARD`, `CUFFT_INVERSE`).
    const FORWARD: c_int = -1;
    const INVERSE: c_int = 1;

    /// Whether libcufft can be loaded.
    fn present() -> bool {
        static PRESENT: OnceLock<bool> = OnceLock::new();
        // SAFETY: only tries to load the library under its usual names; no symbol is called.
        *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
    }

    /// A live cuFFT plan of the device's context: its work-area size and
    /// the id its kernels are reported under when a fault surfaces.
    struct Plan {
        raw: sys::cufftHandle,
        work: usize,
        kernel: u32,
    }

    /// One layout's plan, `None` until made (or after a failed creation).
    type Slot = Arc<Mutex<Option<Plan>>>;

    fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// cuFFT for one opened device: its plans, by layout, made at each
    /// layout's first call and destroyed with the device.
    pub(crate) struct Fft {
        /// Keeps the context alive until the plans are destroyed.
        state: Arc<DeviceState>,
        plans: Mutex<HashMap<FftLayout, Slot>>,
    }

    impl Fft {
        /// cuFFT for the device of `state`.
        pub(crate) fn new(state: Arc<DeviceState>) -> Self {
            Fft { state, plans: Mutex::default() }
        }

        /// cuFFT, where the library loads.
        pub(crate) fn offer(&self) -> Option<VendorFft> {
            present().then_some(VendorFft { name: "cuFFT", precisions: PRECISIONS })
        }

        /// Hand what the stream-ordered pool keeps unused back to the driver.
        fn trim_pool(&self) {
            if self.state.pooled {
                let _ = crate::ffi::trim_pool(self.state.ctx.cu_device(), 0);
            }
        }

        /// The kiln error for cuFFT function `function` failing with `e`
        /// while doing `what` (the call or the plan's layout):
        ///
        /// - `CUFFT_ALLOC_FAILED`: `OutOfMemory` (cuFFT's own memory, its
        ///   plan's tables, of a size cuFFT does not say);
        /// - `CUFFT_INVALID_SIZE`, `CUFFT_INVALID_TYPE`, `CUFFT_NOT_SUPPORTED`,
        ///   `CUFFT_NOT_IMPLEMENTED`: `Unsupported`;
        /// - `CUFFT_SETUP_FAILED` (cuFFT could not start on this driver or
        ///   device), `CUFFT_EXEC_FAILED` (its kernels did not launch) and
        ///   every other code: `Driver`, with the code's name.
        fn failed(&self, function: &str, what: &dyn fmt::Display, e: CufftError) -> Error {
            match e.0 {
                Status::CUFFT_ALLOC_FAILED => {
                    self.state.out_of_memory(&format!("cuFFT's own memory for {function} ({what}; size not known)"), 0)
                }
                Status::CUFFT_INVALID_SIZE
                | Status::CUFFT_INVALID_TYPE
                | Status::CUFFT_NOT_SUPPORTED
                | Status::CUFFT_NOT_IMPLEMENTED => Error::unsupported(
                    BackendKind::Cuda,
                    format!("{what} on {}", self.state.name),
                    format!("{function}: cuFFT answered {:?}", e.0),
                ),
                Status::CUFFT_SETUP_FAILED => Error::driver(
                    BackendKind::Cuda,
                    function,
                    "CUFFT_SETUP_FAILED: cuFFT could not start on this device \
                     (a library built for a newer driver, or no memory for its resources)",
                ),
                Status::CUFFT_EXEC_FAILED => Error::driver(
                    BackendKind::Cuda,
                    function,
                    format!("CUFFT_EXEC_FAILED: cuFFT could not launch the kernels of {what}"),
                ),
                status => Error::driver(BackendKind::Cuda, function, format!("{status:?} ({what})")),
            }
        }

        /// The slot of `layout`'s plan, added empty at its first call.
        fn slot(&self, layout: &FftLayout) -> Slot {
            lock(&self.plans).entry(*layout).or_default().clone()
        }

        /// A new plan for `layout`; the context is current.
        fn create(&self, layout: &FftLayout) -> Result<Plan> {
            let params = plan_params(layout)?;
            let made = match make(&params) {
                Err(("cufftMakePlanMany64", e)) if e.0 == Status::CUFFT_ALLOC_FAILED => {
                    // No room for the plan's tables: hand back what the pool
                    // keeps unused and try once more, as an allocation does.
                    self.trim_pool();
                    make(&params)
                }
                made => made,
            };
            let (raw, work) =
                made.map_err(|(function, e)| self.failed(function, &format_args!("the plan of {layout}"), e))?;
            let kernel = self.state.register_kernel(&format!("cuFFT {layout}"));
            Ok(Plan { raw, work, kernel })
        }

        /// The work area `layout`'s plan needs, in bytes, making the plan
        /// at the first call of its layout.
        pub(crate) fn work_size(&self, layout: &FftLayout) -> Result<usize> {
            if self.offer().is_none_or(|v| !v.supports(layout.precision)) {
                return Ok(0);
            }
            layout.check()?;
            self.state.check_usable()?;
            self.state.bind("cuFFT")?;
            let slot = self.slot(layout);
            let mut guard = lock(&slot);
            let plan = match guard.take() {
                Some(plan) => plan,
                None => self.create(layout)?,
            };
            Ok(guard.insert(plan).work)
        }

        /// Enqueue `call` on `stream`.
        ///
        /// cuFFT's complex-to-real transforms (C2R, Z2D) overwrite their
        /// input: callers that need it afterwards transform a copy
        /// (kiln-kernels' `fft` does).
        ///
        /// # Safety
        /// As [`RawDevice::fft`](kiln_core::RawDevice::fft), and a
        /// complex-to-real call's input may be overwritten.
        pub(crate) unsafe fn fft(&self, stream: &CudaStream, call: &FftCall<'_, Cuda>) -> Result<()> {
            let layout = &call.layout;
            if self.offer().is_none_or(|v| !v.supports(layout.precision)) {
                return Err(Error::unsupported(
                    BackendKind::Cuda,
                    call.to_string(),
                    if present() { "kiln offers cuFFT for f32 and f64" } else { "libcufft is not installed" },
                ));
            }
            if !Arc::ptr_eq(&stream.state, &self.state) {
                return Err(Error::DeviceMismatch {
                    what: call.to_string(),
                    first: self.state.name.clone(),
                    second: format!("the stream's device, {}", stream.state.name),
                });
            }
            if stream.captures {
                return Err(Error::unsupported(
                    BackendKind::Cuda,
                    call.to_string(),
                    "a vendor FFT is not recorded into graphs",
                ));
            }
            // Cheap, and the bounds are what keeps a wrong call from writing
            // past a buffer, so checked here as well as by the caller.
            call.check()?;
            check_ranges(call)?;
            self.state.check_usable()?;
            self.state.bind("cuFFT")?;
            let slot = self.slot(layout);
            // Held until the transform is enqueued: the plan's stream and work area are ours till then.
            let mut guard = lock(&slot);
            let plan = match guard.take() {
                Some(plan) => plan,
                None => self.create(layout)?,
            };
            let plan = &*guard.insert(plan);
            let area = match (plan.work, &call.work) {
                (0, _) => None,
                (bytes, Some(work)) if work.buffer.len().saturating_sub(work.offset) >= bytes => {
                    Some(work.buffer.device_ptr() + work.offset as u64)
                }
                (bytes, _) => {
                    return Err(Error::invalid(
                        format!("cuFFT {call}"),
                        format!("its plan needs a work area of {bytes} bytes (RawDevice::fft_work_size)"),
                    ))
                }
            };
            // SAFETY: `plan.raw` is a live plan of this device's context,
            // which is current; the stream belongs to the same context (checked above).
            unsafe { cufft::set_stream(plan.raw, stream.stream.cu_stream() as sys::cudaStream_t) }
                .map_err(|e| self.failed("cufftSetStream", call, e))?;
            if let Some(area) = area {
                // SAFETY: the plan is live; `area` starts the plan's work size
                // of bytes inside the call's work buffer (checked above), which
                // the caller keeps for this transform alone until it has run.
                unsafe { cufft::set_work_area(plan.raw, area as *mut c_void) }
                    .map_err(|e| self.failed("cufftSetWorkArea", call, e))?;
            }
            let done = stream.tracked([call.input.buffer, call.output.buffer], || {
                // SAFETY: the plan is this device's, bound to `stream` and to a
                // work area of its size; it was made for `call.layout`, each side
                // lies inside its buffer and the two are apart or one range
                // (checked above), and nothing else touches them until the
                // transform has run (caller's contract).
                unsafe { exec(plan.raw, call) }.map_err(|(function, e)| self.failed(function, call, e))
            });
            if done.is_ok() {
                stream.last_kernel.store(plan.kernel, Ordering::Relaxed);
                stream.state.last_kernel.store(plan.kernel, Ordering::Relaxed);
            }
            drop(guard);
            done
        }
    }

    impl Drop for Fft {
        fn drop(&mut self) {
            let plans: Vec<Plan> = self
                .plans
                .get_mut()
                .unwrap_or_else(|p| p.into_inner())
                .drain()
                .filter_map(|(_, s)| lock(&s).take())
                .collect();
            if plans.is_empty() {
                return;
            }
            super::DESTROYED.fetch_add(plans.len() as u64, Ordering::AcqRel);
            // A faulted context refuses every call; the plans go with it.
            if self.state.is_lost() || self.state.bind("cufftDestroy").is_err() {
                return;
            }
            // Transforms enqueued with the plans may still read their tables.
            if let Err(e) = self.state.ctx.synchronize() {
                self.state.defer("waiting for the device before destroying its cuFFT plans, so keeping them", e);
                return;
            }
            for plan in plans {
                // SAFETY: made by `make` on this context, which `state` keeps
                // alive and is current, idle (synchronized above), and
                // destroyed once (taken out of the cache above). A failure
                // here has no one left to report to (the device is gone) and
                // leaves only the plan's memory behind.
                let _ = unsafe { cufft::destroy(plan.raw) };
            }
        }
    }

    /// `Err(InvalidArgument)` unless each side of `call` lies inside its
    /// buffer and the two are apart or one range ([`super::ranges::check`]).
    fn check_ranges(call: &FftCall<'_, Cuda>) -> Result<()> {
        let side =
            |op: &kiln_core::GemmOperand<'_, Cuda>| super::ranges::Side { offset: op.offset, len: op.buffer.len() };
        let same = std::ptr::eq(call.input.buffer, call.output.buffer);
        super::ranges::check(&call.layout, &format!("cuFFT {call}"), [side(&call.input), side(&call.output)], same)
    }

    /// Create a plan for `p` with automatic work-area allocation off: the
    /// plan and its work size in bytes, or the failing function with cuFFT's
    /// answer (the plan destroyed again). The context is current.
    fn make(p: &PlanParams) -> std::result::Result<(sys::cufftHandle, usize), (&'static str, CufftError)> {
        let raw = cufft::create().map_err(|e| ("cufftCreate", e))?;
        super::CREATED.fetch_add(1, Ordering::AcqRel);
        let (mut n, mut inembed, mut onembed) = (p.n, p.inembed, p.onembed);
        // SAFETY: `raw` was just created and is live; the arrays hold
        // `p.rank` (at most 3) entries each and outlive the calls, which
        // only read them (null embeddings: cuFFT's basic layout).
        let made = unsafe { cufft::set_auto_allocation(raw, false) }
            .map_err(|e| ("cufftSetAutoAllocation", e))
            .and_then(|()| {
                // SAFETY: as above.
                unsafe {
                    cufft::make_plan_many64(
                        raw,
                        p.rank,
                        n.as_mut_ptr(),
                        if p.basic { std::ptr::null_mut() } else { inembed.as_mut_ptr() },
                        p.istride,
                        p.idist,
                        if p.basic { std::ptr::null_mut() } else { onembed.as_mut_ptr() },
                        p.ostride,
                        p.odist,
                        p.kind,
                        p.batch,
                    )
                }
                .map_err(|e| ("cufftMakePlanMany64", e))
            });
        match made {
            Ok(work) => Ok((raw, work)),
            Err(failed) => {
                super::DESTROYED.fetch_add(1, Ordering::AcqRel);
                // SAFETY: created above, destroyed once; nothing was enqueued with it.
                let _ = unsafe { cufft::destroy(raw) };
                Err(failed)
            }
        }
    }

    /// Enqueue `call`'s transform with `plan` on the stream it is bound to;
    /// the failing function with cuFFT's answer.
    ///
    /// # Safety
    /// - `plan` is live, made for `call.layout`, its context current, and
    ///   bound to the call's stream and to a work area of its size (when it
    ///   needs one).
    /// - `call` has passed `FftCall::check` and `check_ranges`, its buffers
    ///   belong to the plan's context and are not touched by other work
    ///   until the transform has run; a complex-to-real call's input may be
    ///   overwritten.
    unsafe fn exec(
        plan: sys::cufftHandle,
        call: &FftCall<'_, Cuda>,
    ) -> std::result::Result<(), (&'static str, CufftError)> {
        let input = call.input.buffer.device_ptr() + call.input.offset as u64;
        let output = call.output.buffer.device_ptr() + call.output.offset as u64;
        let sign = match call.direction {
            FftDirection::Forward => FORWARD,
            FftDirection::Inverse => INVERSE,
        };
        // SAFETY (every arm): the addresses are of elements of the plan's
        // types, aligned to them (256-byte aligned allocations, offsets in
        // whole elements) and inside their buffers, laid out as the plan
        // was made for; the direction agrees with the kind (`check`).
        unsafe {
            match (call.layout.kind, call.layout.precision == DType::F64) {
                (FftKind::C2C, false) => {
                    cufft::exec_c2c(plan, input as *mut _, output as *mut _, sign).map_err(|e| ("cufftExecC2C", e))
                }
                (FftKind::R2C, false) => {
                    cufft::exec_r2c(plan, input as *mut _, output as *mut _).map_err(|e| ("cufftExecR2C", e))
                }
                (FftKind::C2R, false) => {
                    cufft::exec_c2r(plan, input as *mut _, output as *mut _).map_err(|e| ("cufftExecC2R", e))
                }
                (FftKind::C2C, true) => {
                    cufft::exec_z2z(plan, input as *mut _, output as *mut _, sign).map_err(|e| ("cufftExecZ2Z", e))
                }
                (FftKind::R2C, true) => {
                    cufft::exec_d2z(plan, input as *mut _, output as *mut _).map_err(|e| ("cufftExecD2Z", e))
                }
                (FftKind::C2R, true) => {
                    cufft::exec_z2d(plan, input as *mut _, output as *mut _).map_err(|e| ("cufftExecZ2D", e))
                }
            }
        }
    }
}
