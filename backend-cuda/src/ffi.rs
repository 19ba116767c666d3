//! Every call into cudarc's lower layers (`sys`, `result`), in one place.
//!
//! The rest of the crate uses cudarc's safe layer (context, streams, events,
//! modules) and the functions here. Each `unsafe` block states why it is sound;
//! the callers' obligations are the `# Safety` bullets of the `unsafe fn`s.
//! Nothing here maps errors to kiln's: the raw `DriverError` (or NVRTC's log)
//! goes back to the caller, which knows the operation and the object.

use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::mem::MaybeUninit;
use std::sync::OnceLock;

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::{sys, CudaFunction, CudaStream};
use cudarc::nvrtc::sys as nv;

/// A device address.
pub(crate) type DevicePtr = sys::CUdeviceptr;

/// Whether libcuda can be loaded. cudarc panics on first use of a missing
/// library, so this is asked before anything else touches the driver.
pub(crate) fn driver_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: only tries to load the library under its usual names; no symbol is called.
    *PRESENT.get_or_init(|| unsafe { sys::is_culib_present() })
}

/// Whether libnvrtc can be loaded (asked before any NVRTC call, for the same reason).
pub(crate) fn nvrtc_present() -> bool {
    static PRESENT: OnceLock<bool> = OnceLock::new();
    // SAFETY: as in `driver_present`.
    *PRESENT.get_or_init(|| unsafe { nv::is_culib_present() })
}

// ---------------------------------------------------------------- devices

/// `cuInit(0)`; the driver must be present.
pub(crate) fn init() -> Result<(), DriverError> {
    result::init()
}

/// `cuDeviceGetCount`.
pub(crate) fn device_count() -> Result<usize, DriverError> {
    result::device::get_count().map(|n| n.max(0) as usize)
}

/// `cuDeviceGet`.
pub(crate) fn device(ordinal: usize) -> Result<sys::CUdevice, DriverError> {
    result::device::get(ordinal as c_int)
}

