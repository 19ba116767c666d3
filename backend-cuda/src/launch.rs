//! The launch path: check the arguments against the kernel's parameters and
//! its shape against the kernel's own limits, then `cuLaunchKernel`.
//!
//! It is the hot path (goal: within 1.1x of a bare cudarc launch), so it does
//! no heap allocation for up to [`INLINE_ARGS`] arguments: the argument values
//! and the pointer array the driver reads sit in fixed arrays on the stack,
//! and everything it checks against was read once when the kernel was loaded.
//! A buffer argument allocated on the launch's stream costs one pointer
//! compare; one from another stream has its use recorded (see `memory.rs`):
//! ordered after its allocation before `cuLaunchKernel`, an event recorded after.

use std::ffi::c_void;
use std::sync::atomic::Ordering;

use kiln_core::{Error, LaunchConfig, RawArg, Result};

use crate::error::is_bad_launch;
use crate::{ffi, Cuda, CudaKernel, CudaStream};

/// Arguments passed without a heap allocation.
pub(crate) const INLINE_ARGS: usize = 32;

/// Check `args` against the kernel's parameters as the driver reports them
/// (`cuFuncGetParamInfo`): their number, and each one's size (a buffer is an
/// 8-byte device pointer, a scalar its own size).
fn check_args(kernel: &CudaKernel, args: &[RawArg<'_, Cuda>]) -> Result<()> {
    let Some(params) = kernel.params.as_deref() else { return Ok(()) };
    let bad = |reason: String| Err(Error::InvalidLaunch { kernel: kernel.name.clone(), reason });
    if params.len() != args.len() {
        return bad(format!(
            "the kernel takes {} parameter(s), of {} bytes, but {} argument(s) were given",
            params.len(),
            list(params),
            args.len()
        ));
    }
    for (i, (arg, &want)) in args.iter().zip(params).enumerate() {
        let size = match arg {
            RawArg::Buffer { .. } => 8,
            RawArg::Scalar(s) => s.dtype().size(),
        };
        if size != want {
            let what = match arg {
                RawArg::Buffer { dtype, .. } => format!("a {dtype} buffer, passed as an 8-byte device pointer"),
                RawArg::Scalar(s) => format!("a {} scalar of {size} bytes", s.dtype()),
            };
            return bad(format!("argument {i} is {what}, but parameter {i} of the kernel is {want} bytes"));
        }
    }
    Ok(())
}

fn list(sizes: &[usize]) -> String {
    sizes.iter().map(|s| s.to_string()).collect::<Vec<_>>().join(", ")
}

/// Check the shape against what this kernel (not just the device) allows,
/// and raise its dynamic shared-memory limit when a launch needs more than
/// the default 48 KiB.
fn check_shape(kernel: &CudaKernel, config: &LaunchConfig) -> Result<()> {
    let bad = |reason: String| Err(Error::InvalidLaunch { kernel: kernel.name.clone(), reason });
    let threads = config.block.count();
    if threads > u64::from(kernel.max_threads) {
        return bad(format!(
            "block {} = {threads} threads; this kernel allows at most {} per block (it uses {} registers per thread)",
            config.block, kernel.max_threads, kernel.registers
        ));
    }
    let shared = config.shared_mem_bytes;
    if shared > kernel.max_dynamic_shared.load(Ordering::Relaxed) {
        let limit = kernel.shared_limit.saturating_sub(kernel.static_shared);
        if shared > limit {
            return bad(format!(
                "{shared} bytes of dynamic shared memory per block; this kernel has {} bytes of static shared \
                 memory, which leaves {limit} of the device's {}",
                kernel.static_shared, kernel.shared_limit
            ));
        }
        kernel.raise_dynamic_shared(shared)?;
    }
    Ok(())
}

/// One argument's value as the driver reads it: a device address, or a
/// scalar's bytes (little-endian, so the driver's first `size` bytes are the value).
#[inline]
fn value(arg: &RawArg<'_, Cuda>) -> u64 {
    match arg {
        RawArg::Buffer { buffer, offset, .. } => buffer.ptr + *offset as u64,
        RawArg::Scalar(s) => {
            let mut bytes = [0u8; 8];
            bytes[..s.as_bytes().len()].copy_from_slice(s.as_bytes());
            u64::from_le_bytes(bytes)
        }
    }
}

/// Whether any buffer argument was allocated on a stream other than `stream`.
#[inline]
fn any_foreign(stream: &CudaStream, args: &[RawArg<'_, Cuda>]) -> bool {
    args.iter().any(|arg| matches!(arg, RawArg::Buffer { buffer, .. } if buffer.is_foreign(stream)))
}

/// Order `stream` after the allocation of each foreign buffer argument.
#[cold]
fn before_foreign_uses(stream: &CudaStream, args: &[RawArg<'_, Cuda>]) -> Result<()> {
    for arg in args {
        if let RawArg::Buffer { buffer, .. } = arg {
            if buffer.is_foreign(stream) {
                buffer.before_foreign_use(stream)?;
            }
        }
    }
    Ok(())
}

/// Record the launch as a use of each foreign buffer argument; the first error.
#[cold]
fn after_foreign_uses(stream: &CudaStream, args: &[RawArg<'_, Cuda>]) -> Result<()> {
    let mut recorded = Ok(());
    for arg in args {
        if let RawArg::Buffer { buffer, .. } = arg {
            if buffer.is_foreign(stream) {
                let r = buffer.after_foreign_use(stream);
                recorded = recorded.and(r);
            }
        }
    }
    recorded
}

/// Launch `kernel` on `stream`.
///
/// # Safety
/// - As [`kiln_core::RawStream::launch`]: the kernel and every buffer belong to
///   the stream's device, the shape was validated against the device, and the
///   kernel stays inside its buffer arguments.
pub(crate) unsafe fn launch(
    stream: &CudaStream,
    kernel: &CudaKernel,
    config: &LaunchConfig,
    args: &[RawArg<'_, Cuda>],
) -> Result<()> {
    stream.state.check_usable()?;
    check_args(kernel, args)?;
    check_shape(kernel, config)?;
    stream.state.bind("cuLaunchKernel")?;
    let foreign = any_foreign(stream, args);
    if foreign {
        before_foreign_uses(stream, args)?;
    }
    let grid = [config.grid.x, config.grid.y, config.grid.z];
    let block = [config.block.x, config.block.y, config.block.z];
    let n = args.len();
    let submitted = if n <= INLINE_ARGS {
        let mut values = [0u64; INLINE_ARGS];
        let mut ptrs = [std::ptr::null_mut::<c_void>(); INLINE_ARGS];
        for (i, arg) in args.iter().enumerate() {
            values[i] = value(arg);
        }
        for (p, v) in ptrs.iter_mut().zip(values.iter_mut()).take(n) {
            *p = (v as *mut u64).cast();
        }
        // SAFETY: one pointer per parameter (checked above where the driver
        // reports parameters), each to 8 readable bytes that outlive the call;
        // the rest is the caller's contract.
        unsafe {
            ffi::launch(&kernel.function, grid, block, config.shared_mem_bytes, &stream.stream, ptrs.as_mut_ptr())
        }
    } else {
        let mut values: Vec<u64> = args.iter().map(value).collect();
        let mut ptrs: Vec<*mut c_void> = values.iter_mut().map(|v| (v as *mut u64).cast()).collect();
        // SAFETY: as above, with the arrays on the heap.
        unsafe {
            ffi::launch(&kernel.function, grid, block, config.shared_mem_bytes, &stream.stream, ptrs.as_mut_ptr())
        }
    };
    // Recorded whatever the driver answered: a refused launch enqueued nothing,
    // and the record is then merely early.
    let recorded = if foreign { after_foreign_uses(stream, args) } else { Ok(()) };
    match submitted {
        Ok(()) => {
            stream.last_kernel.store(kernel.id, Ordering::Relaxed);
            stream.state.last_kernel.store(kernel.id, Ordering::Relaxed);
            recorded
        }
        Err(e) if is_bad_launch(e) && !stream.state.is_lost() => Err(Error::InvalidLaunch {
            kernel: kernel.name.clone(),
            reason: format!(
                "the driver refused grid {} x block {} with {} bytes of dynamic shared memory: {}",
                config.grid,
                config.block,
                config.shared_mem_bytes,
                crate::error::describe(e)
            ),
        }),
        // An earlier kernel's fault surfaces here: name the one before this launch.
        Err(e) => Err(stream.fail("cuLaunchKernel", e)),
    }
}
