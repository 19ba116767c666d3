//! Kernels whose WGSL takes the high words of 32-bit products from
//! `kiln_mul_wide`, compiled to SPIR-V by kiln itself, each call of it one
//! `OpUMulExtended`: WGSL has no wide multiply (naga's IR none either), so
//! the function's WGSL body builds the high word from 16-bit halves, about
//! fourteen operations where the hardware has one instruction
//! (`IMAD.WIDE.U32` on NVIDIA). Where the device takes SPIR-V as it is
//! (wgpu's passthrough shaders, on Vulkan), kiln writes the module with
//! naga's SPIR-V writer, as wgpu would, with the launch's block size in
//! place of its overrides, and replaces every call of the function by the
//! instruction; the function itself stays, uncalled. Elsewhere the WGSL
//! body runs. Both give the same bits.
//!
//! The function is `fn kiln_mul_wide(a: u32, b: u32) -> vec2<u32>`: the
//! low word of `a * b`, then the high word. Any WGSL kernel may define it.

use wgpu::naga;

/// The name of the WGSL function whose calls become `OpUMulExtended`.
pub(crate) const MUL_WIDE: &str = "kiln_mul_wide";

/// What kiln writes SPIR-V for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target {
    /// The SPIR-V version, from the device's Vulkan version as wgpu picks it.
    pub(crate) version: (u8, u8),
}

impl Target {
    /// The SPIR-V version wgpu writes for a device of Vulkan `api` (major,
    /// minor): 1.0 for 1.0, 1.3 for 1.1, 1.5 for 1.2, 1.6 from 1.3 on.
    pub(crate) fn for_vulkan(api: (u32, u32)) -> Target {
        let version = match api {
            (1, 0) => (1, 0),
            (1, 1) => (1, 3),
            (1, 2) => (1, 5),
            _ => (1, 6),
        };
        Target { version }
    }
}

/// What kiln writes SPIR-V for on a device of `adapter` opened with
/// `features`: Vulkan adapters whose device takes passthrough shaders.
pub(crate) fn target(adapter: &wgpu::Adapter, features: wgpu::Features) -> Option<Target> {
    let vulkan = adapter.get_info().backend == wgpu::Backend::Vulkan;
    if !vulkan || !features.contains(wgpu::Features::PASSTHROUGH_SHADERS) {
        return None;
    }
    crate::vulkan::api_version(adapter).map(Target::for_vulkan)
}

/// Whether `module` defines `fn kiln_mul_wide(a: u32, b: u32) -> vec2<u32>`.
pub(crate) fn has_mul_wide(module: &naga::Module) -> bool {
    let u32_ty =
        |ty: naga::Handle<naga::Type>| matches!(module.types[ty].inner, naga::TypeInner::Scalar(naga::Scalar::U32));
    module.functions.iter().any(|(_, f)| {
        f.name.as_deref() == Some(MUL_WIDE)
            && f.arguments.len() == 2
            && f.arguments.iter().all(|a| u32_ty(a.ty))
            && f.result.as_ref().is_some_and(|r| {
                matches!(
                    module.types[r.ty].inner,
                    naga::TypeInner::Vector { size: naga::VectorSize::Bi, scalar: naga::Scalar::U32 }
                )
            })
    })
}

/// The SPIR-V of `entry` in `module` with the overrides `constants` set,
/// bounds unchecked unless `checked` (as wgpu compiles kiln's WGSL), and
/// every call of [`MUL_WIDE`] one `OpUMulExtended`.
pub(crate) fn compile(
    module: &naga::Module,
    info: &naga::valid::ModuleInfo,
    entry: &str,
    constants: &naga::back::PipelineConstants,
    target: Target,
    checks: wgpu::ShaderRuntimeChecks,
) -> Result<Vec<u32>, String> {
    let stage = naga::ShaderStage::Compute;
    let (module, info) =
        naga::back::pipeline_constants::process_overrides(module, info, Some((stage, entry)), constants)
            .map_err(|e| format!("setting its overrides: {e}"))?;
    let policy = if checks.bounds_checks {
        naga::proc::BoundsCheckPolicy::Restrict
    } else {
        naga::proc::BoundsCheckPolicy::Unchecked
    };
    let options = naga::back::spv::Options {
        lang_version: target.version,
        // Names, which find the function; nothing else depends on them.
        flags: naga::back::spv::WriterFlags::DEBUG,
        bounds_check_policies: naga::proc::BoundsCheckPolicies {
            index: policy,
            buffer: policy,
            image_load: policy,
            binding_array: naga::proc::BoundsCheckPolicy::Unchecked,
        },
        // As kiln's pipelines ask: workgroup memory starts undefined.
        zero_initialize_workgroup_memory: naga::back::spv::ZeroInitializeWorkgroupMemoryMode::None,
        force_loop_bounding: checks.force_loop_bounding,
        emit_int_div_checks: checks.int_div_checks,
        ..Default::default()
    };
    let pipeline = naga::back::spv::PipelineOptions { shader_stage: stage, entry_point: entry.to_string() };
    let words = naga::back::spv::write_vec(&module, &info, &options, Some(&pipeline))
        .map_err(|e| format!("writing its SPIR-V: {e}"))?;
    native_mul_wide(&words)
}

