//! Host allocations standing in for device buffers (and for page-locked host buffers).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::cell::UnsafeCell;
use std::ptr::NonNull;
use std::sync::{Arc, RwLock};

use kiln_core::{RawBuffer, RawHostBuffer, Result};

use crate::pool::Pool;

/// Alignment of every allocation: a cache line, so that kernels writing
/// whole lines past the cache (non-temporal stores) find a buffer's lines
/// where its element indices say, and no line is shared by two buffers.
const ALIGN: usize = 64;
/// Alignment the system's zeroing allocator gives (on x86-64 and aarch64
/// Linux); a block asks for `ALIGN - SYSTEM_ALIGN` more bytes and starts at
/// the first `ALIGN` boundary inside them. (Asking the allocator for the
/// larger alignment would zero the block by writing it, touching every page
/// at allocation, where `calloc` maps zeroed pages lazily.)
const SYSTEM_ALIGN: usize = 16;

/// A zero-initialised, 64-byte-aligned host allocation, owned: freed on drop.
#[derive(Debug)]
pub(crate) struct Block {
    /// The first `ALIGN` boundary inside the allocation.
    ptr: NonNull<u8>,
    /// Bytes usable from `ptr`.
    len: usize,
    /// The allocation as made: freed on drop.
    base: NonNull<u8>,
    layout: Layout,
}

// SAFETY: a plain heap allocation owned by this value.
unsafe impl Send for Block {}

impl Block {
    /// `len` zeroed bytes; `None` when the system refuses.
    pub(crate) fn new(len: usize) -> Option<Block> {
        if len == 0 {
            return Some(Block::empty());
        }
        let layout = Layout::from_size_align(len.checked_add(ALIGN - SYSTEM_ALIGN)?, SYSTEM_ALIGN).ok()?;
        // SAFETY: the layout has non-zero size.
        let base = NonNull::new(unsafe { alloc_zeroed(layout) })?;
        let skip = base.as_ptr().align_offset(ALIGN);
        if skip > ALIGN - SYSTEM_ALIGN {
            // An allocator that gives less than `SYSTEM_ALIGN`: no room to
            // align inside the block.
            // SAFETY: allocated just above with this very layout.
            unsafe { dealloc(base.as_ptr(), layout) };
            return None;
        }
        // SAFETY: `skip` bytes lie inside the allocation, `len` more after them.
        let ptr = unsafe { base.add(skip) };
        huge_pages(base, layout.size());
        Some(Block { ptr, len, base, layout })
    }

    /// No bytes.
    fn empty() -> Block {
        /// A type aligned as blocks are, for an aligned dangling pointer.
        #[repr(align(64))]
        struct Line;
        const { assert!(align_of::<Line>() == ALIGN) };
        let ptr = NonNull::<Line>::dangling().cast();
        Block { ptr, len: 0, base: ptr, layout: Layout::new::<()>() }
    }

    /// Bytes allocated.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if self.len != 0 {
            // SAFETY: allocated in `new` with this very layout.
            unsafe { dealloc(self.base.as_ptr(), self.layout) }
        }
    }
}

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

    /// This fresh allocation, counted among `pool`'s live bytes until dropped.
    pub(crate) fn counted(mut self, pool: Arc<Pool>) -> Self {
        self.pool = Some(pool);
        self
    }

    /// The first `len` bytes of `block`, which goes back to `pool` on drop.
    pub(crate) fn pooled(block: Block, len: usize, pool: Arc<Pool>) -> Self {
        CpuMemory { block, len, pool: Some(pool), pooled: true, lock: RwLock::new(()), _cell: UnsafeCell::new(()) }
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

/// Ask the kernel to back the whole 2 MiB pages inside `len` bytes at
/// `ptr` with huge pages (NumPy does the same for its large arrays): a
/// fresh buffer's first writes then fault once per 2 MiB, not per 4 KiB.
/// Only a hint; where the kernel declines, nothing changes.
#[cfg(target_os = "linux")]
fn huge_pages(ptr: NonNull<u8>, len: usize) {
    // Allocations from 4 MiB on, in 2 MiB pages.
    const HUGE_FROM: usize = 4 << 20;
    const HUGE: usize = 2 << 20;
    if len < HUGE_FROM {
        return;
    }
    let addr = ptr.as_ptr() as usize;
    let (start, end) = (addr.next_multiple_of(HUGE), (addr + len) / HUGE * HUGE);
    if end > start {
        // SAFETY: [start, end) lies inside the allocation just made, which
        // nothing else uses yet; MADV_HUGEPAGE changes no contents.
        unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn huge_pages(_: NonNull<u8>, _: usize) {}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_start_on_a_line_zeroed_and_hold_their_length() {
        // Small blocks come from the allocator's bins, large ones from their
        // own mappings: both start on a line, whatever the length.
        for len in [1, 15, 16, 17, 63, 64, 65, 1000, 4 << 20, (4 << 20) + 3] {
            let block = Block::new(len).expect("allocation");
            assert_eq!(block.ptr.as_ptr() as usize % ALIGN, 0, "{len} bytes");
            assert_eq!(block.len(), len);
            // SAFETY: `len` bytes from `ptr` are the block's own.
            let bytes = unsafe { std::slice::from_raw_parts_mut(block.ptr.as_ptr(), len) };
            assert!(bytes.iter().all(|&b| b == 0), "{len} bytes not zeroed");
            bytes.fill(0xA5);
        }
        let empty = Block::new(0).expect("empty");
        assert_eq!((empty.len(), empty.ptr.as_ptr() as usize % ALIGN), (0, 0));
    }
}
