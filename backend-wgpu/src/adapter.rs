//! Finding adapters: Vulkan only on Linux, a discrete GPU first, and the
//! adapter's type, limits and optional features turned into kiln's
//! [`DeviceInfo`].

use std::sync::OnceLock;

use kiln_core::{BackendKind, DeviceInfo, DeviceKind, Error, Features, IndexWidth, Limits, MatrixUnits, Result};

/// Environment variable that picks adapters by name (a case-insensitive substring).
pub const ADAPTER_ENV: &str = "KILN_WGPU_ADAPTER";

/// The backends wgpu may use. On Linux only Vulkan: wgpu's default set
/// includes GL, and a silent fall-back to it would run kernels on a
/// different, slower path than the one asked for. Elsewhere the primary
/// native API (Metal, DX12), never GL either.
fn wanted_backends() -> wgpu::Backends {
    if cfg!(target_os = "linux") {
        wgpu::Backends::VULKAN
    } else {
        wgpu::Backends::PRIMARY
    }
}

/// Whether an adapter on `backend` is one kiln accepts.
pub(crate) fn accepted_backend(backend: wgpu::Backend) -> bool {
    if cfg!(target_os = "linux") {
        backend == wgpu::Backend::Vulkan
    } else {
        matches!(backend, wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12)
    }
}

/// The process-wide wgpu instance (creating one loads the Vulkan loader and
/// its drivers, which is too slow to repeat per call), created without
/// Mesa's Wayland probe where that could only print an error (see
/// [`quiet_device_select`](crate::vulkan::quiet_device_select)).
pub(crate) fn instance() -> &'static wgpu::Instance {
    static INSTANCE: OnceLock<wgpu::Instance> = OnceLock::new();
    INSTANCE.get_or_init(|| {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle();
        desc.backends = wanted_backends();
        desc.flags = wgpu::InstanceFlags::from_build_config().with_env();
        crate::vulkan::quiet_device_select(|| wgpu::Instance::new(desc))
    })
}

fn unavailable(reason: String) -> Error {
    Error::BackendUnavailable { backend: BackendKind::Wgpu, reason }
}

/// What sort of device an adapter is; a CPU adapter (lavapipe, llvmpipe,
/// SwiftShader) emulates a GPU in software.
pub(crate) fn device_kind(t: wgpu::DeviceType) -> DeviceKind {
    match t {
        wgpu::DeviceType::DiscreteGpu => DeviceKind::DiscreteGpu,
        wgpu::DeviceType::IntegratedGpu => DeviceKind::IntegratedGpu,
        wgpu::DeviceType::VirtualGpu => DeviceKind::VirtualGpu,
        wgpu::DeviceType::Cpu => DeviceKind::Software,
        wgpu::DeviceType::Other => DeviceKind::Other,
    }
}

/// Preference rank of an adapter type: lower is better, so hardware comes
/// before software whatever order the driver lists them in.
fn type_rank(t: wgpu::DeviceType) -> u8 {
    match t {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Cpu => 3,
        wgpu::DeviceType::Other => 4,
    }
}

/// Order adapters by preference and keep those `filter` (from
/// [`ADAPTER_ENV`]) names. Pure, so the policy is testable without adapters.
pub(crate) fn choose(infos: &[wgpu::AdapterInfo], filter: Option<&str>) -> Vec<usize> {
    let needle = filter.map(|f| f.trim().to_lowercase()).filter(|f| !f.is_empty());
    let mut order: Vec<usize> = (0..infos.len())
        .filter(|&i| accepted_backend(infos[i].backend))
        .filter(|&i| needle.as_ref().is_none_or(|n| infos[i].name.to_lowercase().contains(n)))
        .collect();
    // A stable sort keeps the driver's order among equals.
    order.sort_by_key(|&i| type_rank(infos[i].device_type));
    order
}

/// The adapters kiln will use, best first, or why there are none.
pub(crate) fn adapters() -> Result<Vec<wgpu::Adapter>> {
    let all = pollster::block_on(instance().enumerate_adapters(wanted_backends()));
    let infos: Vec<wgpu::AdapterInfo> = all.iter().map(|a| a.get_info()).collect();
    let filter = std::env::var(ADAPTER_ENV).ok();
    let order = choose(&infos, filter.as_deref());
    if order.is_empty() {
        let accepted = infos.iter().filter(|i| accepted_backend(i.backend)).count();
        let api = if cfg!(target_os = "linux") { "Vulkan" } else { "Vulkan, Metal or DX12" };
        return Err(unavailable(match (&filter, accepted) {
            (Some(f), n) if n > 0 => format!(
                "no {api} adapter matches {ADAPTER_ENV}={f:?}; adapters found: {}",
                infos.iter().map(|i| format!("{:?}", i.name)).collect::<Vec<_>>().join(", ")
            ),
            _ => format!("no {api} adapter found (install mesa-vulkan-drivers for lavapipe, or a GPU driver)"),
        }));
    }
    let mut all: Vec<Option<wgpu::Adapter>> = all.into_iter().map(Some).collect();
    Ok(order.into_iter().filter_map(|i| all[i].take()).collect())
}

/// Whether events can carry device timestamps: queries written between
/// commands of an encoder, not only at pass boundaries.
pub(crate) fn has_timestamps(f: wgpu::Features) -> bool {
    f.contains(wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS)
}

