//! The one place kiln reaches below wgpu, into its Vulkan layer: the size
//! of device memory and the Vulkan version (which sets the SPIR-V version
//! of the kernels kiln writes itself), which wgpu's portable API does not
//! report; and keeping Mesa's device-selection layer from printing Wayland
//! errors on machines with no display.
//!
//! # "error: XDG_RUNTIME_DIR is invalid or not set in the environment."
//! wgpu enables every window-system instance extension the loader offers
//! (`VK_KHR_wayland_surface` among them), and neither wgpu nor wgpu-hal lets
//! a compute-only program leave them out. Mesa's implicit layer
//! `VK_LAYER_MESA_device_select` (Mesa 22.3; later releases look at
//! `WAYLAND_DISPLAY` first) then asks the Wayland compositor for its GPU in
//! every `vkEnumeratePhysicalDevices`, configured or not, and
//! libwayland-client prints the line above to stderr when `XDG_RUNTIME_DIR`
//! is unset: twice per adapter enumeration, on headless servers, in
//! containers, under cron. The layer's own switch is `NODEVICE_SELECT=1`,
//! which the Vulkan loader reads when an instance is created. So, only when
//! the probe could only fail and print (see [`device_select_probe_is_noise`])
//! and the user has not configured the layer, kiln sets `NODEVICE_SELECT=1`
//! while it creates its one Vulkan instance and removes it right after,
//! provided the process runs a single thread then (the first device call at
//! the start of `main`): changing the environment while another thread may
//! read it is not sound, so later on the layer is left to print. The
//! layer only reorders adapters, and kiln orders them itself. Whoever sets
//! `NODEVICE_SELECT`, `MESA_VK_DEVICE_SELECT` or `DRI_PRIME` keeps their
//! choice (the loader turns the layer off when `NODEVICE_SELECT` is set to
//! anything at all).

use std::ffi::OsString;

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

/// Free bytes of the largest device-local heap of `adapter` by
/// `VK_EXT_memory_budget` (the heap's budget for this process, which counts
/// what other processes use, less what this one uses now), and the heap's
/// size; `None` without the extension or off Vulkan.
#[cfg(target_os = "linux")]
pub(crate) fn memory_budget(adapter: &wgpu::Adapter) -> Option<(u64, u64)> {
    use ash::vk;
    use wgpu::hal::api::Vulkan;
    // SAFETY: as in `device_memory`.
    let hal = unsafe { adapter.as_hal::<Vulkan>() }?;
    let shared = hal.shared_instance();
    let (instance, physical) = (shared.raw_instance(), hal.raw_physical_device());
    // vkGetPhysicalDeviceMemoryProperties2 is core in Vulkan 1.1.
    if shared.instance_api_version() < vk::API_VERSION_1_1 {
        return None;
    }
    // SAFETY: the physical device belongs to this instance, which outlives the calls.
    let extensions = unsafe { instance.enumerate_device_extension_properties(physical) }.ok()?;
    let name = ash::ext::memory_budget::NAME;
    if !extensions.iter().any(|e| e.extension_name_as_c_str() == Ok(name)) {
        return None;
    }
    let mut budget = vk::PhysicalDeviceMemoryBudgetPropertiesEXT::default();
    let mut props = vk::PhysicalDeviceMemoryProperties2::default().push_next(&mut budget);
    // SAFETY: as above; the extension is supported, so the chained struct is valid.
    unsafe { instance.get_physical_device_memory_properties2(physical, &mut props) };
    let heaps = props.memory_properties.memory_heaps;
    let count = (props.memory_properties.memory_heap_count as usize).min(heaps.len());
    let largest = (0..count)
        .filter(|&i| heaps[i].flags.contains(vk::MemoryHeapFlags::DEVICE_LOCAL))
        .max_by_key(|&i| heaps[i].size)?;
    Some((budget.heap_budget[largest].saturating_sub(budget.heap_usage[largest]), heaps[largest].size))
}

/// The Vulkan version (major, minor) of `adapter`'s physical device, when
/// it is a Vulkan adapter (on Linux); `None` otherwise.
#[cfg(target_os = "linux")]
pub(crate) fn api_version(adapter: &wgpu::Adapter) -> Option<(u32, u32)> {
    use ash::vk;
    use wgpu::hal::api::Vulkan;
    // SAFETY: as in `device_memory`.
    let hal = unsafe { adapter.as_hal::<Vulkan>() }?;
    let instance = hal.shared_instance().raw_instance();
    // SAFETY: the physical device belongs to this instance, which outlives the call.
    let version = unsafe { instance.get_physical_device_properties(hal.raw_physical_device()) }.api_version;
    Some((vk::api_version_major(version), vk::api_version_minor(version)))
}

/// The Vulkan version: none off Linux.
#[cfg(not(target_os = "linux"))]
pub(crate) fn api_version(_adapter: &wgpu::Adapter) -> Option<(u32, u32)> {
    None
}

