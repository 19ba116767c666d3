//! cuBLASLt, the CUDA backend's scaled products of 8-bit floats
//! ([`RawDevice::gemm`] with [`Gemm::scaled`]; kiln-kernels'
//! `matmul_scaled` calls it): `c = scale_a scale_b (a . b)` with `a` and
//! `b` in E4M3 or E5M2 (not both E5M2, which cuBLASLt has no kernel for),
//! `c` in f32, f16 or bf16, f32 accumulation (`CUBLAS_COMPUTE_32F`, with
//! cuBLASLt's default periodic promotion of the tensor cores' partial sums,
//! not its fast accumulation), and one f32 scale per operand in device
//! memory (`CUBLASLT_MATMUL_DESC_{A,B}_SCALE_POINTER`). Offered on sm_89
//! and later where the library loads (it ships with cuBLAS; built with the
//! `cublas` feature).
//!
//! As for cuBLAS (`blas.rs`), kiln's row-major `c = a . b` is the
//! column-major `c^T = b^T . a^T`. Before Blackwell, cuBLASLt's 8-bit
//! products take only its "TN" form, both operands read along k: kiln's `a`
//! stored as it is (`m x k`, k contiguous) and `b` stored transposed
//! (`n x k`, [`MatmulShape::transpose_b`]), as `torch._scaled_mm` requires
//! too. Other layouts are refused with an `Unsupported` that says so, as
//! are k and n that are not multiples of 16, leading dimensions and batch
//! strides that are not multiples of 16 bytes, and operands not 16-byte
//! aligned (cuBLASLt's requirements, which `torch._scaled_mm` checks too).
//!
//! One handle per opened device, created at the first scaled product and
//! destroyed with the device, used under its lock only while enqueuing.
//! Each call takes the algorithm cuBLASLt's heuristic ranks first for a
//! workspace of [`WORKSPACE`] bytes and a workspace of its own, allocated
//! on the call's stream and freed there after the product (stream-ordered,
//! from the pool), so products on different streams share no memory. The
//! call's scales are read where they are if 16-byte aligned (a scale of
//! its own buffer is), else copied (on the stream, device to device) to
//! the workspace's first 16-byte aligned slots, as cuBLASLt reads them only
//! from aligned addresses; the rest of the workspace is cuBLASLt's.
//!
//! [`RawDevice::gemm`]: kiln_core::RawDevice::gemm
//! [`Gemm::scaled`]: kiln_core::Gemm::scaled
//! [`MatmulShape::transpose_b`]: kiln_core::MatmulShape::transpose_b

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use cudarc::cublaslt::result::{self as lt, CublasError};
use cudarc::cublaslt::sys::{self, cublasStatus_t as Status};
use kiln_core::{BackendKind, DType, Error, Gemm, MatrixLayout, RawStream, Result};

use crate::state::DeviceState;
use crate::{Cuda, CudaStream};

/// The scaled products kiln computes with cuBLASLt: (a, b, c) dtypes.
const SCALED: &[(DType, DType, DType)] = &[
    (DType::F8E4M3, DType::F8E4M3, DType::F32),
    (DType::F8E4M3, DType::F8E4M3, DType::F16),
    (DType::F8E4M3, DType::F8E4M3, DType::BF16),
    (DType::F8E4M3, DType::F8E5M2, DType::F32),
    (DType::F8E4M3, DType::F8E5M2, DType::F16),
    (DType::F8E4M3, DType::F8E5M2, DType::BF16),
    (DType::F8E5M2, DType::F8E4M3, DType::F32),
    (DType::F8E5M2, DType::F8E4M3, DType::F16),
    (DType::F8E5M2, DType::F8E4M3, DType::BF16),
];

/// cuBLAS's `cublasOperation_t` values, as the `int32_t` attributes
/// `CUBLASLT_MATMUL_DESC_TRANS{A,B}` take them (cudarc's cuBLASLt bindings
/// do not carry the enum).
const CUBLAS_OP_N: i32 = 0;
const CUBLAS_OP_T: i32 = 1;

