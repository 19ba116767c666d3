//! kiln-wgpu: kiln's wgpu backend, running WGSL kernels on Vulkan (Metal or
//! DX12 off Linux).
//!
//! # Adapters
//! On Linux only Vulkan adapters are used (lavapipe in CI, the vendor
//! driver on a GPU machine); wgpu would otherwise fall back to GL without a
//! word. With no Vulkan adapter, [`Wgpu::devices`](kiln_core::Backend::devices)
//! and [`Wgpu::open`](kiln_core::Backend::open) answer `BackendUnavailable`.
//! Adapters are ordered discrete GPU, integrated GPU, virtual, CPU
//! (lavapipe: a GPU emulated in software, reported as
//! [`DeviceKind::Software`](kiln_core::DeviceKind::Software), which
//! `kiln::Device::best` passes over), other; `KILN_WGPU_ADAPTER=<substring>`
//! keeps only those whose name contains it (case-insensitive). A device is opened with the
//! adapter's own limits (largest workgroups, storage bindings and buffers)
//! and the optional features kiln uses that it has (f64, f16, subgroups,
//! f32 atomics, 64-bit integers, timestamps, SPIR-V passthrough), all
//! reported in its [`DeviceInfo`]; `KILN_WGPU_HIDE=subgroups,f64`
//! ([`HIDE_ENV`]) leaves those named off, to run kiln as on an adapter
//! without them, and `KILN_WGPU_COOPERATIVE_MATRIX=1` ([`COOP_ENV`]) opts
//! in to cooperative matrices for f16 products where the adapter has them.
//!
//! # Wide products
//! WGSL has no high word of a 32-bit product. A kernel that defines
//! `fn kiln_mul_wide(a: u32, b: u32) -> vec2<u32>` (the low word, then the
//! high word) gets, on Vulkan, SPIR-V that kiln writes itself with naga's
//! writer as wgpu would, each call of the function one `OpUMulExtended`
//! (one instruction on NVIDIA), passed through to the driver per block
//! shape; elsewhere, or with `KILN_WGPU_HIDE=spirv`, the function's WGSL
//! body runs. The Philox fills and the histogram's exact bins use it, and
//! [`Features::wide_multiply`](kiln_core::Features::wide_multiply) says
//! which a device does.
//!
//! # Streams, events and the single queue
//! | kiln | wgpu |
//! |------|------|
//! | device | `wgpu::Device` and its one `wgpu::Queue` |
//! | stream | a handle onto that queue; every stream records into one shared command encoder (the batch) |
//! | stream order | program order of the batch; submissions run in order |
//! | `Stream::wait(event)` | nothing to do: the event's work was enqueued, and runs, first |
//! | priority | accepted, kept, ignored |
//! | event record | a timestamp write (when available), then submit the batch if it holds work |
//! | event query / synchronize | non-blocking `Device::poll` / `poll` waiting for that submission, then for its host callbacks |
//! | elapsed time | timestamp difference x `Queue::get_timestamp_period`, else `Unsupported` |
//! | kernel | a shader module; one compute pipeline per block shape and binding layout |
//!
//! Work is batched: copies, fills and launches are recorded into the batch
//! and submitted when an event is recorded, data is read back, a stream or
//! the device is synchronized, or once it holds 128 commands or keeps
//! 256 MiB of staging memory alive. An event
//! recorded while the batch holds no work (the start of a timed region)
//! stays in the batch with its timestamp until the next submission, so that
//! the device time between it and a later event excludes the host's
//! recording and submitting; querying or waiting for it submits it. Since every
//! stream shares one queue there is no overlap between streams, and
//! synchronizing a stream waits for the whole device.
//!
//! # Memory
//! Device buffers are storage buffers allocated in whole 4-byte words.
//! Uploads go through a mapped staging buffer and a copy recorded in stream
//! order; `write` and `write_async` copy the host bytes before returning.
//! Reads copy into a mappable buffer: `read` blocks until the data is
//! there; `read_async` returns at once, and the map callback, which runs
//! in whichever thread next polls the device or submits, copies the data
//! into the host buffer before the event recorded after it reports
//! completion. Every wait that promises data on the host (`read`, event
//! query and synchronize, stream and device synchronize) ends only once the
//! callbacks of its submission and all earlier ones have returned, however
//! many threads share the device, and with an error, not a hang, if the
//! device is lost (the `completion` module says how). Copies
//! and fills that wgpu cannot express (offsets or sizes that are not whole
//! words, copies within one buffer, non-zero fill patterns) run through a
//! temporary buffer and kiln's own byte kernels. [`Device::memory`](kiln_core::Device::memory)
//! gives wgpu's allocator report (allocated and reserved bytes) and Vulkan's
//! memory budget; `DeviceInfo::memory_bytes`
//! is the largest device-local heap, read from Vulkan (0 elsewhere), and
//! `compute_units` is 0 (unknown: wgpu does not report it).
//!
//! # Kernels
//! WGSL compiled by naga and wgpu, following the ABI of kiln-kernels'
//! README: buffers at `@group(0)` in argument order, scalars in one uniform
//! struct at `@group(1) @binding(0)`, `override block_x/block_y/block_z`
//! set from the launch's block, `u32` lengths, no dynamic workgroup memory.
//! A WGSL error is an `Error::Compile` whose log starts with
//! `NAME.wgsl:LINE:COLUMN: message`, followed by the compiler's report. A
//! launch whose arguments disagree with the kernel's declarations (a missing
//! binding, a read-only argument where the kernel writes, a scalar of the
//! wrong type) is refused with `InvalidLaunch` naming the argument. A view
//! larger than the adapter's `max_storage_buffer_binding_size` is refused
//! with `Unsupported` naming that limit (no chunked dispatch). Details in
//! the `launch` module.
//!
//! As on CUDA, kernels run as written: wgpu's runtime checks that only
//! guard against a stray kernel (clamped indices, bounded loops) are left
//! out, which the `unsafe` launch's contract (kernels stay inside their
//! arguments) makes sound (WGSL's defined integer division stays), and
//! `var<workgroup>` memory starts undefined rather than zeroed. Set
//! `KILN_WGPU_CHECKED=1` to compile kernels with the checks, when hunting
//! a kernel that strays.
//!
//! # Errors
//! wgpu reports errors out of band and by default panics on those nobody
//! captures. kiln runs each device call that can fail inside error scopes
//! and returns what they catch; it replaces the default handler with one
//! that records, and the next synchronize reports what was recorded.
//!
//! # Examples
//! ```
//! use kiln_core::{BackendKind, Device, Error};
//! use kiln_wgpu::Wgpu;
//! # fn main() -> kiln_core::Result<()> {
//! match Device::<Wgpu>::open(0) {
//!     Ok(dev) => {
//!         let mut buf = dev.upload(&[1u8, 2, 3, 4, 5])?;
//!         buf.slice_mut(1..4)?.fill(9)?;
//!         assert_eq!(buf.to_vec()?, vec![1, 9, 9, 9, 5]);
//!     }
//!     // No Vulkan adapter on this machine: said so, never a GL fall-back.
//!     Err(e) => assert!(matches!(e, Error::BackendUnavailable { backend: BackendKind::Wgpu, .. })),
//! }
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

