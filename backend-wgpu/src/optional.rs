//! The optional features kiln asks an adapter for, and leaving some off, as
//! an adapter without them would be: kiln's kernels then take the paths
//! they take on such an adapter (a browser's WebGPU, say), so those can be
//! tested anywhere.

/// Environment variable that opts in to cooperative matrices
/// ([`Optional::CooperativeMatrix`]) when set to `1`: they are off unless
/// asked for, as kiln's cooperative-matrix kernel is still slower than its
/// SIMT one (1024^3 f16 on the H200's Vulkan driver: 10.5 against 14.1
/// TFLOP/s). [`HIDE_ENV`] still wins over it.
pub const COOP_ENV: &str = "KILN_WGPU_COOPERATIVE_MATRIX";

/// Whether [`COOP_ENV`]'s value asks for cooperative matrices.
pub(crate) fn coop_asked(value: Option<&str>) -> bool {
    value.is_some_and(|v| v.trim() == "1")
}

/// Environment variable naming optional features to leave off on every
/// device opened (comma-separated [`Optional::name`]s: `subgroups`, `f64`,
/// `f16`, `float-atomics`, `int64`, `timestamps`, `coop-matrix`, `spirv`).
/// Unknown names are ignored.
pub const HIDE_ENV: &str = "KILN_WGPU_HIDE";

/// An optional feature kiln uses where the adapter has it, which a device
/// can be opened without ([`Wgpu::open_without`](crate::Wgpu::open_without),
/// or [`HIDE_ENV`] for every device of a process).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Optional {
    /// Subgroup operations: without them the one-pass scans and compaction
    /// walk back with the whole workgroup, and the sort runs three kernels
    /// a pass instead of onesweep.
    Subgroups,
    /// 64-bit floats in kernels.
    F64,
    /// 16-bit floats in kernels.
    F16,
    /// Atomic add on 32-bit floats.
    FloatAtomics,
    /// 64-bit integers in kernels (the Philox fills' wide multiply).
    Int64,
    /// Timestamp queries, which events time with.
    Timestamps,
    /// Cooperative matrices (`VK_KHR_cooperative_matrix`, wgpu's
    /// experimental `wgpu_cooperative_matrix` WGSL extension), which kiln's
    /// f16 products run on where the adapter offers 16 x 16 x 16 products of
    /// f16 into f32 to subgroups of exactly 32 invocations, and where
    /// [`COOP_ENV`] asks for them (off by default: slower than the SIMT
    /// kernel so far).
    CooperativeMatrix,
    /// SPIR-V modules passed to the driver as they are (wgpu's passthrough
    /// shaders, on Vulkan): kiln then writes the SPIR-V of kernels that
    /// take wide products from `kiln_mul_wide` itself, each product one
    /// `OpUMulExtended` (the Philox fills); without it their WGSL builds
    /// the high word from 16-bit halves.
    Spirv,
}

impl Optional {
    /// Every optional feature.
    pub const ALL: [Optional; 8] = [
        Optional::Subgroups,
        Optional::F64,
        Optional::F16,
        Optional::FloatAtomics,
        Optional::Int64,
        Optional::Timestamps,
        Optional::CooperativeMatrix,
        Optional::Spirv,
    ];

    /// The name [`HIDE_ENV`] knows the feature by.
    ///
    /// ```
    /// use kiln_wgpu::Optional;
    /// assert_eq!(Optional::FloatAtomics.name(), "float-atomics");
    /// assert_eq!(Optional::from_name(" float-atomics "), Some(Optional::FloatAtomics));
    /// assert_eq!(Optional::from_name("warp"), None);
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Optional::Subgroups => "subgroups",
            Optional::F64 => "f64",
            Optional::F16 => "f16",
            Optional::FloatAtomics => "float-atomics",
            Optional::Int64 => "int64",
            Optional::Timestamps => "timestamps",
            Optional::CooperativeMatrix => "coop-matrix",
            Optional::Spirv => "spirv",
        }
    }

    /// The feature named `name` (surrounding spaces ignored), if any.
    pub fn from_name(name: &str) -> Option<Optional> {
        Optional::ALL.into_iter().find(|o| o.name() == name.trim())
    }

    /// The wgpu features it stands for.
    fn wgpu(self) -> wgpu::Features {
        match self {
            Optional::Subgroups => wgpu::Features::SUBGROUP,
            Optional::F64 => wgpu::Features::SHADER_F64,
            Optional::F16 => wgpu::Features::SHADER_F16,
            Optional::FloatAtomics => wgpu::Features::SHADER_FLOAT32_ATOMIC,
            Optional::Int64 => wgpu::Features::SHADER_INT64,
            Optional::Timestamps => wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS,
            Optional::CooperativeMatrix => wgpu::Features::EXPERIMENTAL_COOPERATIVE_MATRIX,
            Optional::Spirv => wgpu::Features::PASSTHROUGH_SHADERS,
        }
    }
}

/// Whether kiln's cooperative-matrix kernels can run on `adapter`: it
/// offers the product they take (16 x 16 x 16, f16 into f32) and its
/// subgroups are always 32 invocations, as the kernels' workgroups of four
/// 32-invocation subgroups assume.
pub(crate) fn cooperative_matrix_usable(adapter: &wgpu::Adapter) -> bool {
    let info = adapter.get_info();
    let product = adapter.cooperative_matrix_properties().iter().any(|p| {
        (p.m_size, p.n_size, p.k_size) == (16, 16, 16)
            && p.ab_type == wgpu::CooperativeScalarType::F16
            && p.cr_type == wgpu::CooperativeScalarType::F32
    });
    product && info.subgroup_min_size == 32 && info.subgroup_max_size == 32
}

/// The optional features kiln asks for when the adapter has them, less
/// those `hidden` and those [`HIDE_ENV`] names.
pub(crate) fn wanted_features(adapter: wgpu::Features, hidden: &[Optional]) -> wgpu::Features {
    let from_env = std::env::var(HIDE_ENV).unwrap_or_default();
    let named = from_env.split(',').filter_map(Optional::from_name);
    let wanted = Optional::ALL.iter().fold(wgpu::Features::empty(), |f, o| f | o.wgpu());
    let wanted = hidden.iter().copied().chain(named).fold(wanted, |f, o| f.difference(o.wgpu()));
    adapter & wanted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cooperative_matrices_are_asked_for_with_1_only() {
        assert!(coop_asked(Some("1")) && coop_asked(Some(" 1\n")));
        for other in [None, Some(""), Some("0"), Some("yes"), Some("true")] {
            assert!(!coop_asked(other), "{other:?}");
        }
    }

    #[test]
    fn hidden_features_are_left_off_and_the_rest_kept() {
        let all = wgpu::Features::all();
        let kept = wanted_features(all, &[Optional::Subgroups, Optional::Timestamps]);
        assert!(!kept.contains(wgpu::Features::SUBGROUP));
        assert!(!kept.intersects(wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS));
        assert!(kept.contains(wgpu::Features::SHADER_F64 | wgpu::Features::SHADER_F16));
        assert!(kept.contains(wgpu::Features::SHADER_FLOAT32_ATOMIC));
        // Nothing the adapter lacks, nothing kiln does not use.
        assert_eq!(wanted_features(wgpu::Features::SHADER_F16, &[]), wgpu::Features::SHADER_F16);
        assert!(!wanted_features(all, &[]).contains(wgpu::Features::MAPPABLE_PRIMARY_BUFFERS));
        for o in Optional::ALL {
            assert_eq!(Optional::from_name(o.name()), Some(o));
        }
    }
}
