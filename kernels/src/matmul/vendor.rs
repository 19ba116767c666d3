//! The hook through which a backend crate offers a vendor library's matrix
//! product (cuBLAS on CUDA) without kiln-kernels depending on any backend.
//!
//! A backend registers one [`VendorMatmul`] for its [`BackendKind`];
//! [`matmul_with`](super::matmul_with) calls it for [`MatmulStrategy::Cublas`](super::MatmulStrategy::Cublas),
//! and [`MatmulStrategy::Auto`](super::MatmulStrategy::Auto) picks it for
//! large products of a dtype it supports. The call carries the typed
//! stream and the backend buffers as `dyn Any`, which the backend downcasts
//! to its own types.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{OnceLock, RwLock};

use kiln_core::{BackendKind, DType, Result};

/// One operand of a [`VendorCall`]: a backend buffer and the byte range the
/// matrix occupies in it.
#[derive(Clone, Copy)]
pub struct VendorOperand<'a> {
    /// The backend's buffer (`B::Buffer`, e.g. `kiln_cuda::CudaBuffer`).
    pub buffer: &'a dyn Any,
    /// Byte offset of the matrix's first element.
    pub offset: usize,
    /// Bytes the matrix occupies.
    pub len: usize,
}

/// One row-major product `c (m x n) = a (m x k) . b (k x n)` handed to a vendor library.
#[derive(Clone, Copy)]
pub struct VendorCall<'a> {
    /// The typed stream to enqueue on (`kiln_core::Stream<B>`).
    pub stream: &'a dyn Any,
    /// The left factor, `m x k`.
    pub a: VendorOperand<'a>,
    /// The right factor, `k x n`.
    pub b: VendorOperand<'a>,
    /// The product, `m x n` (written).
    pub c: VendorOperand<'a>,
    /// Rows of a and c.
    pub m: usize,
    /// Columns of b and c.
    pub n: usize,
    /// Columns of a, rows of b (at least 1).
    pub k: usize,
    /// Element type of a and b.
    pub input: DType,
    /// Element type of c (the accumulator: f32 for f16 and bf16 inputs).
    pub output: DType,
}

/// A vendor library's matrix product, as a backend registers it.
///
/// # Examples
/// ```
/// use kiln_core::{BackendKind, DType, Error};
/// use kiln_kernels::matmul::{register_vendor_matmul, vendor_matmul, VendorCall, VendorMatmul};
///
/// unsafe fn refuse(call: &VendorCall<'_>) -> kiln_core::Result<()> {
///     Err(Error::unsupported(BackendKind::Cpu, format!("{} x {} product", call.m, call.n), "a demo"))
/// }
/// register_vendor_matmul(BackendKind::Cpu, VendorMatmul { name: "demo", supports: |d| d == DType::F64, run: refuse });
/// assert_eq!(vendor_matmul(BackendKind::Cpu).map(|v| v.name), Some("demo"));
/// # kiln_kernels::matmul::unregister_vendor_matmul(BackendKind::Cpu);
/// ```
#[derive(Clone, Copy)]
pub struct VendorMatmul {
    /// The library's name, for messages ("cuBLAS").
    pub name: &'static str,
    /// Whether the library multiplies matrices of this input dtype.
    pub supports: fn(DType) -> bool,
    /// Enqueue the product on the call's stream.
    ///
    /// # Safety
    /// The caller guarantees that:
    /// - `stream` is the `kiln_core::Stream` of the registering backend, and
    ///   each operand's `buffer` that backend's buffer type, all on the
    ///   stream's device;
    /// - each operand's byte range lies inside its buffer and holds exactly
    ///   the matrix of the call's shape and dtype;
    /// - `c`'s range overlaps neither `a`'s nor `b`'s, and nothing else
    ///   writes `a`, `b` or `c` until the product has run on the stream.
    pub run: unsafe fn(&VendorCall<'_>) -> Result<()>,
}

impl std::fmt::Debug for VendorMatmul {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VendorMatmul({})", self.name)
    }
}

fn registry() -> &'static RwLock<HashMap<BackendKind, VendorMatmul>> {
    static REGISTRY: OnceLock<RwLock<HashMap<BackendKind, VendorMatmul>>> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