/// The workspace each product may use: cuBLAS's recommendation for Hopper.
const WORKSPACE: usize = 32 << 20;
/// Bytes at the workspace's start that hold the scales' aligned copies (a
/// at 0, b at 16); cuBLASLt's part starts after them.
const SCALES: usize = 256;

/// The name kernels faulting inside cuBLASLt are reported under.
const KERNEL_NAME: &str = "cuBLASLt scaled GEMM";

/// Whether libcublasLt can be loaded.
fn present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to load the library under its usual names; no symbol is called.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

/// A live cuBLASLt handle, the id its kernels are reported under, and the
/// algorithms its heuristic chose, by call (asked once per shape, layout,
/// types and alignment: the query costs more than a small product).
struct Handle {
    raw: sys::cublasLtHandle_t,
    kernel: u32,
    algos: HashMap<AlgoKey, sys::cublasLtMatmulAlgo_t>,
}

/// The most algorithms a handle keeps; past it the cache starts again.
const ALGOS: usize = 256;

/// What the heuristic's choice depends on: the matrices, the batch of one
/// call, the types (a, b, c) and the operands' alignments in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct AlgoKey {
    layouts: Layouts,
    count: usize,
    types: (DType, DType, DType),
    align: [u32; 3],
}

/// Whether a scale's address is 16-byte aligned, as cuBLASLt reads scales;
/// the others are copied to the workspace's slots.
fn is_aligned(scale: &kiln_core::GemmOperand<'_, Cuda>) -> bool {
    (scale.buffer.device_ptr() + scale.offset as u64).is_multiple_of(16)
}

/// The largest power of two, up to 256, that divides `address`: the
/// alignment cuBLASLt is told of (its heuristic assumes 256 otherwise).
fn alignment(address: u64) -> u32 {
    if address == 0 {
        256
    } else {
        1u32 << address.trailing_zeros().min(8)
    }
}

// SAFETY: a cuBLASLt handle may be used from any thread with its context
// current; kiln uses it under `BlasLt::handle`'s lock only.
unsafe impl Send for Handle {}

/// cuBLASLt for one opened device.
pub(crate) struct BlasLt {
    /// Keeps the context alive until the handle is destroyed.
    state: Arc<DeviceState>,
    /// The device's compute capability, major * 10 + minor.
    cc: u32,
    handle: Mutex<Option<Handle>>,
}

impl BlasLt {
    pub(crate) fn new(state: Arc<DeviceState>, cc: u32) -> Self {
        BlasLt { state, cc, handle: Mutex::new(None) }
    }