/// `cuDeviceGetName`, without trusting the driver to terminate the string.
pub(crate) fn device_name(dev: sys::CUdevice) -> Result<String, DriverError> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is writable for the length passed; `dev` came from `cuDeviceGet`.
    unsafe { sys::cuDeviceGetName(buf.as_mut_ptr().cast(), buf.len() as c_int - 1, dev).result()? };
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Ok(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// `cuDeviceTotalMem`.
pub(crate) fn device_total_mem(dev: sys::CUdevice) -> Result<usize, DriverError> {
    // SAFETY: `dev` came from `cuDeviceGet`; the call only writes its out-parameter.
    unsafe { result::device::total_mem(dev) }
}

/// `cuDeviceGetAttribute`.
pub(crate) fn device_attribute(dev: sys::CUdevice, attr: sys::CUdevice_attribute) -> Result<i32, DriverError> {
    // SAFETY: `dev` came from `cuDeviceGet`; the call only writes its out-parameter.
    unsafe { result::device::get_attribute(dev, attr) }
}

/// `cuDriverGetVersion`, e.g. 13000 for CUDA 13.0.
pub(crate) fn driver_version() -> Result<i32, DriverError> {
    let mut v: c_int = 0;
    // SAFETY: writes one int to a valid location.
    unsafe { sys::cuDriverGetVersion(&mut v).result()? };
    Ok(v)
}

/// `cuCtxGetStreamPriorityRange` as (least, greatest); lower numbers are higher priorities.
/// The context must be current on this thread.
pub(crate) fn stream_priority_range() -> Result<(i32, i32), DriverError> {
    result::stream::get_priority_range()
}

/// Let the device's default pool keep up to `bytes` reserved at each
/// synchronization (`CU_MEMPOOL_ATTR_RELEASE_THRESHOLD`; `u64::MAX`: keep
/// memory freed with `cuMemFreeAsync` instead of returning it to the driver,
/// so that stream-ordered allocation is a pool hit in steady state).
pub(crate) fn set_release_threshold(dev: sys::CUdevice, bytes: u64) -> Result<(), DriverError> {
    let mut threshold: u64 = bytes;
    // SAFETY: `dev` came from `cuDeviceGet`; the attribute takes a pointer to a
    // u64, which lives across the call.
    unsafe {
        let pool = result::device::get_default_mem_pool(dev)?;
        sys::cuMemPoolSetAttribute(
            pool,
            sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
            (&mut threshold as *mut u64).cast(),
        )
        .result()
    }
}

/// The most bytes of the default pool in use at once since its high
/// watermark was last reset (`CU_MEMPOOL_ATTR_USED_MEM_HIGH`).
pub(crate) fn pool_peak(dev: sys::CUdevice) -> Result<u64, DriverError> {
    let mut high = 0u64;
    // SAFETY: `dev` came from `cuDeviceGet`; the attribute writes a u64
    // through the pointer, which lives across the call.
    unsafe {
        let pool = result::device::get_default_mem_pool(dev)?;
        let attr = sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH;
        sys::cuMemPoolGetAttribute(pool, attr, (&mut high as *mut u64).cast()).result()?;
    }
    Ok(high)
}

/// Reset the default pool's high watermark of bytes in use (it can only be
/// set to zero; the driver raises it again from the next allocation).
pub(crate) fn reset_pool_peak(dev: sys::CUdevice) -> Result<(), DriverError> {
    let mut zero = 0u64;
    // SAFETY: `dev` came from `cuDeviceGet`; the attribute takes a pointer to
    // a u64 holding 0, which lives across the call.
    unsafe {
        let pool = result::device::get_default_mem_pool(dev)?;
        let attr = sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_HIGH;
        sys::cuMemPoolSetAttribute(pool, attr, (&mut zero as *mut u64).cast()).result()
    }
}

/// The default pool's used and reserved bytes now
/// (`CU_MEMPOOL_ATTR_USED_MEM_CURRENT`, `CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT`).
pub(crate) fn pool_usage(dev: sys::CUdevice) -> Result<(u64, u64), DriverError> {
    let (mut used, mut reserved) = (0u64, 0u64);
    // SAFETY: `dev` came from `cuDeviceGet`; both attributes write a u64
    // through the pointer, which lives across the call.
    unsafe {
        let pool = result::device::get_default_mem_pool(dev)?;
        let attr = sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_USED_MEM_CURRENT;
        sys::cuMemPoolGetAttribute(pool, attr, (&mut used as *mut u64).cast()).result()?;
        let attr = sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT;
        sys::cuMemPoolGetAttribute(pool, attr, (&mut reserved as *mut u64).cast()).result()?;
    }
    Ok((used, reserved))
}

/// Return unused memory of the device's default pool to the driver
/// (`cuMemPoolTrimTo`): the driver releases whole chunks of its
/// reservation while it keeps at least `keep` bytes reserved, live
/// allocations included, so the pool may keep up to a chunk past `keep`;
/// memory still pending a stream-ordered free is kept.
pub(crate) fn trim_pool(dev: sys::CUdevice, keep: u64) -> Result<(), DriverError> {
    // SAFETY: `dev` came from the context; trimming releases only unused pool memory.
    unsafe {
        let pool = result::device::get_default_mem_pool(dev)?;
        sys::cuMemPoolTrimTo(pool, keep as usize).result()
    }
}

// ---------------------------------------------------------------- memory

/// Allocate `bytes` (> 0) of device memory, stream-ordered (`cuMemAllocAsync`)
/// when `pooled`, else `cuMemAlloc`. The stream's context must be current.
pub(crate) fn alloc_device(stream: &CudaStream, bytes: usize, pooled: bool) -> Result<DevicePtr, DriverError> {
    // SAFETY: the stream is alive (borrowed); the calls only write the out-pointer.
    unsafe {
        if pooled {
            result::malloc_async(stream.cu_stream(), bytes)
        } else {
            result::malloc_sync(bytes)
        }
    }
}

/// Free device memory allocated by [`alloc_device`] with the same `pooled`.
///
/// # Safety
/// - `ptr` came from [`alloc_device`] and is freed once.
/// - When not `pooled`, no work that uses `ptr` is still pending (the caller synchronizes first).
pub(crate) unsafe fn free_device(ptr: DevicePtr, stream: &CudaStream, pooled: bool) -> Result<(), DriverError> {
    // SAFETY: by the caller's contract.
    unsafe {
        if pooled {
            result::free_async(ptr, stream.cu_stream())
        } else {
            result::free_sync(ptr)
        }
    }
}

/// Allocate `bytes` (> 0) of page-locked host memory, zeroed. Not
/// write-combined: kiln reads these buffers back on the host, and reads from
/// write-combined memory are uncached and slow. The context must be current.
pub(crate) fn alloc_pinned(bytes: usize) -> Result<*mut u8, DriverError> {
    // SAFETY: flags 0 = plain page-locked memory; on success the pointer is valid
    // for `bytes` bytes, which are zeroed before anyone reads them.
    unsafe {
        let ptr = result::malloc_host(bytes, 0)?.cast::<u8>();
        std::ptr::write_bytes(ptr, 0, bytes);
        Ok(ptr)
    }
}

/// Free page-locked memory.
///
/// # Safety
/// - `ptr` came from [`alloc_pinned`], is freed once, and no copy using it is pending.
pub(crate) unsafe fn free_pinned(ptr: *mut u8) -> Result<(), DriverError> {
    // SAFETY: by the caller's contract.
    unsafe { result::free_host(ptr.cast()) }
}

/// Enqueue a host-to-device copy. From pageable memory the driver stages the
/// source before returning, so `src` may be reused at once; from page-locked
/// memory the copy is truly asynchronous.
///
/// # Safety
/// - `dst..dst + bytes` lies in one live device allocation of the stream's context.
/// - `src..src + bytes` is readable; if page-locked, it stays alive and unwritten until the copy completes.
pub(crate) unsafe fn copy_htod(
    dst: DevicePtr,
    src: *const u8,
    bytes: usize,
    stream: &CudaStream,
) -> Result<(), DriverError> {
    // SAFETY: by the caller's contract.
    unsafe { sys::cuMemcpyHtoDAsync_v2(dst, src.cast(), bytes, stream.cu_stream()).result() }
}

/// Enqueue a device-to-host copy (complete on return when `dst` is pageable).
///
/// # Safety
/// - `src..src + bytes` lies in one live device allocation of the stream's context.
/// - `dst..dst + bytes` is writable and nothing else touches it until the copy completes.
pub(crate) unsafe fn copy_dtoh(
    dst: *mut u8,
    src: DevicePtr,
    bytes: usize,
    stream: &CudaStream,
) -> Result<(), DriverError> {
    // SAFETY: by the caller's contract.
    unsafe { sys::cuMemcpyDtoHAsync_v2(dst.cast(), src, bytes, stream.cu_stream()).result() }
}

/// Enqueue a device-to-device copy.
///
/// # Safety
/// - Both ranges lie in live device allocations of the stream's context and do not overlap.
pub(crate) unsafe fn copy_dtod(
    dst: DevicePtr,
    src: DevicePtr,
    bytes: usize,
    stream: &CudaStream,
) -> Result<(), DriverError> {
    // SAFETY: by the caller's contract.
    unsafe { sys::cuMemcpyDtoDAsync_v2(dst, src, bytes, stream.cu_stream()).result() }
}

/// `cuDeviceCanAccessPeer`: whether `dev` can address `peer`'s memory directly.
pub(crate) fn can_access_peer(dev: sys::CUdevice, peer: sys::CUdevice) -> Result<bool, DriverError> {
    let mut can = 0;
    // SAFETY: both devices came from `cuDeviceGet`; the driver writes one int.
    unsafe { sys::cuDeviceCanAccessPeer(&mut can, dev, peer).result()? };
    Ok(can != 0)
}

/// Let device `dev` read and write the memory of `peer`: both its
/// stream-ordered pool (`cuMemPoolSetAccess` on `peer`'s default pool) and
/// its `cuMemAlloc` memory (`cuCtxEnablePeerAccess`, from the current
/// context, which must be `dev`'s; enabled already is fine).
pub(crate) fn grant_peer(dev: sys::CUdevice, peer: sys::CUdevice, peer_ctx: sys::CUcontext) -> Result<(), DriverError> {
    let desc = sys::CUmemAccessDesc {
        location: sys::CUmemLocation { type_: sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE, id: dev },
        flags: sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
    };
    // SAFETY: `peer` came from `cuDeviceGet`; the descriptor lives across the
    // call and names a device of this process.
    unsafe {
        let pool = result::device::get_default_mem_pool(peer)?;
        sys::cuMemPoolSetAccess(pool, &desc, 1).result()?;
        match sys::cuCtxEnablePeerAccess(peer_ctx, 0).result() {
            Err(e) if e.0 == sys::cudaError_enum::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED => Ok(()),
            other => other,
        }
    }
}

/// Enqueue a copy between allocations of two devices' contexts (or one).
///
/// # Safety
/// - `dst` lies in a live allocation of `dst_ctx`, `src` of `src_ctx`, both `bytes` long.
pub(crate) unsafe fn copy_peer(
    dst: DevicePtr,
    dst_ctx: &cudarc::driver::CudaContext,
    src: DevicePtr,
    src_ctx: &cudarc::driver::CudaContext,
    bytes: usize,
    stream: &CudaStream,
) -> Result<(), DriverError> {
    // SAFETY: by the caller's contract; both contexts are alive (borrowed).
    unsafe { sys::cuMemcpyPeerAsync(dst, dst_ctx.cu_ctx(), src, src_ctx.cu_ctx(), bytes, stream.cu_stream()).result() }
}

/// A grid-stride kernel storing the 8-byte `value` at `dst[0..n)`, in PTX
/// the driver compiles for whichever GPU loads it. The driver has no 8-byte
/// memset, and two strided 32-bit ones (`cuMemsetD2D32Async` of one-word
/// rows) ran at 6 GB/s on an H200.
pub(crate) const FILL64_PTX: &str = r#"
.version 7.0
.target sm_52
.address_size 64
.visible .entry kiln_fill64(.param .u64 dst, .param .u64 value, .param .u64 n)
{
    .reg .pred %p;
    .reg .b32 %r<5>;
    .reg .b64 %d<8>;
    ld.param.u64 %d1, [dst];
    ld.param.u64 %d2, [value];
    ld.param.u64 %d3, [n];
    cvta.to.global.u64 %d1, %d1;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %ntid.x;
    mov.u32 %r3, %ctaid.x;
    mov.u32 %r4, %nctaid.x;
    mul.wide.u32 %d4, %r3, %r2;
    cvt.u64.u32 %d5, %r1;
    add.u64 %d4, %d4, %d5;
    mul.wide.u32 %d6, %r4, %r2;
LOOP:
    setp.ge.u64 %p, %d4, %d3;
    @%p bra DONE;
    shl.b64 %d7, %d4, 3;
    add.u64 %d7, %d1, %d7;
    st.global.u64 [%d7], %d2;
    add.u64 %d4, %d4, %d6;
    bra LOOP;
DONE:
    ret;
}
"#;

/// Enqueue [`FILL64_PTX`]'s kernel over `n` 8-byte elements at `dst`.
///
/// # Safety
/// - `func` is that kernel, loaded in the stream's context.
/// - `dst..dst + 8 n` lies in one live device allocation of the context, aligned to 8.
pub(crate) unsafe fn fill64(
    func: &CudaFunction,
    dst: DevicePtr,
    n: usize,
    value: u64,
    stream: &CudaStream,
) -> Result<(), DriverError> {
    let grid = n.div_ceil(256).clamp(1, 8192) as u32;
    let (mut d, mut v, mut count) = (dst, value, n as u64);
    let mut params = [
        (&mut d as *mut DevicePtr).cast::<c_void>(),
        (&mut v as *mut u64).cast::<c_void>(),
        (&mut count as *mut u64).cast::<c_void>(),
    ];
    // SAFETY: the kernel takes three 8-byte parameters, given here; it writes
    // dst[0..n) only (the caller's contract).
    unsafe { launch(func, [grid, 1, 1], [256, 1, 1], 0, stream, params.as_mut_ptr()) }
}

/// Enqueue a fill of `bytes` bytes at `dst` with `pattern` repeated.
///
/// An 8-byte pattern whose halves differ has no memset: [`fill64`] does it.
/// A 16-byte pattern is four 2-D memsets of one 32-bit word per 16-byte
/// row, one for each word of the pattern.
///
/// # Safety
/// - `dst..dst + bytes` lies in one live device allocation of the stream's context.
/// - `pattern.len()` is 1, 2, 4, 8 or 16 and divides `bytes`; `dst` is aligned to it.
pub(crate) unsafe fn fill(
    dst: DevicePtr,
    bytes: usize,
    pattern: &[u8],
    stream: &CudaStream,
) -> Result<(), DriverError> {
    let s = stream.cu_stream();
    let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    // SAFETY: by the caller's contract, each memset stays inside the range and is aligned.
    unsafe {
        match pattern.len() {
            1 => sys::cuMemsetD8Async(dst, pattern[0], bytes, s).result(),
            2 => sys::cuMemsetD16Async(dst, u16::from_le_bytes([pattern[0], pattern[1]]), bytes / 2, s).result(),
            4 => sys::cuMemsetD32Async(dst, word(pattern), bytes / 4, s).result(),
            8 if pattern[..4] == pattern[4..] => sys::cuMemsetD32Async(dst, word(pattern), bytes / 4, s).result(),
            16 => (0..4).try_for_each(|w| {
                sys::cuMemsetD2D32Async(dst + 4 * w as u64, 16, word(&pattern[4 * w..]), 1, bytes / 16, s).result()
            }),
            _ => Err(DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE)),
        }
    }
}