/// Offer `vendor` as backend `kind`'s vendor matrix product (replacing any
/// earlier one). Backends call this when they open a device.
pub fn register_vendor_matmul(kind: BackendKind, vendor: VendorMatmul) {
    registry().write().unwrap_or_else(|p| p.into_inner()).insert(kind, vendor);
}

/// Withdraw backend `kind`'s vendor matrix product, if any.
pub fn unregister_vendor_matmul(kind: BackendKind) {
    registry().write().unwrap_or_else(|p| p.into_inner()).remove(&kind);
}

/// Backend `kind`'s vendor matrix product, if one is registered.
pub fn vendor_matmul(kind: BackendKind) -> Option<VendorMatmul> {
    registry().read().unwrap_or_else(|p| p.into_inner()).get(&kind).copied()
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use kiln_core::{Device, Error};
    use kiln_cpu::Cpu;

    use super::*;
    use crate::matmul::{choose, matmul, matmul_with, MatmulShape, MatmulStrategy, AUTO_VENDOR_MIN_FLOPS};

    /// What the recording vendor saw: (m, n, k, input, output, byte offsets of a, b, c).
    type Seen = (usize, usize, usize, DType, DType, [usize; 3]);
    static SEEN: Mutex<Vec<Seen>> = Mutex::new(Vec::new());

    unsafe fn record(call: &VendorCall<'_>) -> Result<()> {
        if call.stream.downcast_ref::<kiln_core::Stream<Cpu>>().is_none() {
            return Err(Error::invalid("recording vendor", "not a CPU stream"));
        }
        let seen = (call.m, call.n, call.k, call.input, call.output, [call.a.offset, call.b.offset, call.c.offset]);
        SEEN.lock().unwrap().push(seen);
        Ok(())
    }

    /// The hook end to end on the CPU backend: Auto's choice by size and
    /// dtype, the operands' byte ranges, and refusals.
    #[test]
    fn auto_and_explicit_calls_reach_the_registered_library() {
        register_vendor_matmul(
            BackendKind::Cpu,
            VendorMatmul { name: "recorder", supports: |d| d == DType::F32 || d == DType::F16, run: record },
        );
        let dev = Device::<Cpu>::open(0).unwrap();
        let s = dev.stream();
        let big = MatmulShape::new(128, 64, 64);
        assert!(big.flops() >= AUTO_VENDOR_MIN_FLOPS);
        assert_eq!(choose(&dev, DType::F32, big), MatmulStrategy::Cublas);
        assert_eq!(choose(&dev, DType::I32, big), MatmulStrategy::Tiled);
        assert_eq!(choose(&dev, DType::F32, MatmulShape::new(4, 4, 4)), MatmulStrategy::Tiled);
        assert_eq!(choose(&dev, DType::F32, MatmulShape::new(1024, 1024, 0)), MatmulStrategy::Tiled);

        let a = s.upload(&vec![1.0f32; 3 + 128 * 64]).unwrap();
        let b = s.upload(&vec![1.0f32; 64 * 64]).unwrap();
        let mut c = s.alloc::<f32>(5 + 128 * 64).unwrap();
        let used = matmul(&s, &a.slice(3..).unwrap(), &b, &mut c.slice_mut(5..).unwrap(), big).unwrap();
        assert_eq!(used, MatmulStrategy::Cublas);
        let seen = SEEN.lock().unwrap().pop().unwrap();
        assert_eq!(seen, (128, 64, 64, DType::F32, DType::F32, [12, 0, 20]));

        // Small products and other dtypes stay with kiln's kernel; an explicit
        // request for the library on a dtype it lacks is refused.
        let small = MatmulShape::new(2, 2, 2);
        let (x, mut y) = (s.upload(&[1i32; 4]).unwrap(), s.alloc::<i32>(4).unwrap());
        assert_eq!(matmul(&s, &x, &x, &mut y, small).unwrap(), MatmulStrategy::Tiled);
        assert_eq!(y.to_vec().unwrap(), vec![2; 4]);
        let err = matmul_with(&s, MatmulStrategy::Cublas, &x, &x, &mut y, small).unwrap_err();
        assert!(err.to_string().contains("recorder has no product of i32 matrices"), "{err}");
        assert!(SEEN.lock().unwrap().is_empty());
        unregister_vendor_matmul(BackendKind::Cpu);
        assert!(vendor_matmul(BackendKind::Cpu).is_none());
    }
}