// The SPIR-V opcodes the rewrite reads and writes.
const OP_NAME: u32 = 5;
const OP_TYPE_STRUCT: u32 = 30;
const OP_FUNCTION: u32 = 54;
const OP_FUNCTION_PARAMETER: u32 = 55;
const OP_FUNCTION_CALL: u32 = 57;
const OP_COMPOSITE_CONSTRUCT: u32 = 80;
const OP_COMPOSITE_EXTRACT: u32 = 81;
const OP_UMUL_EXTENDED: u32 = 151;
const MAGIC: u32 = 0x0723_0203;
const HEADER: usize = 5;

/// An instruction's first word.
fn op(words: u32, opcode: u32) -> u32 {
    (words << 16) | opcode
}

/// The instructions of `module` as (start, length, opcode), checked to
/// tile the words after the header.
fn instructions(module: &[u32]) -> Result<Vec<(usize, usize, u32)>, String> {
    if module.len() < HEADER || module[0] != MAGIC {
        return Err("not a SPIR-V module".into());
    }
    let mut out = Vec::new();
    let mut at = HEADER;
    while at < module.len() {
        let len = (module[at] >> 16) as usize;
        if len == 0 || at + len > module.len() {
            return Err(format!("a malformed instruction at word {at}"));
        }
        out.push((at, len, module[at] & 0xffff));
        at += len;
    }
    Ok(out)
}

/// The literal string of `words` (UTF-8, NUL-terminated, packed little-endian).
fn string(words: &[u32]) -> Vec<u8> {
    let bytes = words.iter().flat_map(|w| w.to_le_bytes());
    bytes.take_while(|&b| b != 0).collect()
}