/// `cuMemGetInfo` as (free, total); the context must be current.
pub(crate) fn mem_info() -> Result<(usize, usize), DriverError> {
    result::mem_get_info()
}

// ---------------------------------------------------------------- kernels

/// Enqueue a kernel launch.
///
/// # Safety
/// - `func` is a live function of the stream's context, and `params` holds one
///   pointer per kernel parameter, each to a value of that parameter's size,
///   all alive for the duration of the call.
/// - Every device pointer passed stays alive until the kernel completes, and the
///   kernel touches only memory the caller allows it to.
pub(crate) unsafe fn launch(
    func: &CudaFunction,
    grid: [u32; 3],
    block: [u32; 3],
    shared: u32,
    stream: &CudaStream,
    params: *mut *mut c_void,
) -> Result<(), DriverError> {
    // SAFETY: by the caller's contract; `extra` is null, as the driver allows.
    unsafe {
        sys::cuLaunchKernel(
            func.cu_function(),
            grid[0],
            grid[1],
            grid[2],
            block[0],
            block[1],
            block[2],
            shared,
            stream.cu_stream(),
            params,
            std::ptr::null_mut(),
        )
        .result()
    }
}

// ---------------------------------------------------------------- graphs

/// A captured graph and its executable form.
pub(crate) type Graph = sys::CUgraph;
/// An instantiated graph.
pub(crate) type GraphExec = sys::CUgraphExec;

