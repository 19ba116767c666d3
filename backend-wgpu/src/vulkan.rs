//! The one place kiln reaches below wgpu, into its Vulkan layer: the size
//! of device memory, which wgpu's portable API does not report.

/// Bytes in the largest device-local memory heap of `adapter`, when it is a
/// Vulkan adapter (on Linux); `None` otherwise.
#[cfg(target_os = "linux")]
pub(crate) fn device_memory(adapter: &wgpu::Adapter) -> Option<u64> {
    use wgpu::hal::api::Vulkan;
    /// `VK_MEMORY_HEAP_DEVICE_LOCAL_BIT`.
    const DEVICE_LOCAL: u32 = 0x1;
    // SAFETY: the guard is only read from and dropped at the end of this
    // function; nothing is destroyed through it.
    let hal = unsafe { adapter.as_hal::<Vulkan>() }?;
    let instance = hal.shared_instance().raw_instance();
    // SAFETY: the physical device was enumerated from this very instance,
    // which outlives the call (the adapter holds it).
    let props = unsafe { instance.get_physical_device_memory_properties(hal.raw_physical_device()) };
    let count = (props.memory_heap_count as usize).min(props.memory_heaps.len());
    props.memory_heaps[..count].iter().filter(|h| h.flags.as_raw() & DEVICE_LOCAL != 0).map(|h| h.size).max()
}

/// Bytes of device memory: not known off Linux.
#[cfg(not(target_os = "linux"))]
pub(crate) fn device_memory(_adapter: &wgpu::Adapter) -> Option<u64> {
    None
}
