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
//! returns it to its [`Kept`]. Read-back buffers are kept unmapped, returned
//! once the host has copied out of them. A device keeps at most [`KEPT`]
//! small buffers per direction between transfers ([`Staging::clear`] lets
//! go of them, `Device::trim_memory`); chunks are reused within one
//! transfer only.

use std::sync::{Arc, Mutex};

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

/// Staging buffers of one size and direction, free for the next piece.
#[derive(Default)]
pub(crate) struct Kept {
    free: Mutex<Vec<wgpu::Buffer>>,
}

impl Kept {
    /// A free staging buffer of `size` for `direction`, or a new one (mapped
    /// for an upload).
    pub(crate) fn take(
        &self,
        device: &wgpu::Device,
        device_name: &str,
        direction: Direction,
        size: u64,
    ) -> Result<wgpu::Buffer> {
        if let Some(b) = self.free.lock().unwrap_or_else(|p| p.into_inner()).pop() {
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
    /// the next piece, unless [`KEPT`] are kept already.
    pub(crate) fn give(&self, buffer: wgpu::Buffer) {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        if free.len() < KEPT {
            free.push(buffer);
        }
    }

    fn clear(&self) {
        self.free.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

/// The small staging buffers a device keeps between transfers, per direction.
#[derive(Default)]
pub(crate) struct Staging {
    upload: Arc<Kept>,
    read_back: Arc<Kept>,
}

impl Staging {
    /// Where the buffers of a transfer of `size`-byte pieces come from and
    /// go back to: the device's kept small buffers for [`SMALL`] pieces; for
    /// [`CHUNK`]s, buffers of this transfer alone, let go of once it is over
    /// (a few large buffers held between transfers would be memory no
    /// buffer and no pool accounts for).
    pub(crate) fn for_transfer(&self, direction: Direction, size: u64) -> Arc<Kept> {
        match (size == SMALL, direction) {
            (true, Direction::Upload) => self.upload.clone(),
            (true, Direction::ReadBack) => self.read_back.clone(),
            (false, _) => Arc::default(),
        }
    }

    /// Let go of every kept buffer.
    pub(crate) fn clear(&self) {
        self.upload.clear();
        self.read_back.clear();
    }
}

/// The staging size for a transfer of `bytes`: [`SMALL`] where it fits, else [`CHUNK`].
pub(crate) fn size_for(bytes: u64) -> u64 {
    if bytes <= SMALL {
        SMALL
    } else {
        CHUNK
    }
}
