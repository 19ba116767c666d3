//! Device buffers kept for reuse: a dropped kiln buffer's wgpu buffer goes
//! here, and the next allocation of the same size takes it back, without
//! wgpu's buffer creation or the clear wgpu gives every new buffer before
//! its first use (as much device time as a fill of the buffer).
//!
//! Reuse is sound in stream order: every stream of a device records into
//! the one batch of the one queue (see `stream.rs`), and kiln writes device
//! buffers only through recorded commands, so whatever a new owner records
//! runs after everything recorded before the old owner dropped it. The pool
//! holds at most a quarter of the device's memory (a buffer that would pass
//! it is dropped), lets go of what it holds on [`Pool::trim`], and an
//! allocation that meets out-of-memory empties it and tries once more.

use std::collections::HashMap;
use std::sync::Mutex;

/// Most bytes kept when the device's memory size is unknown.
const DEFAULT_CAP: u64 = 1 << 30;

/// Free device buffers by allocated size.
pub(crate) struct Pool {
    cap: u64,
    free: Mutex<Free>,
}

#[derive(Default)]
struct Free {
    by_size: HashMap<u64, Vec<wgpu::Buffer>>,
    bytes: u64,
}

impl Pool {
    /// A pool keeping at most a quarter of `memory_bytes` (1 GiB where the
    /// size is unknown).
    pub(crate) fn new(memory_bytes: u64) -> Self {
        let cap = if memory_bytes == 0 { DEFAULT_CAP } else { memory_bytes / 4 };
        Pool { cap, free: Mutex::new(Free::default()) }
    }

    /// A kept buffer of exactly `size` bytes, if there is one.
    pub(crate) fn take(&self, size: u64) -> Option<wgpu::Buffer> {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        let buffer = free.by_size.get_mut(&size)?.pop()?;
        free.bytes -= size;
        Some(buffer)
    }

    /// Keep `buffer` for reuse, or let it go when the pool is full.
    pub(crate) fn put(&self, buffer: wgpu::Buffer) {
        let size = buffer.size();
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        if free.bytes + size <= self.cap {
            free.bytes += size;
            free.by_size.entry(size).or_default().push(buffer);
        }
    }

    /// Let kept buffers go, largest first, until at most `keep` bytes are kept.
    pub(crate) fn trim(&self, keep: u64) {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        let mut sizes: Vec<u64> = free.by_size.keys().copied().collect();
        sizes.sort_unstable_by(|a, b| b.cmp(a));
        for size in sizes {
            while free.bytes > keep {
                let Some(list) = free.by_size.get_mut(&size) else { break };
                if list.pop().is_none() {
                    break;
                }
                free.bytes -= size;
            }
            if free.by_size.get(&size).is_some_and(Vec::is_empty) {
                free.by_size.remove(&size);
            }
        }
    }

    /// Bytes kept now.
    pub(crate) fn bytes(&self) -> u64 {
        self.free.lock().unwrap_or_else(|p| p.into_inner()).bytes
    }
}