/// `cuStreamBeginCapture` in relaxed mode: calls on other threads (and
/// calls this thread makes that are not enqueued on a capturing stream) are
/// not disturbed by the capture.
pub(crate) fn begin_capture(stream: &CudaStream) -> Result<(), DriverError> {
    let mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
    // SAFETY: the stream is live (cudarc keeps it); the mode is a valid enum value.
    unsafe { sys::cuStreamBeginCapture_v2(stream.cu_stream(), mode).result() }
}

/// `cuStreamEndCapture`: the graph captured on `stream` since [`begin_capture`].
pub(crate) fn end_capture(stream: &CudaStream) -> Result<Graph, DriverError> {
    let mut graph = MaybeUninit::uninit();
    // SAFETY: the stream is live; the driver writes the graph handle on success.
    unsafe {
        sys::cuStreamEndCapture(stream.cu_stream(), graph.as_mut_ptr()).result()?;
        Ok(graph.assume_init())
    }
}

/// `cuGraphInstantiateWithFlags` with no flags.
///
/// # Safety
/// - `graph` is a live graph of the current context.
pub(crate) unsafe fn instantiate(graph: Graph) -> Result<GraphExec, DriverError> {
    let mut exec = MaybeUninit::uninit();
    // SAFETY: by the caller's contract; the driver writes the handle on success.
    unsafe {
        sys::cuGraphInstantiateWithFlags(exec.as_mut_ptr(), graph, 0).result()?;
        Ok(exec.assume_init())
    }
}

