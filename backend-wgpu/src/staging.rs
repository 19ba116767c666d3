//! Host-visible staging buffers kept for reuse, so that transfers do not
//! create, map and fault in fresh host memory each time.
//!
//! A new host-visible wgpu buffer is memory the driver has just pinned and
//! mapped: the first write to each of its pages faults, and for a GiB that
//! costs more than the copy (an upload of 256 Mi f32 through one fresh
//! staging buffer ran at 2.4 GB/s on an H200 host, a read-back at 0.8).
//! Transfers here go through buffers of two sizes, [`SMALL`] and
//! [`CHUNK`], in pieces of that size at most: a large transfer streams
//! through up to [`IN_FLIGHT`] chunks, the device copying one while the
//! host fills or drains another.
//!
//! Upload buffers are kept mapped: once the device has copied out of one,
//! it is mapped again for writing (`map_buffer_on_submit`) and its callback
//! returns it here. Read-back buffers are kept unmapped, returned once the
//! host has copied out of them. At most [`KEPT`] of each size and
//! direction are kept; the rest are let go of, and
//! [`Staging::clear`] lets go of them all (`Device::trim_memory`).

use std::sync::Mutex;

use kiln_core::Result;

use crate::resources::create_buffer;

/// Bytes of a staging buffer for transfers of at most this many bytes.
pub(crate) const SMALL: u64 = 64 << 10;
/// Bytes of a staging buffer for larger transfers, which go in pieces of this size.
pub(crate) const CHUNK: u64 = 16 << 20;
/// Pieces of one large transfer in flight at once.
pub(crate) const IN_FLIGHT: usize = 4;
/// Buffers kept per size and direction.
const KEPT: usize = 4;

/// Which way a staging buffer carries data.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    /// Host to device: `MAP_WRITE | COPY_SRC`, kept mapped.
    Upload,
    /// Device to host: `MAP_READ | COPY_DST`, kept unmapped.
    ReadBack,
}

/// The kept staging buffers of one device.
#[derive(Default)]
pub(crate) struct Staging {
    /// Per direction (upload, read-back) and size (small, chunk).
    kept: [[Mutex<Vec<wgpu::Buffer>>; 2]; 2],
}

/// The staging size for a transfer of `bytes`.
pub(crate) fn size_for(bytes: u64) -> u64 {
    if bytes <= SMALL {
        SMALL
    } else {
        CHUNK
    }
}

impl Staging {
    fn list(&self, direction: Direction, size: u64) -> &Mutex<Vec<wgpu::Buffer>> {
        &self.kept[(direction == Direction::ReadBack) as usize][(size == CHUNK) as usize]
    }

    /// A staging buffer of `size` ([`SMALL`] or [`CHUNK`]) for `direction`:
    /// a kept one, or a new one (mapped for an upload).
    pub(crate) fn take(
        &self,
        device: &wgpu::Device,
        device_name: &str,
        direction: Direction,
        size: u64,
    ) -> Result<wgpu::Buffer> {
        if let Some(b) = self.list(direction, size).lock().unwrap_or_else(|p| p.into_inner()).pop() {
            return Ok(b);
        }
        let (what, usage, mapped) = match direction {
            Direction::Upload => {
                ("upload staging buffer", wgpu::BufferUsages::MAP_WRITE | wgpu::BufferUsages::COPY_SRC, true)
            }
            Direction::ReadBack => {
                ("read-back buffer", wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST, false)
            }
        };
        create_buffer(device, device_name, what, size, usage, mapped)
    }

    /// Keep `buffer` (mapped for an upload, unmapped for a read-back) for
    /// the next transfer, unless enough are kept.
    pub(crate) fn give(&self, direction: Direction, buffer: wgpu::Buffer) {
        let mut list = self.list(direction, buffer.size()).lock().unwrap_or_else(|p| p.into_inner());
        if list.len() < KEPT {
            list.push(buffer);
        }
    }

    /// Let go of every kept buffer.
    pub(crate) fn clear(&self) {
        for list in self.kept.iter().flatten() {
            list.lock().unwrap_or_else(|p| p.into_inner()).clear();
        }
    }
}