    /// The scaled products offered: all of [`SCALED`] on sm_89 and later
    /// where libcublasLt loads, none elsewhere.
    pub(crate) fn offered(&self) -> &'static [(DType, DType, DType)] {
        if self.cc >= 89 && present() {
            SCALED
        } else {
            &[]
        }
    }

    fn lock(&self) -> MutexGuard<'_, Option<Handle>> {
        self.handle.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The kiln error for cuBLASLt call `call` failing with `e`, as
    /// `blas.rs` maps cuBLAS's.
    fn failed(&self, call: &str, e: CublasError) -> Error {
        match e.0 {
            Status::CUBLAS_STATUS_ALLOC_FAILED => {
                self.state.out_of_memory(&format!("cuBLASLt's own memory for {call} (size not known)"), 0)
            }
            Status::CUBLAS_STATUS_ARCH_MISMATCH | Status::CUBLAS_STATUS_NOT_SUPPORTED => Error::unsupported(
                BackendKind::Cuda,
                format!("{call} on {}", self.state.name),
                format!("cuBLASLt answered {:?}", e.0),
            ),
            status => Error::driver(BackendKind::Cuda, call, format!("{status:?}")),
        }
    }

    /// Enqueue the scaled product `call` on `stream`.
    ///
    /// # Safety
    /// As [`RawDevice::gemm`](kiln_core::RawDevice::gemm).
    pub(crate) unsafe fn gemm(&self, stream: &CudaStream, call: &Gemm<'_, Cuda>) -> Result<()> {
        let Some(scales) = call.scaled else {
            return Err(Error::invalid(call.to_string(), "not a scaled product"));
        };
        let refused = |reason: String| Error::unsupported(BackendKind::Cuda, call.to_string(), reason);
        if !self.offered().contains(&(call.input, scales.input_b, call.output)) {
            return Err(refused(if !present() {
                "libcublasLt is not installed".into()
            } else if self.cc < 89 {
                format!("cuBLASLt's 8-bit products need sm_89 or later; {} is sm_{}", self.state.name, self.cc)
            } else {
                "cuBLASLt multiplies E4M3 by E4M3 or E5M2 (not E5M2 by E5M2) into f32, f16 or bf16".into()
            }));
        }
        if !Arc::ptr_eq(&stream.state, &self.state) {
            return Err(Error::DeviceMismatch {
                what: call.to_string(),
                first: self.state.name.clone(),
                second: format!("the stream's device, {}", stream.state.name),
            });
        }
        call.check()?;
        let layouts = Layouts::of(call).map_err(refused)?;
        self.state.check_usable()?;
        self.state.bind(KERNEL_NAME)?;
        let mut guard = self.lock();
        if guard.is_none() {
            let raw = lt::create_handle().map_err(|e| self.failed("cublasLtCreate", e))?;
            let kernel = self.state.register_kernel(KERNEL_NAME);
            *guard = Some(Handle { raw, kernel, algos: HashMap::new() });
        }
        let Some(handle) = guard.as_mut() else {
            return Err(Error::invalid(KERNEL_NAME, "the handle was just made"));
        };
        let kernel = handle.kernel;
        // Freed when dropped, on `stream`, after the product.
        let workspace = stream.alloc(SCALES + WORKSPACE)?;
        let buffers = [call.a.buffer, call.b.buffer, call.c.buffer, scales.scale_a.buffer, scales.scale_b.buffer];
        let done = crate::memory::library_work(stream, kernel, &buffers, || {
            for (i, scale) in [scales.scale_a, scales.scale_b].iter().enumerate() {
                if !is_aligned(scale) {
                    // SAFETY: both buffers are this device's (the scales' by
                    // the caller's contract); the scale is 4 bytes inside its
                    // buffer (`check`) and slot i of the fresh workspace is too.
                    unsafe { stream.copy(scale.buffer, scale.offset, &workspace, 16 * i, 4) }?;
                }
            }
            // SAFETY: the handle is this device's, whose context is current;
            // the operands are this device's buffers, each inside its buffer
            // and `c` apart from the others (`check`), laid out as `layouts`
            // describes, the scales copied into the workspace's slots, and
            // nothing else touches them until the product has run (the
            // caller's contract; the workspace is this call's alone).
            unsafe { enqueue(handle, stream, call, &layouts, &workspace) }.map_err(|(name, e)| {
                if name == HEURISTIC && e.0 == Status::CUBLAS_STATUS_NOT_SUPPORTED {
                    Error::unsupported(
                        BackendKind::Cuda,
                        call.to_string(),
                        format!("cuBLASLt has no algorithm for this product on {}", self.state.name),
                    )
                } else {
                    self.failed(name, e)
                }
            })
        });
        drop(guard);
        done
    }
}

impl Drop for BlasLt {
    fn drop(&mut self) {
        let Some(handle) = self.handle.get_mut().unwrap_or_else(|p| p.into_inner()).take() else {
            return;
        };
        if self.state.is_lost() || self.state.bind("cublasLtDestroy").is_err() {
            return;
        }
        // SAFETY: created by `create_handle` on this context, which `state`
        // keeps alive and is current, and destroyed once (taken out above).
        // The handle owns no workspace a product in flight could still use.
        let _ = unsafe { lt::destroy_handle(handle.raw) };
    }
}

