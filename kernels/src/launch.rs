//! What every pattern's safe API shares: per-dtype programs, launch shapes,
//! length arguments and the WGSL binding header.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use kiln_core::{Args, Backend, BackendKind, DType, Device, Element, Error, LaunchConfig, Program, Result, Stream};

/// Threads per block for one-element-per-thread kernels: a multiple of every
/// warp/subgroup size, small enough for every backend's limits.
pub(crate) const BLOCK: u32 = 256;

/// The program named `name`, built once per process by `build`.
///
/// Programs are immutable; caching them keeps the per-call cost of a pattern
/// to a map lookup here and one in the device's kernel cache.
pub(crate) fn program(name: &str, build: impl FnOnce() -> Program) -> Arc<Program> {
    static CACHE: OnceLock<Mutex<HashMap<String, Arc<Program>>>> = OnceLock::new();
    let mut cache = CACHE.get_or_init(Default::default).lock().unwrap_or_else(|p| p.into_inner());
    if let Some(p) = cache.get(name) {
        return p.clone();
    }
    let p = Arc::new(build());
    cache.insert(name.to_string(), p.clone());
    p
}

/// A grid-stride launch over `n` elements of `T`, one thread per element (or,
/// on CUDA, one per 16-byte pack when every operand's byte offset is 16-byte
/// aligned, so that the kernels' packed loops have one pack per thread) up to
/// the device's grid limit; the kernels loop for the rest.
pub(crate) fn elementwise_config<B: Backend, T: Element>(
    device: &Device<B>,
    n: usize,
    offsets: &[usize],
) -> LaunchConfig {
    let size = size_of::<T>();
    let packed = B::KIND == BackendKind::Cuda && offsets.iter().all(|o| (o * size) % 16 == 0);
    let per_thread = if packed { 16 / size } else { 1 };
    let max_blocks = device.info().limits.max_grid[0] as usize;
    let blocks = n.div_ceil(per_thread * BLOCK as usize).min(max_blocks);
    LaunchConfig::new(blocks as u32, BLOCK)
}

/// Append the element count in the ABI's type: u32 on WGSL, u64 elsewhere.
pub(crate) fn push_len<'a, B: Backend>(args: Args<'a, B>, n: usize, kernel: &str) -> Result<Args<'a, B>> {
    match B::KIND {
        BackendKind::Wgpu => {
            let n = u32::try_from(n).map_err(|_| {
                Error::unsupported(
                    B::KIND,
                    format!("kernel `{kernel}`"),
                    format!("{n} elements exceed WGSL's u32 indices"),
                )
            })?;
            Ok(args.arg(n))
        }
        _ => Ok(args.arg(n as u64)),
    }
}

/// `Err(Unsupported)` when the device cannot compute on `dtype`.
pub(crate) fn check_dtype<B: Backend>(stream: &Stream<B>, dtype: DType, what: &str) -> Result<()> {
    let f = &stream.device().info().features;
    let missing = match dtype {
        DType::F64 if !f.f64 => Some("the device has no 64-bit float support"),
        DType::F16 if !f.f16 => Some("the device has no 16-bit float support"),
        _ => None,
    };
    match missing {
        Some(reason) => Err(Error::unsupported(B::KIND, format!("{what} on {dtype}"), reason)),
        None => Ok(()),
    }
}

/// The name a kernel's WGSL and CUDA code use for `dtype`: the WGSL type,
/// or for CUDA the C type. An `Err` for dtypes WGSL lacks is raised at
/// compile time by the WGSL backend, so here a placeholder is harmless.
pub(crate) fn wgsl_type(dtype: DType) -> &'static str {
    dtype.wgsl_name().unwrap_or("unsupported_type")
}

/// Access of one WGSL storage binding.
#[derive(Clone, Copy)]
pub(crate) enum Access {
    Read,
    ReadWrite,
}

/// The `@group(0)` storage declarations for buffer arguments named `names`,
/// in ABI order (binding i for the i-th buffer argument), each `array<T>`.
pub(crate) fn wgsl_bindings(buffers: &[(&str, Access)]) -> String {
    let mut out = String::new();
    if buffers.is_empty() {
        return out;
    }
    for (i, (name, access)) in buffers.iter().enumerate() {
        let mode = match access {
            Access::Read => "read",
            Access::ReadWrite => "read_write",
        };
        out.push_str(&format!("@group(0) @binding({i}) var<storage, {mode}> {name}: array<T>;\n"));
    }
    out
}

/// Whether `T` on this device needs `enable f16;` in WGSL.
pub(crate) fn wgsl_enables(dtype: DType) -> &'static str {
    if dtype == DType::F16 {
        "enable f16;\n"
    } else {
        ""
    }
}

/// kiln's own 16-bit float types, needed before `T` is declared.
const CUDA_HALFS: &str = include_str!("halfs.cuh");
/// The CUDA prelude every kernel source starts with (after its `T` typedef).
const CUDA_PRELUDE: &str = include_str!("prelude.cuh");

/// The CUDA type kiln's kernels use for `dtype`: the C type, or kiln's own
/// 16-bit float structs (kiln compiles without the toolkit's fp16 headers).
pub(crate) fn cuda_type(dtype: DType) -> &'static str {
    match dtype {
        DType::F16 => "kiln_half",
        DType::BF16 => "kiln_bf16",
        d => d.cuda_name(),
    }
}

/// A full CUDA source: the 16-bit types, `T` bound to `dtype`, the shared prelude, then `body`.
pub(crate) fn cuda_source(dtype: DType, body: &str) -> String {
    format!("{CUDA_HALFS}\ntypedef {} T;\n{CUDA_PRELUDE}\n{body}", cuda_type(dtype))
}

/// A full WGSL source: enables, `T` bound to `dtype`, the buffer bindings, then `body`.
pub(crate) fn wgsl_source(dtype: DType, buffers: &[(&str, Access)], body: &str) -> String {
    format!("{}alias T = {};\n{}\n{body}", wgsl_enables(dtype), wgsl_type(dtype), wgsl_bindings(buffers))
}
