//! kiln-cpu: the CPU backend, the reference every other backend is checked against.
//!
//! Design choices:
//! - **Eager streams.** Work runs on the calling thread at the moment it is
//!   enqueued (kernels fan out over rayon's pool), so a stream's order is
//!   program order, [`RawStream::synchronize`](kiln_core::RawStream::synchronize)
//!   has nothing to wait for and returns at once, and waiting on an event
//!   never blocks.
//! - **Work on shared memory is ordered.** Each operation holds the buffers
//!   it uses while it runs, shared for reads and exclusive for writes, so
//!   work reaching one buffer from two threads (a graph replayed on one
//!   while another reads) runs one operation after the other, never
//!   interleaved: there is no data race on host memory. A thread outside
//!   rayon's pools waits for a busy buffer; inside a pool, where waiting
//!   could deadlock the pool's work-stealing, the call is an `Err` that
//!   says so and does nothing.
//! - **Events** hold the monotonic-clock instant at which they were recorded;
//!   since work is eager, that is when everything before them finished, and
//!   elapsed time between two events is host wall time of the work between.
//! - **Buffers** are 64-byte-aligned host allocations, zeroed when fresh;
//!   an allocation the system refuses is an `OutOfMemory` error, not an
//!   abort. Device buffers of 4 MiB or more come from a pool: once dropped,
//!   their blocks are kept (within the device's
//!   [`CachePolicy`](kiln_core::CachePolicy): at most the peak in use since
//!   the last trim) for the next buffer of the same size class, whose first writes then need no
//!   page faults; their contents are unspecified, as
//!   [`Stream::alloc`](kiln_core::Stream::alloc) says.
//!   [`Device::trim_memory`](kiln_core::Device::trim_memory) frees them, and
//!   [`Device::memory`](kiln_core::Device::memory) counts them.
//! - **Kernels** are Rust functions ([`HostFn`](kiln_core::HostFn)) given the
//!   whole launch at once, taking typed slices from their
//!   [`HostArgs`](kiln_core::HostArgs).
//!
//! # Examples
//! ```
//! use kiln_core::Device;
//! use kiln_cpu::Cpu;
//! # fn main() -> kiln_core::Result<()> {
//! let dev = Device::<Cpu>::open(0)?;
//! let mut buf = dev.alloc::<i32>(5)?;
//! buf.fill(-3)?;
//! assert_eq!(buf.to_vec()?, vec![-3; 5]);
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod access;
mod block;
mod device;
mod fill;
mod memory;
mod pool;
mod stream;

pub use device::{CpuDevice, CpuEvent, CpuKernel};
pub use memory::CpuMemory;
pub use stream::CpuStream;

use kiln_core::{Backend, BackendKind, DeviceInfo, Error, Language, Result};

/// The CPU backend.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cpu;

impl Backend for Cpu {
    const KIND: BackendKind = BackendKind::Cpu;
    const LANGUAGE: Language = Language::Host;
    type Device = CpuDevice;
    type Stream = CpuStream;
    type Buffer = CpuMemory;
    type HostBuffer = CpuMemory;
    type Event = CpuEvent;
    type Kernel = CpuKernel;

    fn devices() -> Result<Vec<DeviceInfo>> {
        Ok(vec![device::host_info()])
    }

    fn open(ordinal: usize) -> Result<CpuDevice> {
        if ordinal != 0 {
            return Err(Error::DeviceNotFound { backend: BackendKind::Cpu, ordinal, count: 1 });
        }
        Ok(CpuDevice::new())
    }
}
