//! Host allocations: zero-initialised, aligned to a cache line, freed on
//! drop (the storage of [`CpuMemory`](crate::CpuMemory) and of the pool's
//! kept blocks).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

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
    pub(crate) ptr: NonNull<u8>,
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
    pub(crate) fn empty() -> Block {
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
