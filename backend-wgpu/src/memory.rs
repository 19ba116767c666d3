//! Device buffers and host buffers.

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::cell::UnsafeCell;
use std::ptr::NonNull;
use std::sync::{Arc, Weak};

use kiln_core::{Error, RawBuffer, RawHostBuffer, Result};

use crate::bindings::Bindings;
use crate::context::Context;
use crate::pool::Pool;
use crate::resources::{create_buffer, next_id, round4, STORAGE};

/// Device storage: a wgpu buffer of `len` bytes (allocated rounded up to a
/// multiple of 4, so that every range of it can be widened to whole words).
///
/// Dropping it while work that uses it is still recorded or running is
/// sound, and its `Drop` only lets go of the bind groups cached for it
/// (see `bindings.rs`): dropping a `wgpu::Buffer` only
/// removes wgpu's handle (wgpu-core 30, `Global::buffer_drop`, which does
/// not destroy it), while the commands recorded into the batch hold `Arc`s
/// of the buffer (`ArcCommand::CopyBufferToBuffer` and the like), and once
/// submitted the submission's trackers do (`EncoderInFlight::trackers`),
/// released only when the device has finished it
/// (`LifetimeTracker::triage_submissions`). The memory is freed when the
/// last of them goes (`impl Drop for Buffer`), never earlier; kiln never
/// calls `Buffer::destroy`, which would free it at once.
///
/// The wgpu buffer is allocated at the size class of `len` (see `pool.rs`),
/// and on drop goes to the device's pool for the next allocation of its class.
pub struct WgpuBuffer {
    pub(crate) raw: wgpu::Buffer,
    len: usize,
    /// Its number in the bind-group cache.
    pub(crate) id: u64,
    bindings: Weak<Bindings>,
    pool: Weak<Pool>,
}

impl Drop for WgpuBuffer {
    fn drop(&mut self) {
        if let Some(b) = self.bindings.upgrade() {
            b.forget(self.id);
        }
        if let Some(p) = self.pool.upgrade() {
            p.put(self.raw.clone());
        }
    }
}

impl std::fmt::Debug for WgpuBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WgpuBuffer({} bytes)", self.len)
    }
}

impl RawBuffer for WgpuBuffer {
    fn len(&self) -> usize {
        self.len
    }
}

impl WgpuBuffer {
    /// A device buffer of `len` bytes on `ctx`'s device, allocated at its
    /// size class. A kept buffer of the same class is reused; out of memory
    /// empties the pool and tries once more.
    pub(crate) fn new(ctx: &Context, len: usize) -> Result<Self> {
        // At least one word, so that even an empty buffer can be bound and copied.
        let size = ctx.pool.class(round4(len as u64).max(4));
        let raw = match ctx.pool.take(size) {
            Some(raw) => raw,
            None => {
                let what = format!("device buffer of {len} bytes");
                let raw = match create_buffer(&ctx.device, &ctx.info.name, &what, size, STORAGE, false) {
                    Err(Error::OutOfMemory { .. }) if ctx.pool.stats().cached > 0 => {
                        ctx.pool.trim(0);
                        create_buffer(&ctx.device, &ctx.info.name, &what, size, STORAGE, false)?
                    }
                    other => other?,
                };
                ctx.pool.add_used(size);
                raw
            }
        };
        let (bindings, pool) = (Arc::downgrade(&ctx.bindings), Arc::downgrade(&ctx.pool));
        Ok(WgpuBuffer { raw, len, id: next_id(), bindings, pool })
    }
}

/// Host memory: a zeroed, 16-byte-aligned heap allocation.
///
/// The bytes sit behind an `Arc` so that an asynchronous read-back can hold
/// them until its map callback has copied into them, whatever happens to
/// the handle meanwhile: the callback owns a clone (see
/// `transfer::read_async`), and wgpu drops a callback only after running it
/// or when it can never run, so the allocation outlives every write into it.
pub struct WgpuHostBuffer {
    pub(crate) mem: Arc<HostMemory>,
}

/// The allocation behind a [`WgpuHostBuffer`].
pub(crate) struct HostMemory {
    ptr: NonNull<u8>,
    len: usize,
    _cell: UnsafeCell<()>,
}

// SAFETY: a plain heap allocation owned by this value; who may read or write
// it when is governed by the RawStream and RawHostBuffer safety contracts.
unsafe impl Send for HostMemory {}
// SAFETY: as above.
unsafe impl Sync for HostMemory {}

const HOST_ALIGN: usize = 16;

impl HostMemory {
    fn new(len: usize) -> Option<Self> {
        if len == 0 {
            return Some(HostMemory { ptr: NonNull::<u128>::dangling().cast(), len, _cell: UnsafeCell::new(()) });
        }
        let layout = Layout::from_size_align(len, HOST_ALIGN).ok()?;
        // SAFETY: the layout has a non-zero size.
        let ptr = NonNull::new(unsafe { alloc_zeroed(layout) })?;
        Some(HostMemory { ptr, len, _cell: UnsafeCell::new(()) })
    }

    /// Bytes `offset..offset + len`.
    ///
    /// # Safety
    /// - The range is inside the allocation.
    /// - Nothing writes the range while the slice lives.
    pub(crate) unsafe fn range(&self, offset: usize, len: usize) -> &[u8] {
        // SAFETY: in bounds and free of writers, by the caller's contract.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr().add(offset), len) }
    }

    /// Bytes `offset..offset + len`, writable.
    ///
    /// # Safety
    /// - The range is inside the allocation.
    /// - Nothing else reads or writes the range while the slice lives.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn range_mut(&self, offset: usize, len: usize) -> &mut [u8] {
        // SAFETY: in bounds and exclusive, by the caller's contract.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr().add(offset), len) }
    }
}

impl Drop for HostMemory {
    fn drop(&mut self) {
        if self.len != 0 {
            // SAFETY: allocated in `new` with this very layout.
            unsafe { dealloc(self.ptr.as_ptr(), Layout::from_size_align_unchecked(self.len, HOST_ALIGN)) }
        }
    }
}

impl WgpuHostBuffer {
    /// `len` zeroed bytes, or `OutOfMemory`.
    pub(crate) fn new(len: usize, device_name: &str) -> Result<Self> {
        match HostMemory::new(len) {
            Some(mem) => Ok(WgpuHostBuffer { mem: Arc::new(mem) }),
            None => Err(Error::OutOfMemory {
                device: device_name.to_string(),
                what: "host buffer".to_string(),
                requested: len as u64,
                counts: kiln_core::MemoryCounts::free(None),
            }),
        }
    }
}

impl RawHostBuffer for WgpuHostBuffer {
    fn len(&self) -> usize {
        self.mem.len
    }

    unsafe fn bytes(&self) -> &[u8] {
        // SAFETY: the whole allocation; no copy into it is in flight, by the caller's contract.
        unsafe { self.mem.range(0, self.mem.len) }
    }

    unsafe fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: the whole allocation; no copy is in flight, by the caller's
        // contract, and `&mut self` excludes other handles' use.
        unsafe { self.mem.range_mut(0, self.mem.len) }
    }
}
