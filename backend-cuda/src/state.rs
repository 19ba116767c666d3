//! What every object of one opened device shares: the context, the memory of
//! a fault, errors kept from `Drop`, and the names of the kernels loaded.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use cudarc::driver::result::DriverError;
use cudarc::driver::{CudaContext, CudaFunction};
use kiln_core::{BackendKind, Error, Result};

use crate::error::{describe, is_fault, is_out_of_memory};
use crate::ffi;

/// Faults by device ordinal, for the whole process: the primary context is
/// shared by every handle opened on an ordinal, so one fault ends them all.
static FAULTS: Mutex<BTreeMap<usize, String>> = Mutex::new(BTreeMap::new());

/// The fault that ended device `ordinal` earlier in this process, if any.
pub(crate) fn earlier_fault(ordinal: usize) -> Option<String> {
    lock(&FAULTS).get(&ordinal).cloned()
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// State shared by a device and its streams, buffers, events and kernels.
pub(crate) struct DeviceState {
    pub(crate) ordinal: usize,
    pub(crate) name: String,
    pub(crate) ctx: Arc<CudaContext>,
    /// Whether `cuMemAllocAsync`/`cuMemFreeAsync` are available (memory pools).
    pub(crate) pooled: bool,
    /// The cache policy's budget for the default pool (`u64::MAX`: none); see `pool_policy.rs`.
    pub(crate) cache_budget: AtomicU64,
    /// Set once a fault is seen; read on every call, so an atomic, not the mutex.
    lost: AtomicBool,
    fault: Mutex<Option<String>>,
    /// Errors met in `Drop`, with what was being dropped; reported at the next synchronize.
    deferred: Mutex<Vec<String>>,
    /// Kernel names by id (id = index + 1; 0 means none).
    kernels: Mutex<Vec<Arc<str>>>,
    /// The kernel launched last on any stream of the device.
    pub(crate) last_kernel: AtomicU32,
    /// The 8-byte fill kernel ([`ffi::FILL64_PTX`]), loaded at its first use.
    fill64: OnceLock<std::result::Result<CudaFunction, String>>,
    /// The devices (by ordinal) whose memory this one was granted direct
    /// access to, or found it cannot reach: asked once per pair.
    peers: Mutex<std::collections::HashSet<usize>>,
}

impl DeviceState {
    /// Give this device direct access to `peer`'s memory the first time a
    /// copy between them is enqueued, where the devices allow it (NVLink or
    /// PCIe peer to peer); otherwise the driver keeps staging such copies
    /// through the host. This device's context must be current.
    pub(crate) fn reach_peer(&self, peer: &DeviceState) {
        if !lock(&self.peers).insert(peer.ordinal) {
            return;
        }
        let (dev, peer_dev) = (self.ctx.cu_device(), peer.ctx.cu_device());
        if matches!(ffi::can_access_peer(dev, peer_dev), Ok(true)) {
            // A refusal leaves the copies staged, as before: slower, still right.
            let _ = ffi::grant_peer(dev, peer_dev, peer.ctx.cu_ctx());
        }
    }

    pub(crate) fn new(ordinal: usize, name: String, ctx: Arc<CudaContext>, pooled: bool) -> Self {
        let earlier = earlier_fault(ordinal);
        DeviceState {
            ordinal,
            name,
            ctx,
            pooled,
            cache_budget: AtomicU64::new(u64::MAX),
            lost: AtomicBool::new(earlier.is_some()),
            fault: Mutex::new(earlier),
            deferred: Mutex::new(Vec::new()),
            kernels: Mutex::new(Vec::new()),
            last_kernel: AtomicU32::new(0),
            peers: Mutex::default(),
            fill64: OnceLock::new(),
        }
    }

    /// The 8-byte fill kernel, loaded from its PTX on the first call (the
    /// context must be bound to the thread).
    pub(crate) fn fill64(&self) -> Result<&CudaFunction> {
        let loaded = self.fill64.get_or_init(|| {
            let module = self.ctx.load_module(cudarc::nvrtc::Ptx::from_src(ffi::FILL64_PTX)).map_err(describe)?;
            module.load_function("kiln_fill64").map_err(describe)
        });
        loaded.as_ref().map_err(|e| {
            Error::driver(BackendKind::Cuda, "loading kiln's 8-byte fill kernel (cuModuleLoadData)", e.clone())
        })
    }

    /// Whether a fault made the device unusable.
    pub(crate) fn is_lost(&self) -> bool {
        self.lost.load(Ordering::Relaxed)
    }

    /// `Err(DeviceLost)` once a fault has been seen; one atomic load otherwise.
    #[inline]
    pub(crate) fn check_usable(&self) -> Result<()> {
        if self.is_lost() {
            Err(self.lost_error())
        } else {
            Ok(())
        }
    }

    fn lost_error(&self) -> Error {
        let cause = lock(&self.fault).clone().unwrap_or_else(|| "an earlier device fault".to_string());
        Error::DeviceLost { device: self.name.clone(), cause }
    }

    /// Make this device's context current on the calling thread.
    pub(crate) fn bind(&self, call: &str) -> Result<()> {
        self.ctx.bind_to_thread().map_err(|e| self.fail(call, e, 0))
    }

    /// Give a loaded kernel an id for fault reports.
    pub(crate) fn register_kernel(&self, name: &str) -> u32 {
        let mut k = lock(&self.kernels);
        k.push(Arc::from(name));
        k.len() as u32
    }

    fn kernel_name(&self, id: u32) -> Option<String> {
        let id = id.checked_sub(1)? as usize;
        lock(&self.kernels).get(id).map(|n| n.to_string())
    }

    /// The kiln error for driver call `call` failing with `e`. `kernel` is the
    /// id of the kernel last launched where the failure surfaced (0 if none):
    /// faults are asynchronous, so that is the best name for the culprit.
    ///
    /// The first fault becomes `DeviceFault` and is remembered (here and for
    /// the ordinal, process-wide); every failure after it is `DeviceLost`.
    pub(crate) fn fail(&self, call: &str, e: DriverError, kernel: u32) -> Error {
        if self.is_lost() {
            return self.lost_error();
        }
        if is_fault(e) {
            let mut fault = lock(&self.fault);
            if let Some(cause) = fault.as_ref() {
                return Error::DeviceLost { device: self.name.clone(), cause: cause.clone() };
            }
            if let Some(cause) = earlier_fault(self.ordinal) {
                *fault = Some(cause.clone());
                self.lost.store(true, Ordering::Relaxed);
                return Error::DeviceLost { device: self.name.clone(), cause };
            }
            let error = Error::DeviceFault {
                device: self.name.clone(),
                kernel: self.kernel_name(kernel),
                detail: format!("{} (reported by {call})", describe(e)),
            };
            let text = error.to_string();
            *fault = Some(text.clone());
            lock(&FAULTS).entry(self.ordinal).or_insert(text);
            self.lost.store(true, Ordering::Relaxed);
            return error;
        }
        if is_out_of_memory(e) {
            // Not an allocation of kiln's (those report their size): the driver's own memory.
            return self.out_of_memory(&format!("the driver's own memory for {call} (size not known)"), 0);
        }
        Error::driver(BackendKind::Cuda, call, describe(e))
    }

    /// An `OutOfMemory` error for `what`, with the free memory now if known.
    pub(crate) fn out_of_memory(&self, what: &str, requested: usize) -> Error {
        let free = self.ctx.bind_to_thread().ok().and_then(|_| ffi::mem_info().ok()).map(|(free, _)| free as u64);
        Error::OutOfMemory {
            device: self.name.clone(),
            what: what.to_string(),
            requested: requested as u64,
            counts: kiln_core::MemoryCounts::free(free),
        }
    }

    /// Keep an error met in `Drop` for the next synchronize. After a fault the
    /// context refuses everything, so those failures add nothing and are dropped.
    pub(crate) fn defer(&self, what: &str, e: DriverError) {
        if !self.is_lost() && !is_fault(e) {
            lock(&self.deferred).push(format!("{what}: {}", describe(e)));
        } else if is_fault(e) {
            // A fault seen first in Drop is still a fault: remember it.
            let _ = self.fail(what, e, self.last_kernel.load(Ordering::Relaxed));
        }
    }

    /// Report (and clear) the errors kept from `Drop`.
    pub(crate) fn take_deferred(&self) -> Result<()> {
        let kept = std::mem::take(&mut *lock(&self.deferred));
        match kept.len() {
            0 => Ok(()),
            1 => Err(Error::driver(BackendKind::Cuda, "an earlier release", &kept[0])),
            n => {
                Err(Error::driver(BackendKind::Cuda, "earlier releases", format!("{n} failed; the first: {}", kept[0])))
            }
        }
    }
}
