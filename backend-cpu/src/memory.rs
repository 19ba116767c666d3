//! Host allocations standing in for device buffers (and for page-locked host buffers).

use std::cell::UnsafeCell;
use std::sync::{Arc, RwLock};

use kiln_core::{RawBuffer, RawHostBuffer, Result};

use crate::block::Block;
use crate::pool::Pool;

/// A 64-byte-aligned host allocation: zeroed when fresh; a device buffer
/// of 4 MiB or more may reuse a block its device's pool kept, holding
/// whatever it last held.
///
/// Access goes through raw pointers because kiln's typed layer, not this
/// type, guarantees that a writable range is not used by anything else at the
/// same time (the `# Safety` contracts of [`kiln_core::RawStream`]). Work
/// that reaches it through shared handles (a graph's replay) is ordered by
/// its lock, which every [`CpuStream`](crate::CpuStream) operation holds
/// while it runs (the `access` module).
pub struct CpuMemory {
    block: Block,
    /// Bytes of `block` the buffer spans.
    len: usize,
    /// The pool the block goes back to (`pooled`), or whose count of live
    /// bytes it leaves, on drop.
    pool: Option<Arc<Pool>>,
    pooled: bool,
    /// Held by each stream operation on the memory: shared to read, exclusive to write.
    lock: RwLock<()>,
    _cell: UnsafeCell<()>,
}

// SAFETY: the memory is a plain heap allocation owned by this value; concurrent
// access is governed by the RawStream/RawHostBuffer safety contracts.
unsafe impl Send for CpuMemory {}
// SAFETY: as above.
unsafe impl Sync for CpuMemory {}

impl std::fmt::Debug for CpuMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CpuMemory({} bytes)", self.len)
    }
}

impl CpuMemory {
    /// Allocate `len` zeroed bytes; `None` when the system refuses.
    pub fn new(len: usize) -> Option<Self> {
        Some(CpuMemory {
            block: Block::new(len)?,
            len,
            pool: None,
            pooled: false,
            lock: RwLock::new(()),
            _cell: UnsafeCell::new(()),
        })
    }

    /// `len` bytes from `pool` ([`Pool::take`]): a kept block, whatever it
    /// held, which goes back to the pool on drop, or a fresh zeroed one,
    /// counted among the pool's live bytes until dropped; `None` when the
    /// system refuses.
    pub(crate) fn from_pool(pool: &Arc<Pool>, len: usize) -> Option<Self> {
        let (block, pooled) = pool.take(len)?;
        Some(CpuMemory {
            block,
            len,
            pool: Some(pool.clone()),
            pooled,
            lock: RwLock::new(()),
            _cell: UnsafeCell::new(()),
        })
    }

    /// The lock that orders stream operations on this memory.
    pub(crate) fn lock(&self) -> &RwLock<()> {
        &self.lock
    }

    /// Pointer to the first byte.
    pub fn as_ptr(&self) -> *mut u8 {
        self.block.ptr.as_ptr()
    }

    /// Bytes `offset..offset + len`.
    ///
    /// # Safety
    /// - The range is inside the allocation.
    /// - Nothing writes the range while the slice lives.
    pub unsafe fn range(&self, offset: usize, len: usize) -> &[u8] {
        // SAFETY: the caller keeps the range in bounds and free of writers.
        unsafe { std::slice::from_raw_parts(self.block.ptr.as_ptr().add(offset), len) }
    }

    /// Bytes `offset..offset + len`, writable.
    ///
    /// # Safety
    /// - The range is inside the allocation.
    /// - Nothing else reads or writes the range while the slice lives.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn range_mut(&self, offset: usize, len: usize) -> &mut [u8] {
        // SAFETY: the caller keeps the range in bounds and exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.block.ptr.as_ptr().add(offset), len) }
    }
}

impl Drop for CpuMemory {
    fn drop(&mut self) {
        let Some(pool) = self.pool.take() else { return };
        if self.pooled {
            pool.give_back(std::mem::replace(&mut self.block, Block::empty()));
        } else {
            pool.forget(self.len);
        }
    }
}

impl RawBuffer for CpuMemory {
    fn len(&self) -> usize {
        self.len
    }
}

impl RawHostBuffer for CpuMemory {
    fn len(&self) -> usize {
        self.len
    }
    unsafe fn bytes(&self) -> &[u8] {
        // SAFETY: whole allocation; the caller guarantees no writer.
        unsafe { self.range(0, self.len) }
    }
    unsafe fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: whole allocation; `&mut self` is exclusive.
        unsafe { self.range_mut(0, self.len) }
    }
}

/// `Err` unless bytes `offset..offset + len` lie inside `mem`.
///
/// The typed layer only ever passes ranges inside their buffers; checking
/// again costs a comparison per operation and keeps the reference backend from
/// ever slicing past an allocation, whoever calls it.
pub(crate) fn check_span(mem: &CpuMemory, offset: usize, len: usize, what: &str) -> Result<()> {
    match offset.checked_add(len) {
        Some(end) if end <= mem.len => Ok(()),
        end => Err(kiln_core::Error::invalid(
            what,
            format!(
                "bytes {offset}..{} lie outside an allocation of {} bytes",
                end.map_or_else(|| format!("{offset}+{len} (overflows)"), |e| e.to_string()),
                mem.len
            ),
        )),
    }
}

/// `mem`, an allocation of `bytes` bytes, or why there is none.
pub(crate) fn allocate(mem: Option<CpuMemory>, bytes: usize, what: &str, device: &str) -> Result<CpuMemory> {
    mem.ok_or_else(|| kiln_core::Error::OutOfMemory {
        device: device.to_string(),
        what: what.to_string(),
        requested: bytes as u64,
        counts: kiln_core::MemoryCounts::free(None),
    })
}