/// `cuGraphLaunch`.
///
/// # Safety
/// - `exec` is a live executable graph of the stream's context, not
///   launched concurrently from another thread, and the memory its nodes
///   use stays alive until the launch completes.
pub(crate) unsafe fn graph_launch(exec: GraphExec, stream: &CudaStream) -> Result<(), DriverError> {
    // SAFETY: by the caller's contract.
    unsafe { sys::cuGraphLaunch(exec, stream.cu_stream()).result() }
}

/// `cuGraphExecDestroy`; a launch still running completes first, as the driver promises.
///
/// # Safety
/// - `exec` is live, of the current context, and not used again.
pub(crate) unsafe fn graph_exec_destroy(exec: GraphExec) -> Result<(), DriverError> {
    // SAFETY: by the caller's contract.
    unsafe { sys::cuGraphExecDestroy(exec).result() }
}

/// `cuGraphDestroy`.
///
/// # Safety
/// - `graph` is live, of the current context, and not used again.
pub(crate) unsafe fn graph_destroy(graph: Graph) -> Result<(), DriverError> {
    // SAFETY: by the caller's contract.
    unsafe { sys::cuGraphDestroy(graph).result() }
}

/// `cuFuncGetParamCount`; cudarc binds it only for CUDA 13.2 headers, so
/// kiln looks it up itself.
type ParamCountFn = unsafe extern "C" fn(sys::CUfunction, *mut usize) -> sys::CUresult;

/// `cuFuncGetParamCount`, where the driver has it (13.2 and later).
fn param_count_fn() -> Option<ParamCountFn> {
    static FN: OnceLock<Option<ParamCountFn>> = OnceLock::new();
    // SAFETY: `culib` is loaded (the driver is present); the lookup calls
    // nothing, and the type is the one `cuda.h` declares for the symbol.
    *FN.get_or_init(|| unsafe { sys::culib().get::<ParamCountFn>(b"cuFuncGetParamCount\0").ok().map(|f| *f) })
}