/// One matrix as cuBLASLt sees it (column-major): rows, columns, leading
/// dimension and batch stride, in elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Side {
    rows: u64,
    cols: u64,
    ld: i64,
    stride: i64,
}

/// The three matrices of a call, in cuBLASLt's order: its A is kiln's `b`
/// (read transposed), its B kiln's `a`, its C and D kiln's `c`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Layouts {
    a: Side,
    b: Side,
    d: Side,
}

impl Layouts {
    /// The layouts of `call`, or why cuBLASLt's 8-bit products cannot take it.
    fn of(call: &Gemm<'_, Cuda>) -> std::result::Result<Layouts, String> {
        let s = &call.shape;
        if s.a.transposed || !s.b.transposed {
            return Err("cuBLASLt's 8-bit products read both operands along k: a stored m x k as it is, \
                        and b stored transposed (n x k, MatmulShape::transpose_b)"
                .into());
        }
        if !s.k.is_multiple_of(16) || !s.n.is_multiple_of(16) {
            return Err(format!(
                "cuBLASLt's 8-bit products need k and n multiples of 16; they are {} and {}",
                s.k, s.n
            ));
        }
        let out = call.output.size();
        // kiln's stored `n x k` b is cuBLASLt's column-major k x n, read transposed.
        let batched = s.batch > 1;
        let a = side(&s.b, s.n, s.k, 1, batched, "b")?;
        let b = side(&s.a, s.m, s.k, 1, batched, "a")?;
        let d = side(&s.c, s.m, s.n, out, batched, "c")?;
        let offsets = [("a", call.a.offset), ("b", call.b.offset), ("c", call.c.offset)];
        let buffers = [call.a.buffer, call.b.buffer, call.c.buffer];
        for ((name, offset), buffer) in offsets.into_iter().zip(buffers) {
            if !(buffer.device_ptr() + offset as u64).is_multiple_of(16) {
                return Err(format!("cuBLASLt's 8-bit products need 16-byte aligned operands; {name} is not"));
            }
        }
        Ok(Layouts { a, b, d })
    }
}

/// The cuBLASLt side of a kiln operand stored as `rows x cols` row-major
/// (kiln's stored form): cuBLASLt's `cols x rows` column-major matrix. A
/// matrix of one row takes any leading dimension in kiln; cuBLASLt is given
/// its width rounded up to 16 bytes. The batch stride counts only where
/// the call is `batched`.
fn side(
    layout: &MatrixLayout,
    rows: usize,
    cols: usize,
    size: usize,
    batched: bool,
    name: &str,
) -> std::result::Result<Side, String> {
    let ld = if rows > 1 { layout.ld } else { cols.next_multiple_of(16usize.div_ceil(size)) };
    let stride = if batched { layout.stride } else { 0 };
    if !(ld * size).is_multiple_of(16) {
        return Err(format!(
            "cuBLASLt's 8-bit products need leading dimensions of a multiple of 16 bytes; {name}'s is {ld} elements"
        ));
    }
    if !(stride * size).is_multiple_of(16) {
        return Err(format!(
            "cuBLASLt's 8-bit products need batch strides of a multiple of 16 bytes; {name}'s is {stride} elements"
        ));
    }
    let big = |v: usize| i64::try_from(v).map_err(|_| format!("{name}: {v} is over 2^63"));
    Ok(Side { rows: cols as u64, cols: rows as u64, ld: big(ld)?, stride: big(stride)? })
}

/// The cuBLASLt type of an element type kiln multiplies with it.
fn data(dtype: DType) -> sys::cudaDataType {
    use sys::cudaDataType as D;
    match dtype {
        DType::F8E4M3 => D::CUDA_R_8F_E4M3,
        DType::F8E5M2 => D::CUDA_R_8F_E5M2,
        DType::F16 => D::CUDA_R_16F,
        DType::BF16 => D::CUDA_R_16BF,
        _ => D::CUDA_R_32F,
    }
}

/// The name of cuBLASLt's heuristic query, whose "none found" is an `Unsupported`.
const HEURISTIC: &str = "cublasLtMatmulAlgoGetHeuristic";

