//! What a WGSL entry point expects, read from the parsed module with naga,
//! so that a launch whose arguments disagree with the kernel is refused
//! with a message naming the argument, not a wgpu validation dump.

use kiln_core::DType;
use wgpu::naga;

/// One member of the kernel's scalar struct.
#[derive(Debug, Clone)]
pub(crate) struct Member {
    pub(crate) name: String,
    /// The member's kiln type, or `None` when it is not a scalar.
    pub(crate) dtype: Option<DType>,
    pub(crate) offset: u32,
}

/// One storage binding of group 0 the entry point uses.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Binding {
    pub(crate) binding: u32,
    /// Declared `read_write`.
    pub(crate) writable: bool,
    /// The least bytes a binding of it may have (one element of a runtime-sized array).
    pub(crate) min_bytes: u64,
    pub(crate) name: String,
}

/// The interface of one entry point.
#[derive(Debug, Clone)]
pub(crate) struct Reflection {
    /// Group-0 bindings the entry point uses, by binding number.
    pub(crate) buffers: Vec<Binding>,
    /// Members of the uniform struct at group 1 binding 0, when the entry point uses it.
    pub(crate) params: Option<Vec<Member>>,
    /// Which of `block_x`, `block_y`, `block_z` the module declares as overrides.
    pub(crate) overrides: [bool; 3],
    /// The workgroup size along each axis where it is a literal.
    pub(crate) fixed: [Option<u32>; 3],
    /// Bytes of `var<workgroup>` memory the entry point uses (wgpu does not
    /// check this against the adapter's limit, so kiln does).
    pub(crate) workgroup_bytes: u64,
}

/// The override names that carry `LaunchConfig::block`.
pub(crate) const BLOCK_OVERRIDES: [&str; 3] = ["block_x", "block_y", "block_z"];

fn scalar_dtype(s: naga::Scalar) -> Option<DType> {
    use naga::ScalarKind as K;
    match (s.kind, s.width) {
        (K::Uint, 4) => Some(DType::U32),
        (K::Sint, 4) => Some(DType::I32),
        (K::Float, 2) => Some(DType::F16),
        (K::Float, 4) => Some(DType::F32),
        (K::Float, 8) => Some(DType::F64),
        (K::Uint, 8) => Some(DType::U64),
        (K::Sint, 8) => Some(DType::I64),
        _ => None,
    }
}

fn global_name(g: &naga::GlobalVariable) -> &str {
    g.name.as_deref().unwrap_or("<unnamed>")
}

/// Read the interface of compute entry point `entry`; `Err` with the
/// reason when it is missing or binds resources outside the ABI.
pub(crate) fn reflect(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry: &str,
) -> std::result::Result<Reflection, String> {
    let Some((index, ep)) =
        module.entry_points.iter().enumerate().find(|(_, e)| e.name == entry && e.stage == naga::ShaderStage::Compute)
    else {
        let found: Vec<&str> = module
            .entry_points
            .iter()
            .filter(|e| e.stage == naga::ShaderStage::Compute)
            .map(|e| e.name.as_str())
            .collect();
        return Err(format!(
            "no `@compute fn {entry}` in the source (compute entry points found: [{}])",
            found.join(", ")
        ));
    };
    let uses = info.get_entry_point(index);
    let mut buffers = Vec::new();
    let mut params = None;
    let mut workgroup_bytes = 0u64;
    for (handle, g) in module.global_variables.iter() {
        if uses[handle].is_empty() {
            continue;
        }
        let size = u64::from(module.types[g.ty].inner.try_size(module.to_ctx()).unwrap_or(0));
        if g.space == naga::AddressSpace::WorkGroup {
            workgroup_bytes += size;
        }
        let Some(binding) = &g.binding else { continue };
        let at = format!("`{}` at @group({}) @binding({})", global_name(g), binding.group, binding.binding);
        match (g.space, binding.group, binding.binding) {
            (naga::AddressSpace::Storage { access }, 0, b) => {
                buffers.push(Binding {
                    binding: b,
                    writable: access.contains(naga::StorageAccess::STORE),
                    min_bytes: size,
                    name: global_name(g).to_string(),
                });
            }
            (naga::AddressSpace::Uniform, 1, 0) => {
                let naga::TypeInner::Struct { members, .. } = &module.types[g.ty].inner else {
                    return Err(format!("{at} must be a struct of the scalar arguments (kernel ABI)"));
                };
                let members = members
                    .iter()
                    .map(|m| Member {
                        name: m.name.clone().unwrap_or_default(),
                        dtype: match module.types[m.ty].inner {
                            naga::TypeInner::Scalar(s) => scalar_dtype(s),
                            _ => None,
                        },
                        offset: m.offset,
                    })
                    .collect();
                params = Some(members);
            }
            _ => {
                return Err(format!(
                    "{at} is outside the kernel ABI: buffers are `var<storage>` at @group(0), \
                     scalars one `var<uniform>` struct at @group(1) @binding(0)"
                ))
            }
        }
    }
    buffers.sort_unstable();
    let mut overrides = [false; 3];
    for (_, o) in module.overrides.iter() {
        if let Some(i) = BLOCK_OVERRIDES.iter().position(|n| o.name.as_deref() == Some(n)) {
            overrides[i] = true;
        }
    }
    let mut fixed = [None; 3];
    for (axis, size) in fixed.iter_mut().enumerate() {
        let by_override = ep.workgroup_size_overrides.as_ref().is_some_and(|o| o[axis].is_some());
        if !by_override {
            *size = Some(ep.workgroup_size[axis]);
        }
    }
    Ok(Reflection { buffers, params, overrides, fixed, workgroup_bytes })
}