/// Free bytes of device memory: not known off Linux.
#[cfg(not(target_os = "linux"))]
pub(crate) fn memory_budget(_adapter: &wgpu::Adapter) -> Option<(u64, u64)> {
    None
}

/// Bytes of device memory: not known off Linux.
#[cfg(not(target_os = "linux"))]
pub(crate) fn device_memory(_adapter: &wgpu::Adapter) -> Option<u64> {
    None
}

/// The variable that turns off Mesa's device-selection layer.
const NO_DEVICE_SELECT: &str = "NODEVICE_SELECT";

/// Whether Mesa's device-selection layer, asked to find the Wayland
/// compositor's GPU, could only fail and print libwayland-client's
/// `XDG_RUNTIME_DIR` error; `var` reads the environment.
///
/// That is so when no variable tells libwayland where a compositor's socket
/// is (`WAYLAND_SOCKET`, an absolute `WAYLAND_DISPLAY`, or an absolute
/// `XDG_RUNTIME_DIR` to find `WAYLAND_DISPLAY` or `wayland-0` in) and the
/// user steers none of the layer's choices (`NODEVICE_SELECT`,
/// `MESA_VK_DEVICE_SELECT`, `DRI_PRIME`). Pure, so the policy is testable.
pub(crate) fn device_select_probe_is_noise(var: impl Fn(&str) -> Option<OsString>) -> bool {
    let absolute = |name: &str| var(name).is_some_and(|v| v.to_string_lossy().starts_with('/'));
    let user_steers_layer = [NO_DEVICE_SELECT, "MESA_VK_DEVICE_SELECT", "DRI_PRIME"].iter().any(|&n| var(n).is_some());
    // libwayland-client looks for the socket in XDG_RUNTIME_DIR, and
    // complains when that is unset or relative, unless told where it is.
    let wayland_complains =
        var("WAYLAND_SOCKET").is_none() && !absolute("WAYLAND_DISPLAY") && !absolute("XDG_RUNTIME_DIR");
    !user_steers_layer && wayland_complains
}

/// Runs `create` (which creates the Vulkan instance) with Mesa's
/// device-selection layer turned off when its Wayland probe could only
/// print an error (see the module's documentation), and leaves the
/// environment as it found it.
///
/// Changing the environment is sound only while no other thread can read
/// it (C code reads it through libc without Rust's lock), so kiln does so
/// only when the process has a single thread (`/proc/self/task` lists one
/// entry), as at the start of `main`; otherwise the layer runs as
/// configured and may print. This happens at most once per process (the
/// instance is created once), and only when no display is configured.
pub(crate) fn quiet_device_select<T>(create: impl FnOnce() -> T) -> T {
    let quiet = cfg!(target_os = "linux") && device_select_probe_is_noise(|n| std::env::var_os(n)) && single_threaded();
    if !quiet {
        return create();
    }
    /// Removes the variable again, also when `create` panics.
    struct Restore;
    impl Drop for Restore {
        fn drop(&mut self) {
            std::env::remove_var(NO_DEVICE_SELECT);
        }
    }
    std::env::set_var(NO_DEVICE_SELECT, "1");
    let _restore = Restore;
    create()
}

/// Whether this process runs one thread only (Linux: one entry in
/// `/proc/self/task`); `false` when that cannot be read.
fn single_threaded() -> bool {
    std::fs::read_dir("/proc/self/task").is_ok_and(|tasks| tasks.take(2).count() == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<OsString> + 'a {
        move |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| OsString::from(v))
    }

    #[test]
    fn headless_sessions_turn_the_probe_off() {
        assert!(device_select_probe_is_noise(env(&[])));
        assert!(device_select_probe_is_noise(env(&[
            ("XDG_RUNTIME_DIR", "relative"),
            ("WAYLAND_DISPLAY", "wayland-1")
        ])));
        assert!(device_select_probe_is_noise(env(&[("DISPLAY", ":0"), ("WAYLAND_DISPLAY", "")])));
    }

    #[test]
    fn a_reachable_compositor_or_a_users_choice_keeps_the_layer() {
        assert!(!device_select_probe_is_noise(env(&[("XDG_RUNTIME_DIR", "/run/user/1000")])));
        assert!(!device_select_probe_is_noise(env(&[("WAYLAND_DISPLAY", "/tmp/wayland-0")])));
        assert!(!device_select_probe_is_noise(env(&[("WAYLAND_SOCKET", "5")])));
        assert!(!device_select_probe_is_noise(env(&[("NODEVICE_SELECT", "0")])));
        assert!(!device_select_probe_is_noise(env(&[("MESA_VK_DEVICE_SELECT", "10005:0")])));
        assert!(!device_select_probe_is_noise(env(&[("DRI_PRIME", "1")])));
    }
}