/// Whether the driver can count a kernel's parameters (`cuFuncGetParamCount`,
/// driver 13.2 and later).
pub(crate) fn driver_counts_params() -> bool {
    param_count_fn().is_some()
}

/// The byte size of each parameter of `func`, from `cuFuncGetParamInfo`
/// (driver 12.4 and later), or `None` when they cannot be had without
/// provoking driver errors.
///
/// The number of parameters comes from `cuFuncGetParamCount` (driver 13.2 and
/// later) or else from `counted`, what the module image declares (see
/// `kernel::params`). Without either, nothing is asked: finding the end by
/// asking for indices until the driver refuses one would log a driver API
/// error per kernel (compute-sanitizer reports each), so launches then go
/// unchecked instead. A `counted` number the driver disagrees with (an index
/// it refuses) also gives `None`.
pub(crate) fn param_sizes(func: &CudaFunction, counted: Option<usize>) -> Result<Option<Vec<usize>>, DriverError> {
    // cudarc panics on a missing symbol, so look it up first.
    // SAFETY: `culib` is loaded (the driver is present); looking up a symbol calls nothing.
    let present = unsafe { sys::culib().get::<unsafe extern "C" fn()>(b"cuFuncGetParamInfo\0").is_ok() };
    if !present {
        return Ok(None);
    }
    let count = match param_count_fn() {
        Some(count_fn) => {
            let mut n = 0usize;
            // SAFETY: `func` is a live function; the call writes one usize.
            unsafe { count_fn(func.cu_function(), &mut n) }.result()?;
            n
        }
        None => match counted {
            Some(n) => n,
            None => return Ok(None),
        },
    };
    sizes_of(count, |index| {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: `func` is a live function; the call writes two usizes.
        unsafe { sys::cuFuncGetParamInfo(func.cu_function(), index, &mut offset, &mut size) }.result().map(|()| size)
    })
}

/// Ask `info` for parameters `0..count`, and for no index past them. An index
/// the driver refuses means `count` was wrong: `None`, not an error.
fn sizes_of(
    count: usize,
    mut info: impl FnMut(usize) -> Result<usize, DriverError>,
) -> Result<Option<Vec<usize>>, DriverError> {
    let mut sizes = Vec::with_capacity(count);
    for index in 0..count {
        match info(index) {
            Ok(size) => sizes.push(size),
            Err(DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE)) => return Ok(None),
            Err(e) => return Err(e),
        }
    }
    Ok(Some(sizes))
}

// ---------------------------------------------------------------- NVRTC

/// Whether the loaded libnvrtc exports `symbol` (NUL-terminated). cudarc's
/// bindings panic on first use of a symbol the library lacks, so every NVRTC
/// call that not all versions have is asked about here first.
fn nvrtc_has(symbol: &[u8]) -> bool {
    // SAFETY: NVRTC is present (every caller is reached only after
    // `nvrtc_present`); looking up a symbol calls nothing.
    unsafe { nv::culib().get::<unsafe extern "C" fn()>(symbol).is_ok() }
}

/// The NVRTC calls kiln makes that every NVRTC has (7.0 on).
const NVRTC_REQUIRED: [&[u8]; 8] = [
    b"nvrtcVersion\0",
    b"nvrtcCreateProgram\0",
    b"nvrtcDestroyProgram\0",
    b"nvrtcCompileProgram\0",
    b"nvrtcGetProgramLogSize\0",
    b"nvrtcGetProgramLog\0",
    b"nvrtcGetPTXSize\0",
    b"nvrtcGetPTX\0",
];

/// The first of [`NVRTC_REQUIRED`] the library lacks: then it is no NVRTC
/// kiln can use (a stub, or another library under the name).
fn nvrtc_missing_required() -> Option<&'static str> {
    static MISSING: OnceLock<Option<&'static str>> = OnceLock::new();
    *MISSING.get_or_init(|| {
        NVRTC_REQUIRED
            .iter()
            .find(|s| !nvrtc_has(s))
            .map(|s| std::str::from_utf8(&s[..s.len() - 1]).unwrap_or("an NVRTC function"))
    })
}