/// Descriptors made for one call and destroyed with it.
struct Descriptors {
    matmul: Option<sys::cublasLtMatmulDesc_t>,
    preference: Option<sys::cublasLtMatmulPreference_t>,
    layouts: Vec<sys::cublasLtMatrixLayout_t>,
}

impl Drop for Descriptors {
    fn drop(&mut self) {
        // SAFETY: each was created once by this call and is destroyed once;
        // cuBLASLt copies what it needs from them when a product is enqueued.
        unsafe {
            if let Some(m) = self.matmul.take() {
                let _ = lt::destroy_matmul_desc(m);
            }
            if let Some(p) = self.preference.take() {
                let _ = lt::destroy_matmul_pref(p);
            }
            for l in self.layouts.drain(..) {
                let _ = lt::destroy_matrix_layout(l);
            }
        }
    }
}

/// The heuristic's preferences for a call whose A, B and D (and C, which is
/// D) are aligned to `align` bytes: the workspace's size and the
/// alignments, made once a call.
fn preference_for(
    made: &mut Descriptors,
    align: [u32; 3],
) -> std::result::Result<sys::cublasLtMatmulPreference_t, (&'static str, CublasError)> {
    use sys::cublasLtMatmulPreferenceAttributes_t as P;
    if let Some(p) = made.preference {
        return Ok(p);
    }
    let preference = lt::create_matmul_pref().map_err(|e| ("cublasLtMatmulPreferenceCreate", e))?;
    made.preference = Some(preference);
    let set = |attr, value: *const c_void, size| {
        // SAFETY: `preference` is live; `value` points to `size` bytes of the attribute's type.
        unsafe { lt::set_matmul_pref_attribute(preference, attr, value, size) }
            .map_err(|e| ("cublasLtMatmulPreferenceSetAttribute", e))
    };
    let workspace = WORKSPACE as u64;
    set(P::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace as *const u64 as *const c_void, size_of::<u64>())?;
    let [a, b, d] = align;
    for (attr, value) in [
        (P::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, a),
        (P::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, b),
        (P::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, d),
        (P::CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, d),
    ] {
        set(attr, &value as *const u32 as *const c_void, size_of::<u32>())?;
    }
    Ok(preference)
}

/// Set attribute `attr` of a layout to `value`.
///
/// # Safety
/// `layout` is live.
unsafe fn set_layout<T>(
    layout: sys::cublasLtMatrixLayout_t,
    attr: sys::cublasLtMatrixLayoutAttribute_t,
    value: &T,
) -> std::result::Result<(), (&'static str, CublasError)> {
    // SAFETY: `value` is the attribute's type, read for its size.
    unsafe { lt::set_matrix_layout_attribute(layout, attr, value as *const T as *const c_void, size_of::<T>()) }
        .map_err(|e| ("cublasLtMatrixLayoutSetAttribute", e))
}

/// Set attribute `attr` of a matmul descriptor to `value`.
///
/// # Safety
/// `desc` is live.
unsafe fn set_desc<T>(
    desc: sys::cublasLtMatmulDesc_t,
    attr: sys::cublasLtMatmulDescAttributes_t,
    value: &T,
) -> std::result::Result<(), (&'static str, CublasError)> {
    // SAFETY: `value` is the attribute's type, read for its size.
    unsafe { lt::set_matmul_desc_attribute(desc, attr, value as *const T as *const c_void, size_of::<T>()) }
        .map_err(|e| ("cublasLtMatmulDescSetAttribute", e))
}