/// kiln's view of an adapter with the given (device) limits and features,
/// `wide_multiply` where kiln writes the SPIR-V of `kiln_mul_wide`
/// kernels itself.
pub(crate) fn device_info(
    ordinal: usize,
    info: &wgpu::AdapterInfo,
    limits: &wgpu::Limits,
    features: wgpu::Features,
    memory_bytes: u64,
    wide_multiply: bool,
) -> DeviceInfo {
    let api = match info.backend {
        wgpu::Backend::Vulkan => "Vulkan",
        wgpu::Backend::Metal => "Metal",
        wgpu::Backend::Dx12 => "DX12",
        _ => "other API",
    };
    let driver = match (info.driver.is_empty(), info.driver_info.is_empty()) {
        (false, false) => format!("{api}, {} ({})", info.driver, info.driver_info),
        (false, true) => format!("{api}, {}", info.driver),
        (true, false) => format!("{api}, {}", info.driver_info),
        (true, true) => api.to_string(),
    };
    let subgroups = features.contains(wgpu::Features::SUBGROUP);
    DeviceInfo {
        backend: BackendKind::Wgpu,
        ordinal,
        name: info.name.clone(),
        kind: device_kind(info.device_type),
        // wgpu does not report compute units.
        compute_units: 0,
        memory_bytes,
        compute_capability: None,
        driver,
        limits: Limits {
            max_threads_per_block: limits.max_compute_invocations_per_workgroup,
            max_block: [
                limits.max_compute_workgroup_size_x,
                limits.max_compute_workgroup_size_y,
                limits.max_compute_workgroup_size_z,
            ],
            max_grid: [limits.max_compute_workgroups_per_dimension; 3],
            max_shared_mem_per_block: limits.max_compute_workgroup_storage_size,
            max_buffer_bytes: limits.max_buffer_size,
            max_binding_bytes: limits.max_storage_buffer_binding_size.min(limits.max_buffer_size),
            // The largest subgroup the adapter may use; 1 when kernels cannot see subgroups.
            warp_size: if subgroups { info.subgroup_max_size.max(1) } else { 1 },
            min_warp_size: if subgroups { info.subgroup_min_size.max(1) } else { 1 },
        },
        features: Features {
            f64: features.contains(wgpu::Features::SHADER_F64),
            f16: features.contains(wgpu::Features::SHADER_F16),
            float_atomics: features.contains(wgpu::Features::SHADER_FLOAT32_ATOMIC),
            int64: features.contains(wgpu::Features::SHADER_INT64),
            // Where kiln writes SPIR-V itself (`spirv.rs`).
            wide_multiply,
            // WGSL has no bfloat16 type.
            bf16: false,
            subgroups,
            timestamps: has_timestamps(features),
            // WGSL and Vulkan promise no forward progress between workgroups.
            forward_progress: false,
            // WGSL has no 64-bit integers.
            index_width: IndexWidth::U32,
            // kiln's WGSL kernels move 32-bit words, packing narrower elements.
            vector_bytes: 4,
            // kiln's f16 products on cooperative matrices, where the device
            // was opened with them (`optional.rs` says when).
            matrix_units: MatrixUnits {
                half: features.contains(wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX),
                ..MatrixUnits::default()
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(name: &str, device_type: wgpu::DeviceType, backend: wgpu::Backend) -> wgpu::AdapterInfo {
        wgpu::AdapterInfo { name: name.into(), ..wgpu::AdapterInfo::new(device_type, backend) }
    }

    #[test]
    fn discrete_first_then_integrated_then_cpu() {
        let v = wgpu::Backend::Vulkan;
        let infos = [
            info("llvmpipe", wgpu::DeviceType::Cpu, v),
            info("Intel UHD", wgpu::DeviceType::IntegratedGpu, v),
            info("NVIDIA H100", wgpu::DeviceType::DiscreteGpu, v),
        ];
        assert_eq!(choose(&infos, None), vec![2, 1, 0]);
        assert_eq!(choose(&infos, Some("LLVM")), vec![0]);
        assert_eq!(choose(&infos, Some("  ")), vec![2, 1, 0]);
        assert!(choose(&infos, Some("radeon")).is_empty());
    }

    #[test]
    fn cpu_adapters_are_software() {
        assert_eq!(device_kind(wgpu::DeviceType::Cpu), DeviceKind::Software);
        assert_eq!(device_kind(wgpu::DeviceType::DiscreteGpu), DeviceKind::DiscreteGpu);
        let infos = [info("llvmpipe", wgpu::DeviceType::Cpu, wgpu::Backend::Vulkan)];
        let d = device_info(0, &infos[0], &wgpu::Limits::default(), wgpu::Features::empty(), 0, false);
        assert!(d.kind.is_software(), "{d}");
        assert!(d.to_string().contains("software GPU"), "{d}");
    }

    /// Mesa's lavapipe, where installed, says it is a CPU device, so kiln
    /// reports it as software.
    #[test]
    fn lavapipe_reports_itself_as_software() {
        let found: Vec<wgpu::AdapterInfo> =
            adapters().map(|a| a.iter().map(|a| a.get_info()).collect()).unwrap_or_default();
        let lavapipe: Vec<&wgpu::AdapterInfo> = found.iter().filter(|i| i.name.contains("llvmpipe")).collect();
        if lavapipe.is_empty() {
            eprintln!("lavapipe is not installed here; nothing to check");
            return;
        }
        for i in lavapipe {
            assert_eq!(i.device_type, wgpu::DeviceType::Cpu, "{i:?}");
            assert_eq!(device_kind(i.device_type), DeviceKind::Software, "{i:?}");
        }
        let listed = <crate::Wgpu as kiln_core::Backend>::devices().unwrap();
        assert!(listed.iter().filter(|d| d.name.contains("llvmpipe")).all(|d| d.kind.is_software()), "{listed:?}");
    }

    #[test]
    fn gl_adapters_are_never_chosen() {
        let infos = [info("llvmpipe (GL)", wgpu::DeviceType::Cpu, wgpu::Backend::Gl)];
        assert!(choose(&infos, None).is_empty());
    }
}
