//! Device allocations, freed in stream order, and page-locked host memory.

use std::ptr::NonNull;
use std::sync::Arc;

use cudarc::driver::CudaStream as DriverStream;
use kiln_core::{RawBuffer, RawHostBuffer};

use crate::ffi::{self, DevicePtr};
use crate::state::DeviceState;

/// Device memory: an allocation made on a stream and freed on that stream
/// when dropped (`cuMemFreeAsync`), so work enqueued before the drop still
/// sees it. A failed free is kept and reported at the next synchronize.
pub struct CudaBuffer {
    pub(crate) ptr: DevicePtr,
    len: usize,
    stream: Arc<DriverStream>,
    state: Arc<DeviceState>,
}

impl std::fmt::Debug for CudaBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CudaBuffer({} bytes at {:#x} on {})", self.len, self.ptr, self.state.name)
    }
}

impl CudaBuffer {
    /// Wrap an allocation of `len` bytes (a null pointer when `len` is 0).
    pub(crate) fn new(ptr: DevicePtr, len: usize, stream: Arc<DriverStream>, state: Arc<DeviceState>) -> Self {
        CudaBuffer { ptr, len, stream, state }
    }

    /// The device address of the first byte.
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }
}

impl RawBuffer for CudaBuffer {
    fn len(&self) -> usize {
        self.len
    }
}

impl Drop for CudaBuffer {
    fn drop(&mut self) {
        // A faulted context refuses every call; its memory goes with it.
        if self.len == 0 || self.state.is_lost() {
            return;
        }
        if let Err(e) = self.state.ctx.bind_to_thread() {
            self.state.defer(&format!("making the context current to free a device buffer of {} bytes", self.len), e);
            return;
        }
        if !self.state.pooled {
            // cuMemFree does not wait for pending work that uses the memory.
            if let Err(e) = self.stream.synchronize() {
                self.state.defer(&format!("waiting to free a device buffer of {} bytes", self.len), e);
                return;
            }
        }
        // SAFETY: allocated by `ffi::alloc_device` with the same `pooled`, freed
        // only here, on the stream it was allocated on (so after its work).
        if let Err(e) = unsafe { ffi::free_device(self.ptr, &self.stream, self.state.pooled) } {
            self.state.defer(&format!("cuMemFreeAsync of a device buffer of {} bytes", self.len), e);
        }
    }
}

/// Page-locked host memory (`cuMemHostAlloc`, not write-combined), which
/// copies reach at full PCIe speed and without blocking the host.
pub struct CudaHostBuffer {
    ptr: NonNull<u8>,
    len: usize,
    state: Arc<DeviceState>,
}

// SAFETY: the memory is a plain allocation owned by this value; concurrent
// access is governed by the RawHostBuffer and RawStream safety contracts.
unsafe impl Send for CudaHostBuffer {}
// SAFETY: as above.
unsafe impl Sync for CudaHostBuffer {}

impl CudaHostBuffer {
    /// Wrap `len` bytes at `ptr` (dangling when `len` is 0).
    pub(crate) fn new(ptr: NonNull<u8>, len: usize, state: Arc<DeviceState>) -> Self {
        CudaHostBuffer { ptr, len, state }
    }

    /// The host address of the first byte.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl RawHostBuffer for CudaHostBuffer {
    fn len(&self) -> usize {
        self.len
    }

    unsafe fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes were allocated at `ptr` (or `len` is 0 and the
        // pointer is dangling but aligned); the caller guarantees no copy writes them now.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    unsafe fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and `&mut self` plus the caller's promise make the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for CudaHostBuffer {
    fn drop(&mut self) {
        if self.len == 0 {
            return;
        }
        // Host memory survives a device fault, so it is freed even then.
        let _ = self.state.ctx.bind_to_thread();
        // SAFETY: allocated by `ffi::alloc_pinned` and freed only here; the typed
        // layer waits for every copy that uses it before dropping it.
        if let Err(e) = unsafe { ffi::free_pinned(self.ptr.as_ptr()) } {
            self.state.defer(&format!("cuMemFreeHost of a page-locked buffer of {} bytes", self.len), e);
        }
    }
}