mod adapter;
mod bindings;
mod completion;
mod context;
mod device;
mod errors;
mod event;
mod graph;
mod kernel;
mod launch;
mod memory;
mod optional;
mod params;
mod pool;
mod reflect;
mod resources;
mod spirv;
mod staging;
mod stream;
mod transfer;
mod vulkan;

pub use adapter::ADAPTER_ENV;
pub use device::WgpuDevice;
pub use event::WgpuEvent;
pub use kernel::WgpuKernel;
pub use kernel::CHECKED_ENV;
pub use memory::{WgpuBuffer, WgpuHostBuffer};
pub use optional::{Optional, COOP_ENV, HIDE_ENV};
pub use stream::WgpuStream;

use kiln_core::{Backend, BackendKind, DeviceInfo, Language, Result};

/// The wgpu backend.
#[derive(Debug, Clone, Copy, Default)]
pub struct Wgpu;

impl Backend for Wgpu {
    const KIND: BackendKind = BackendKind::Wgpu;
    const LANGUAGE: Language = Language::Wgsl;
    type Device = WgpuDevice;
    type Stream = WgpuStream;
    type Buffer = WgpuBuffer;
    type HostBuffer = WgpuHostBuffer;
    type Event = WgpuEvent;
    type Kernel = WgpuKernel;

    /// The adapters kiln would use, best first, as the info of the devices
    /// they open as (limits and features are the adapter's).
    fn devices() -> Result<Vec<DeviceInfo>> {
        let adapters = adapter::adapters()?;
        Ok(adapters
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let features = optional::wanted_features(a.features(), &[]);
                let memory = vulkan::device_memory(a).unwrap_or(0);
                let wide = spirv::target(a, features).is_some();
                adapter::device_info(i, &a.get_info(), &a.limits(), features, memory, wide)
            })
            .collect())
    }

    fn open(ordinal: usize) -> Result<WgpuDevice> {
        WgpuDevice::open(ordinal, &[])
    }
}

impl Wgpu {
    /// Open adapter `ordinal` as [`Device::open`](kiln_core::Device::open)
    /// does, but without the optional features in `hidden`, as an adapter
    /// lacking them would be opened: kiln's kernels then take the paths
    /// they take there, and the device's [`DeviceInfo`] says the features
    /// are absent. [`HIDE_ENV`] does the same for every device of a process.
    ///
    /// ```
    /// use kiln_core::Error;
    /// use kiln_wgpu::{Optional, Wgpu};
    /// match Wgpu::open_without(0, &[Optional::Subgroups]) {
    ///     Ok(dev) => assert!(!dev.info().features.subgroups),
    ///     Err(e) => assert!(matches!(e, Error::BackendUnavailable { .. } | Error::DeviceNotFound { .. })),
    /// }
    /// ```
    pub fn open_without(ordinal: usize, hidden: &[Optional]) -> Result<kiln_core::Device<Wgpu>> {
        kiln_core::Device::from_raw(WgpuDevice::open(ordinal, hidden)?)
    }
}