/// `module` with each `OpFunctionCall` of [`MUL_WIDE`] replaced by an
/// `OpUMulExtended` into a new struct of two words, its members extracted
/// and built into the call's `vec2<u32>` under the call's own result id;
/// as it is where the entry point never calls the function (naga then
/// leaves it out).
fn native_mul_wide(module: &[u32]) -> Result<Vec<u32>, String> {
    let list = instructions(module)?;
    let word = |at: usize| module[at];
    let named = list.iter().find(|&&(at, len, code)| {
        code == OP_NAME && len > 2 && string(&module[at + 2..at + len]) == MUL_WIDE.as_bytes()
    });
    let Some(&(at, ..)) = named else {
        return Ok(module.to_vec());
    };
    let function = word(at + 1);
    let defined = list.iter().position(|&(at, _, code)| code == OP_FUNCTION && word(at + 2) == function);
    let defined = defined.ok_or_else(|| format!("{MUL_WIDE} is named but not defined"))?;
    let params: Vec<u32> = list[defined + 1..]
        .iter()
        .take_while(|&&(_, _, code)| code == OP_FUNCTION_PARAMETER)
        .map(|&(at, ..)| word(at + 1))
        .collect();
    let [u32_ty, b_ty] = params[..] else {
        return Err(format!("{MUL_WIDE} takes {} parameters, not 2", params.len()));
    };
    if u32_ty != b_ty {
        return Err(format!("{MUL_WIDE}'s parameters differ in type"));
    }
    let mut bound = module[3];
    let pair = bound;
    bound += 1;
    let mut out = Vec::with_capacity(module.len() + 16);
    out.extend_from_slice(&module[..HEADER]);
    let first_function = list.iter().position(|&(_, _, code)| code == OP_FUNCTION).unwrap_or(list.len());
    for (k, &(at, len, code)) in list.iter().enumerate() {
        if k == first_function {
            // The last declaration before the first function: u32 is declared.
            out.extend_from_slice(&[op(4, OP_TYPE_STRUCT), pair, u32_ty, u32_ty]);
        }
        if code == OP_FUNCTION_CALL && len == 6 && word(at + 3) == function {
            let (ty, result, a, b) = (word(at + 1), word(at + 2), word(at + 4), word(at + 5));
            let (product, lo, hi) = (bound, bound + 1, bound + 2);
            bound += 3;
            out.extend_from_slice(&[op(5, OP_UMUL_EXTENDED), pair, product, a, b]);
            out.extend_from_slice(&[op(5, OP_COMPOSITE_EXTRACT), u32_ty, lo, product, 0]);
            out.extend_from_slice(&[op(5, OP_COMPOSITE_EXTRACT), u32_ty, hi, product, 1]);
            out.extend_from_slice(&[op(5, OP_COMPOSITE_CONSTRUCT), ty, result, lo, hi]);
            continue;
        }
        out.extend_from_slice(&module[at..at + len]);
    }
    if first_function == list.len() {
        return Err("no function in the module".into());
    }
    out[3] = bound;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SOURCE: &str = "
// The body is replaced at each call; only the signature counts.
fn kiln_mul_wide(a: u32, b: u32) -> vec2<u32> {
    return vec2<u32>(a * b, 0u);
}
@group(0) @binding(0) var<storage, read_write> data: array<u32>;
override block_x: u32 = 64u;
@compute @workgroup_size(block_x)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let p = kiln_mul_wide(data[2u * gid.x], data[2u * gid.x + 1u]);
    let q = kiln_mul_wide(p.x, 0xD2511F53u);
    data[2u * gid.x] = p.y ^ q.y;
}
";

    fn spirv(source: &str) -> Vec<u32> {
        let module = naga::front::wgsl::parse_str(source).unwrap();
        let mut validator =
            naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all());
        let info = validator.validate(&module).unwrap();
        assert!(has_mul_wide(&module));
        let constants = naga::back::PipelineConstants::from_iter([("block_x".to_string(), 128.0)]);
        compile(&module, &info, "main", &constants, Target::for_vulkan((1, 3)), wgpu::ShaderRuntimeChecks::checked())
            .unwrap()
    }

    fn count(module: &[u32], code: u32) -> usize {
        instructions(module).unwrap().iter().filter(|i| i.2 == code).count()
    }

    #[test]
    fn every_call_becomes_one_wide_multiply() {
        let out = spirv(SOURCE);
        assert_eq!(count(&out, OP_UMUL_EXTENDED), 2);
        assert_eq!(count(&out, OP_FUNCTION_CALL), 0, "both calls replaced");
        assert_eq!(count(&out, OP_FUNCTION), 2, "the function stays, uncalled");
        // Every new id is below the new bound, and the struct comes before any function.
        let list = instructions(&out).unwrap();
        let structs: Vec<_> = list.iter().filter(|i| i.2 == OP_TYPE_STRUCT).map(|i| out[i.0 + 1]).collect();
        let first_function = list.iter().position(|i| i.2 == OP_FUNCTION).unwrap();
        assert!(list[..first_function].iter().any(|i| i.2 == OP_TYPE_STRUCT));
        let max_id = list.iter().filter(|i| i.2 == OP_UMUL_EXTENDED).map(|i| out[i.0 + 2]).max().unwrap();
        assert!(max_id + 2 < out[3] && structs.iter().all(|&s| s < out[3]));
    }

    #[test]
    fn a_module_without_the_function_is_left_as_it_is() {
        let source = "@group(0) @binding(0) var<storage, read_write> d: array<u32>;
@compute @workgroup_size(1) fn main() { d[0] = d[0] * 3u; }";
        let module = naga::front::wgsl::parse_str(source).unwrap();
        assert!(!has_mul_wide(&module));
        let info = naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::all())
            .validate(&module)
            .unwrap();
        let words = naga::back::spv::write_vec(&module, &info, &naga::back::spv::Options::default(), None).unwrap();
        assert_eq!(native_mul_wide(&words).unwrap(), words);
        assert!(native_mul_wide(&[1, 2, 3]).unwrap_err().contains("not a SPIR-V module"));
    }

    #[test]
    fn a_function_of_another_shape_is_not_taken() {
        let source = "fn kiln_mul_wide(a: u32, b: i32) -> vec2<u32> { return vec2<u32>(a, u32(b)); }";
        assert!(!has_mul_wide(&naga::front::wgsl::parse_str(source).unwrap()));
    }

    #[test]
    fn versions_follow_vulkan() {
        assert_eq!(Target::for_vulkan((1, 0)).version, (1, 0));
        assert_eq!(Target::for_vulkan((1, 1)).version, (1, 3));
        assert_eq!(Target::for_vulkan((1, 4)).version, (1, 6));
    }
}
