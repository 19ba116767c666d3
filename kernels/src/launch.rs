//! What every pattern's safe API shares: per-dtype programs, launch shapes
//! sized from the device's capabilities, dtype checks and the source
//! headers (lengths are passed with [`Args::length`](kiln_core::Args::length)).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use kiln_core::{Backend, DType, Device, Element, Error, IndexWidth, Language, LaunchConfig, Program, Result, Stream};

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

/// Blocks of `tile` items covering `n`, capped at `max` (the kernels loop
/// grid-stride for the rest).
pub(crate) fn blocks(n: usize, tile: usize, max: u32) -> u32 {
    u32::try_from(n.div_ceil(tile)).unwrap_or(u32::MAX).min(max)
}

/// Whether every operand's byte offset is a multiple of `bytes`, so that
/// accesses of that width stay aligned.
pub(crate) fn aligned(byte_offsets: &[usize], bytes: usize) -> bool {
    byte_offsets.iter().all(|o| o % bytes == 0)
}

/// A grid-stride launch over `n` elements of `T`: one thread per element,
/// or, where every operand's byte offset is a multiple of the device's
/// vector width ([`Features::vector_bytes`](kiln_core::Features)), one per
/// vector (so that CUDA's packed loops have one 16-byte pack per thread), up
/// to the device's grid limit; the kernels loop for the rest.
pub(crate) fn elementwise_config<B: Backend, T: Element>(
    device: &Device<B>,
    n: usize,
    offsets: &[usize],
) -> LaunchConfig {
    let size = size_of::<T>();
    let info = device.info();
    let vector = info.features.vector_bytes.max(1) as usize;
    let byte_offsets: Vec<usize> = offsets.iter().map(|o| o * size).collect();
    let per_thread = if B::LANGUAGE == Language::Wgsl {
        // The WGSL elementwise kernels handle four elements per step, four
        // strides apart: a grid of a quarter of them.
        4
    } else if aligned(&byte_offsets, vector) {
        (vector / size).max(1)
    } else {
        1
    };
    LaunchConfig::new(blocks(n, per_thread * BLOCK as usize, info.limits.max_grid[0]), BLOCK)
}

/// How wide `stream`'s kernels index, the type every length argument takes
/// ([`Args::length`](kiln_core::Args::length)).
pub(crate) fn index_width<B: Backend>(stream: &Stream<B>) -> IndexWidth {
    stream.device().info().features.index_width
}

/// `Err(Unsupported)` when the device cannot compute on `dtype`.
pub(crate) fn check_dtype<B: Backend>(stream: &Stream<B>, dtype: DType, what: &str) -> Result<()> {
    let f = &stream.device().info().features;
    let missing = match dtype {
        DType::F64 if !f.f64 => Some("the device has no 64-bit float support"),
        DType::F16 if !f.f16 => Some("the device has no 16-bit float support"),
        DType::BF16 if !f.bf16 => Some("the device has no bfloat16 support"),
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

/// The `@group(0)` storage declarations of `buffers` (name, element type,
/// writable), in ABI order (binding i for the i-th buffer argument).
fn wgsl_storage(buffers: &[(&str, &str, bool)]) -> String {
    let mut out = String::new();
    for (i, (name, ty, writable)) in buffers.iter().enumerate() {
        let mode = if *writable { "read_write" } else { "read" };
        out.push_str(&format!("@group(0) @binding({i}) var<storage, {mode}> {name}: array<{ty}>;\n"));
    }
    out
}

/// Whether `T` on this device needs `enable f16;` in WGSL.
pub(crate) fn wgsl_enables(dtype: DType) -> &'static str {
    if dtype == DType::F16 { "enable f16;\n" } else { "" }
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

/// The WGSL kernel ABI's `params` uniform and `block_x/y/z` overrides,
/// which every WGSL kernel source carries (after its `enable`s).
pub(crate) const WGSL_ABI: &str = include_str!("abi.wgsl");
/// `kiln_round_f16`: an f32 rounded to its nearest f16 on the bits, for
/// kernels that compute f16 in f32 and round each result once.
pub(crate) const WGSL_ROUND_F16: &str = include_str!("round_f16.wgsl");

/// What a WGSL kernel source starts with: the enables, `T` bound to
/// `dtype`, the storage declarations of `buffers` (see [`wgsl_storage`]),
/// then the ABI's uniform and overrides.
pub(crate) fn wgsl_preamble(dtype: DType, buffers: &[(&str, &str, bool)]) -> String {
    format!("{}alias T = {};\n{}{WGSL_ABI}", wgsl_enables(dtype), wgsl_type(dtype), wgsl_storage(buffers))
}

/// A full WGSL source: [`wgsl_preamble`] with each buffer an `array<T>`,
/// then `body`.
pub(crate) fn wgsl_source(dtype: DType, buffers: &[(&str, Access)], body: &str) -> String {
    let typed: Vec<(&str, &str, bool)> =
        buffers.iter().map(|&(name, access)| (name, "T", matches!(access, Access::ReadWrite))).collect();
    format!("{}\n{body}", wgsl_preamble(dtype, &typed))
}

/// The [`HostFn`](kiln_core::HostFn) of a typed CPU kernel `f`: each
/// parameter takes its launch argument by type (see
/// [`HostArgs::call`](kiln_core::HostArgs::call)).
macro_rules! host_fn {
    ($f:expr) => {
        (|args: &mut kiln_core::HostArgs<'_>| args.call($f)) as kiln_core::HostFn
    };
}
pub(crate) use host_fn;
