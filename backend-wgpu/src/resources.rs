//! wgpu resources made the same way across the backend: device buffers
//! and their usages, bind group entries and bindings, buffer numbers and
//! shader checks. A leaf: it names nothing else of the crate.

use std::sync::atomic::{AtomicU64, Ordering};

use kiln_core::{Error, Result};

use crate::errors::{describe, scoped};

/// Usages of every kiln device buffer: kernel storage, and both ends of copies.
pub(crate) const STORAGE: wgpu::BufferUsages =
    wgpu::BufferUsages::STORAGE.union(wgpu::BufferUsages::COPY_SRC).union(wgpu::BufferUsages::COPY_DST);

/// `n` rounded up to a multiple of 4, the granularity of wgpu's copies and bindings.
pub(crate) const fn round4(n: u64) -> u64 {
    n.next_multiple_of(4)
}

/// Create a wgpu buffer, turning wgpu's out-of-band errors into `Err`.
pub(crate) fn create_buffer(
    device: &wgpu::Device,
    device_name: &str,
    what: &str,
    size: u64,
    usage: wgpu::BufferUsages,
    mapped_at_creation: bool,
) -> Result<wgpu::Buffer> {
    let desc = wgpu::BufferDescriptor { label: Some(what), size, usage, mapped_at_creation };
    match scoped(device, || device.create_buffer(&desc)) {
        (buffer, None) => Ok(buffer),
        (_, Some(wgpu::Error::OutOfMemory { .. })) => Err(Error::OutOfMemory {
            device: device_name.to_string(),
            what: what.to_string(),
            requested: size,
            counts: kiln_core::MemoryCounts::free(None),
        }),
        (_, Some(e)) => {
            Err(Error::driver(kiln_core::BackendKind::Wgpu, format!("create_buffer ({what})"), describe(&e)))
        }
    }
}

/// A storage-buffer entry of a bind group layout.
pub(crate) fn storage_entry(binding: u32, read_only: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Storage { read_only },
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

/// The uniform entry holding a kernel's scalar arguments (group 1, binding
/// 0), bound with a dynamic offset into the batch's scalar block.
pub(crate) fn params_entry() -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding: 0,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: true,
            min_binding_size: None,
        },
        count: None,
    }
}

/// A binding of `size` bytes of `buffer` from `offset`.
pub(crate) fn binding(buffer: &wgpu::Buffer, offset: u64, size: u64) -> wgpu::BindingResource<'_> {
    wgpu::BindingResource::Buffer(wgpu::BufferBinding { buffer, offset, size: wgpu::BufferSize::new(size) })
}

/// The number of the next buffer made (0 is never given).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// A number for a new buffer, unique in the process.
pub(crate) fn next_id() -> u64 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

/// The checks for a value of [`CHECKED_ENV`](crate::CHECKED_ENV).
pub(crate) fn checks_for(value: Option<&str>) -> wgpu::ShaderRuntimeChecks {
    let mut checks = wgpu::ShaderRuntimeChecks::checked();
    if !matches!(value.map(str::trim), Some(v) if !v.is_empty() && v != "0") {
        checks.bounds_checks = false;
        checks.force_loop_bounding = false;
    }
    checks
}