/// Enqueue the products of `call` on `stream`, in batches of at most
/// `i32::MAX`; the failing call's name with the error.
///
/// # Safety
/// - `handle` is live and its context current; `stream` is the context's;
///   its algorithms were chosen for calls of their keys.
/// - `call` has passed `Gemm::check` and [`Layouts::of`] (which gave
///   `layouts`), its dtypes are one of [`SCALED`], and its buffers belong to
///   the context and are not touched by other work until the product has run.
/// - `workspace` is a buffer of [`SCALES`] + [`WORKSPACE`] bytes of the
///   context, holding at bytes 0 and 16 the scales of a and b that are not
///   16-byte aligned, that no other work uses until the product has run.
unsafe fn enqueue(
    handle: &mut Handle,
    stream: &CudaStream,
    call: &Gemm<'_, Cuda>,
    layouts: &Layouts,
    workspace: &crate::CudaBuffer,
) -> std::result::Result<(), (&'static str, CublasError)> {
    use sys::cublasLtMatmulDescAttributes_t as M;
    use sys::cublasLtMatrixLayoutAttribute_t as L;
    let Some(scales) = call.scaled else { return Ok(()) };
    let shape = &call.shape;
    let mut made = Descriptors { matmul: None, preference: None, layouts: Vec::new() };
    let desc = lt::create_matmul_desc(sys::cublasComputeType_t::CUBLAS_COMPUTE_32F, sys::cudaDataType::CUDA_R_32F)
        .map_err(|e| ("cublasLtMatmulDescCreate", e))?;
    made.matmul = Some(desc);
    let ptr = |op: &kiln_core::GemmOperand<'_, Cuda>| op.buffer.device_ptr() + op.offset as u64;
    // A scale where it is, if aligned, else its copy in the workspace's slot.
    let scale = |op: &kiln_core::GemmOperand<'_, Cuda>, slot: u64| {
        if is_aligned(op) {
            ptr(op)
        } else {
            workspace.device_ptr() + slot
        }
    };
    // cuBLASLt's A is kiln's b, its B kiln's a: their scales swap likewise.
    let (scale_a, scale_b) = (scale(&scales.scale_b, 16), scale(&scales.scale_a, 0));
    // SAFETY: `desc` is live; each value has its attribute's type.
    unsafe {
        set_desc(desc, M::CUBLASLT_MATMUL_DESC_TRANSA, &CUBLAS_OP_T)?;
        set_desc(desc, M::CUBLASLT_MATMUL_DESC_TRANSB, &CUBLAS_OP_N)?;
        set_desc(desc, M::CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scale_a)?;
        set_desc(desc, M::CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scale_b)?;
    }
    let mut first = 0usize;
    while first < shape.batch {
        let count = (shape.batch - first).min(i32::MAX as usize);
        let mut described = [(layouts.a, scales.input_b), (layouts.b, call.input), (layouts.d, call.output)]
            .into_iter()
            .map(|(side, dtype)| {
                let layout = lt::create_matrix_layout(data(dtype), side.rows, side.cols, side.ld)
                    .map_err(|e| ("cublasLtMatrixLayoutCreate", e))?;
                made.layouts.push(layout);
                // SAFETY: `layout` is live; the values are the attributes' types.
                unsafe {
                    set_layout(layout, L::CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &(count as i32))?;
                    set_layout(layout, L::CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &side.stride)?;
                }
                Ok(layout)
            });
        let (la, lb, ld) = (described.next().unwrap()?, described.next().unwrap()?, described.next().unwrap()?);
        drop(described);
        let at = |op: &kiln_core::GemmOperand<'_, Cuda>, stride: i64, size: usize| {
            ptr(op) + first as u64 * stride as u64 * size as u64
        };
        let a = at(&call.b, layouts.a.stride, 1);
        let b = at(&call.a, layouts.b.stride, 1);
        let d = at(&call.c, layouts.d.stride, call.output.size());
        let (alpha, beta) = (1.0f32, 0.0f32);
        let key = AlgoKey {
            layouts: *layouts,
            count,
            types: (call.input, scales.input_b, call.output),
            align: [alignment(a), alignment(b), alignment(d)],
        };
        let algo = match handle.algos.get(&key) {
            Some(algo) => *algo,
            None => {
                let preference = preference_for(&mut made, key.align)?;
                // SAFETY: the descriptors are live and describe the call.
                let best = unsafe { lt::get_matmul_algo_heuristic(handle.raw, desc, la, lb, ld, ld, preference) }
                    .map_err(|e| (HEURISTIC, e))?;
                if handle.algos.len() >= ALGOS {
                    handle.algos.clear();
                }
                handle.algos.insert(key, best.algo);
                best.algo
            }
        };
        // SAFETY: the pointers address `count` matrices of the layouts
        // described, inside their buffers (the caller's contract); C is D
        // with beta zero, so it is not read; alpha and beta are host f32s
        // (the scale type); the algorithm is the heuristic's for these
        // descriptors, alignments and a workspace of WORKSPACE bytes, which
        // `workspace` is and no other work uses (the caller's contract).
        unsafe {
            lt::matmul(
                handle.raw,
                desc,
                &alpha as *const f32 as *const c_void,
                &beta as *const f32 as *const c_void,
                a as *const c_void,
                la,
                b as *const c_void,
                lb,
                d as *const c_void,
                ld,
                d as *mut c_void,
                ld,
                &algo,
                (workspace.device_ptr() + SCALES as u64) as *mut c_void,
                WORKSPACE,
                stream.stream.cu_stream() as sys::cudaStream_t,
            )
        }
        .map_err(|e| ("cublasLtMatmul", e))?;
        first += count;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sides_are_the_transposed_view_of_kiln_row_major_operands() {
        let dense = MatrixLayout { transposed: true, ld: 64, stride: 64 * 32 };
        // b stored n x k = 32 x 64: cuBLASLt's column-major 64 x 32, ld 64.
        assert_eq!(side(&dense, 32, 64, 1, true, "b"), Ok(Side { rows: 64, cols: 32, ld: 64, stride: 2048 }));
        // A single product's stride is not used.
        assert_eq!(side(&dense, 32, 64, 1, false, "b").map(|s| s.stride), Ok(0));
        // One row: any ld in kiln, the width rounded up to 16 bytes here.
        let one = MatrixLayout { transposed: false, ld: 3, stride: 0 };
        assert_eq!(side(&one, 1, 40, 1, true, "a").map(|s| s.ld), Ok(48));
        assert_eq!(side(&one, 1, 5, 4, true, "c").map(|s| s.ld), Ok(8));
        // Leading dimensions and strides of a multiple of 16 bytes only.
        let odd = MatrixLayout { transposed: false, ld: 40, stride: 0 };
        assert!(side(&odd, 8, 40, 1, true, "a").unwrap_err().contains("leading dimensions"));
        let strided = MatrixLayout { transposed: false, ld: 48, stride: 48 * 8 + 8 };
        assert!(side(&strided, 8, 40, 1, true, "a").unwrap_err().contains("batch strides"));
        assert!(side(&strided, 8, 40, 1, false, "a").is_ok());
        assert_eq!(side(&MatrixLayout { ld: 8, ..odd }, 8, 8, 2, true, "c").map(|s| s.ld), Ok(8));
    }

    #[test]
    fn alignments_are_powers_of_two_up_to_256() {
        assert_eq!(alignment(0x7f00_0000_0100), 256);
        assert_eq!(alignment(0x7f00_0000_0010), 16);
        assert_eq!(alignment(0x7f00_0000_0030), 16);
        assert_eq!(alignment(0x7f00_0000_0008), 8);
        assert_eq!(alignment(0), 256);
    }

    #[test]
    fn data_types_are_cublas_lt_s() {
        assert_eq!(data(DType::F8E4M3), sys::cudaDataType::CUDA_R_8F_E4M3);
        assert_eq!(data(DType::F8E5M2), sys::cudaDataType::CUDA_R_8F_E5M2);
        assert_eq!(data(DType::BF16), sys::cudaDataType::CUDA_R_16BF);
        assert_eq!(data(DType::F32), sys::cudaDataType::CUDA_R_32F);
        for (a, b, _) in SCALED {
            assert!(a.is_fp8() && b.is_fp8() && !(*a == DType::F8E5M2 && *b == DType::F8E5M2));
        }
    }
}