/// NVRTC's (major, minor) version, once the library is known to export every
/// call kiln needs; NVRTC must be present ([`nvrtc_present`]).
pub(crate) fn nvrtc_version() -> Result<(i32, i32), String> {
    if let Some(missing) = nvrtc_missing_required() {
        return Err(format!("the libnvrtc found lacks `{missing}`: it is not an NVRTC kiln can use"));
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: the symbol exists (checked above); the call writes two ints.
    unsafe { nv::nvrtcVersion(&mut major, &mut minor) }.result().map_err(|e| format!("nvrtcVersion: {e:?}"))?;
    Ok((major, minor))
}

/// Whether this NVRTC can hand back a CUBIN (`nvrtcGetCUBIN`, NVRTC 11.1 and
/// later); without it kiln compiles to PTX, which the driver finishes.
pub(crate) fn nvrtc_has_cubin() -> bool {
    nvrtc_has(b"nvrtcGetCUBINSize\0") && nvrtc_has(b"nvrtcGetCUBIN\0")
}

/// The `sm_XY` architectures this NVRTC can target, as numbers (90 for
/// sm_90); an error from an NVRTC before 11.2, which cannot list them.
pub(crate) fn nvrtc_archs() -> Result<Vec<i32>, String> {
    for symbol in [&b"nvrtcGetNumSupportedArchs\0"[..], b"nvrtcGetSupportedArchs\0"] {
        if !nvrtc_has(symbol) {
            let name = String::from_utf8_lossy(&symbol[..symbol.len() - 1]).into_owned();
            return Err(format!("this NVRTC (before 11.2) cannot list its architectures: it lacks `{name}`"));
        }
    }
    let mut n: c_int = 0;
    // SAFETY: both symbols exist (checked above); the calls write one int,
    // then `n` ints into a buffer of that length.
    unsafe {
        nv::nvrtcGetNumSupportedArchs(&mut n).result().map_err(|e| format!("nvrtcGetNumSupportedArchs: {e:?}"))?;
        let mut archs = vec![0 as c_int; n.max(0) as usize];
        nv::nvrtcGetSupportedArchs(archs.as_mut_ptr())
            .result()
            .map_err(|e| format!("nvrtcGetSupportedArchs: {e:?}"))?;
        Ok(archs)
    }
}

/// What NVRTC produced: a CUBIN for a real architecture, or NUL-terminated PTX.
pub(crate) struct NvrtcImage {
    /// The module image, ready for `cuModuleLoadData`.
    pub bytes: Vec<u8>,
    /// Whether `bytes` is a CUBIN (else PTX).
    pub cubin: bool,
}

/// Why NVRTC produced nothing.
pub(crate) enum NvrtcFailure {
    /// The source did not compile; the full program log.
    Compile(String),
    /// An NVRTC call failed outside compilation.
    Call(String),
}

/// `nvrtcGetCUBINSize` or `nvrtcGetPTXSize`.
type SizeFn = unsafe fn(nv::nvrtcProgram, *mut usize) -> nv::nvrtcResult;
/// `nvrtcGetCUBIN` or `nvrtcGetPTX`.
type GetFn = unsafe fn(nv::nvrtcProgram, *mut c_char) -> nv::nvrtcResult;

/// Destroys the program on every path out of [`nvrtc_compile`].
struct ProgramGuard(nv::nvrtcProgram);

impl Drop for ProgramGuard {
    fn drop(&mut self) {
        // SAFETY: the program was created and is destroyed once; an error here
        // only leaks host memory and is not worth reporting over the result.
        let _ = unsafe { nv::nvrtcDestroyProgram(&mut self.0) };
    }
}

/// Compile `source` with `options`; fetch the CUBIN when `cubin` (the
/// options name a real `sm_` architecture), else the PTX. NVRTC must be
/// present ([`nvrtc_present`]); a library without the calls this needs gives
/// an error, not a panic.
pub(crate) fn nvrtc_compile(
    source: &CStr,
    name: &CStr,
    options: &[CString],
    cubin: bool,
) -> Result<NvrtcImage, NvrtcFailure> {
    let call = |what: &str, e: nv::nvrtcResult| NvrtcFailure::Call(format!("{what}: {e:?}"));
    // The symbols are checked before the first call: cudarc panics on a missing one.
    if let Some(missing) = nvrtc_missing_required() {
        return Err(NvrtcFailure::Call(format!("the libnvrtc found lacks `{missing}`")));
    }
    if cubin && !nvrtc_has_cubin() {
        return Err(NvrtcFailure::Call(
            "this NVRTC (before 11.1) cannot return a CUBIN: it lacks `nvrtcGetCUBIN`".into(),
        ));
    }
    let mut prog = MaybeUninit::uninit();
    // SAFETY: source and name are NUL-terminated and outlive the program (the guard drops first).
    unsafe {
        nv::nvrtcCreateProgram(prog.as_mut_ptr(), source.as_ptr(), name.as_ptr(), 0, std::ptr::null(), std::ptr::null())
    }
    .result()
    .map_err(|e| call("nvrtcCreateProgram", e.0))?;
    // SAFETY: created above.
    let guard = ProgramGuard(unsafe { prog.assume_init() });
    let opts: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
    // SAFETY: `opts` points at `options.len()` NUL-terminated strings alive for the call.
    let compiled = unsafe { nv::nvrtcCompileProgram(guard.0, opts.len() as c_int, opts.as_ptr()) };
    if compiled != nv::nvrtcResult::NVRTC_SUCCESS {
        let log = program_log(guard.0).unwrap_or_else(|e| format!("(the log could not be read: {e})"));
        return Err(match compiled {
            nv::nvrtcResult::NVRTC_ERROR_COMPILATION => NvrtcFailure::Compile(log),
            other => NvrtcFailure::Call(format!("nvrtcCompileProgram: {other:?}\n{log}")),
        });
    }
    let (size_fn, get_fn, what): (SizeFn, GetFn, &str) = if cubin {
        (nv::nvrtcGetCUBINSize, nv::nvrtcGetCUBIN, "nvrtcGetCUBIN")
    } else {
        (nv::nvrtcGetPTXSize, nv::nvrtcGetPTX, "nvrtcGetPTX")
    };
    let mut size = 0usize;
    // SAFETY: the program compiled; the size call writes one usize, then the
    // image call fills a buffer of exactly that size.
    unsafe {
        size_fn(guard.0, &mut size).result().map_err(|e| call(what, e.0))?;
        let mut bytes = vec![0u8; size];
        get_fn(guard.0, bytes.as_mut_ptr().cast()).result().map_err(|e| call(what, e.0))?;
        if bytes.is_empty() {
            return Err(NvrtcFailure::Call(format!("{what}: NVRTC returned an empty image")));
        }
        Ok(NvrtcImage { bytes, cubin })
    }
}

fn program_log(prog: nv::nvrtcProgram) -> Result<String, String> {
    let mut size = 0usize;
    // SAFETY: `prog` is a live program; the buffer has the size NVRTC asked for.
    unsafe {
        nv::nvrtcGetProgramLogSize(prog, &mut size).result().map_err(|e| format!("{e:?}"))?;
        let mut log = vec![0u8; size.max(1)];
        nv::nvrtcGetProgramLog(prog, log.as_mut_ptr().cast()).result().map_err(|e| format!("{e:?}"))?;
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        Ok(String::from_utf8_lossy(&log[..end]).trim_end().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A driver whose kernel has `sizes`: it refuses indices past the end, as
    /// `cuFuncGetParamInfo` does (and logs a driver API error for each).
    struct FakeDriver {
        sizes: Vec<usize>,
        asked: Vec<usize>,
        refused: usize,
    }

    impl FakeDriver {
        fn info(&mut self, index: usize) -> Result<usize, DriverError> {
            self.asked.push(index);
            match self.sizes.get(index) {
                Some(&s) => Ok(s),
                None => {
                    self.refused += 1;
                    Err(DriverError(sys::CUresult::CUDA_ERROR_INVALID_VALUE))
                }
            }
        }
    }

    #[test]
    fn parameter_sizes_are_read_without_asking_past_the_end() {
        for sizes in [vec![], vec![8, 8, 4, 8], vec![4; 41]] {
            let mut driver = FakeDriver { sizes: sizes.clone(), asked: Vec::new(), refused: 0 };
            let got = sizes_of(sizes.len(), |i| driver.info(i)).unwrap();
            assert_eq!(got, Some(sizes.clone()));
            assert_eq!(driver.refused, 0, "no index past the end is asked for");
            assert_eq!(driver.asked, (0..sizes.len()).collect::<Vec<_>>());
        }
        // A count the driver disagrees with gives no sizes rather than wrong ones or an error.
        let mut driver = FakeDriver { sizes: vec![8, 8], asked: Vec::new(), refused: 0 };
        assert_eq!(sizes_of(3, |i| driver.info(i)).unwrap(), None);
        // Other driver errors are reported.
        let e = sizes_of(1, |_| Err(DriverError(sys::CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED))).unwrap_err();
        assert_eq!(e.0, sys::CUresult::CUDA_ERROR_CONTEXT_IS_DESTROYED);
    }
}
