//! matmul: `c = a . b` for row-major matrices of any shape, with the
//! strategy chosen automatically (and visible, and overridable).
//!
//! - [`MatmulStrategy::Tiled`], kiln's own kernel on every backend: on CUDA
//!   a register-blocked sgemm for f32 (128 x 128 tiles, 8 x 8 outputs per
//!   thread, double-buffered shared memory, 16-byte loads) and a 64 x 64
//!   shared-memory tiling for the other dtypes; on WGSL a 64 x 64
//!   workgroup-memory tiling; on the CPU rows in parallel.
//! - [`MatmulStrategy::Naive`], one thread per output element: the seed's
//!   first matmul, kept as a baseline.
//! - [`MatmulStrategy::Cublas`], cuBLAS on CUDA, offered by kiln-cuda
//!   through the [`register_vendor_matmul`] hook.
//!
//! Inputs are `f32`, `f64`, `f16` and `bf16` (accumulated and returned in
//! `f32`), `i32` and `u32` (wrapping modulo 2^32); see [`MatmulElement`].
//! The f32 path uses plain fp32 FMA (never TF32), so its error is that of
//! fp32 arithmetic: at most about `k` units of roundoff times `sum |a||b|`.

mod cpu;
mod vendor;

use std::sync::Arc;

use kiln_core::{
    bf16, f16, Args, Backend, BackendKind, BufferView, DType, Device, Element, Error, LaunchConfig, Program, Result,
    Stream, View, ViewMut,
};

pub use vendor::{
    register_vendor_matmul, unregister_vendor_matmul, vendor_matmul, VendorCall, VendorMatmul, VendorOperand,
};

use crate::launch::{check_dtype, cuda_source, program};

mod sealed {
    pub trait Sealed {}
}

/// An element type matmul accepts, and the type it accumulates and returns.
///
/// | `T` | `T::Acc` (type of `c`) |
/// |---|---|
/// | `f32` | `f32` |
/// | `f64` | `f64` |
/// | `f16`, `bf16` | `f32` |
/// | `i32`, `u32` | the same, wrapping modulo 2^32 |
///
/// # Examples
/// ```
/// use kiln_kernels::matmul::MatmulElement;
/// let acc = <kiln_core::f16 as MatmulElement>::mul_add(1.0f32, 2.0, 3.0);
/// assert_eq!(acc, 7.0);
/// assert_eq!(i32::mul_add(i32::MAX, 1, 1), i32::MIN);
/// ```
pub trait MatmulElement: Element + sealed::Sealed {
    /// The accumulator type, which is also the type of the product.
    type Acc: Element;
    /// The accumulator's CUDA type, and the product's (which differ for i32:
    /// integers accumulate as `unsigned` so that overflow wraps).
    #[doc(hidden)]
    const CUDA_TYPES: (&'static str, &'static str);
    /// Zero of the accumulator.
    fn zero() -> Self::Acc;
    /// The value in the accumulator type.
    fn widen(self) -> Self::Acc;
    /// `acc + a * b` in the accumulator type (wrapping for integers).
    fn mul_add(acc: Self::Acc, a: Self::Acc, b: Self::Acc) -> Self::Acc;
}

macro_rules! float_element {
    ($t:ty, $acc:ty, $cuda:expr, $widen:expr) => {
        impl sealed::Sealed for $t {}
        impl MatmulElement for $t {
            type Acc = $acc;
            const CUDA_TYPES: (&'static str, &'static str) = ($cuda, $cuda);
            fn zero() -> $acc {
                0.0
            }
            fn widen(self) -> $acc {
                $widen(self)
            }
            fn mul_add(acc: $acc, a: $acc, b: $acc) -> $acc {
                acc + a * b
            }
        }
    };
}
float_element!(f32, f32, "float", |v| v);
float_element!(f64, f64, "double", |v| v);
float_element!(f16, f32, "float", f16::to_f32);
float_element!(bf16, f32, "float", bf16::to_f32);

macro_rules! int_element {
    ($t:ty, $out:expr) => {
        impl sealed::Sealed for $t {}
        impl MatmulElement for $t {
            type Acc = $t;
            const CUDA_TYPES: (&'static str, &'static str) = ("unsigned", $out);
            fn zero() -> $t {
                0
            }
            fn widen(self) -> $t {
                self
            }
            fn mul_add(acc: $t, a: $t, b: $t) -> $t {
                acc.wrapping_add(a.wrapping_mul(b))
            }
        }
    };
}
int_element!(i32, "int");
int_element!(u32, "unsigned");

/// Which implementation computes a product.
///
/// # Examples
/// ```
/// use kiln_kernels::matmul::MatmulStrategy;
/// assert_eq!(MatmulStrategy::default(), MatmulStrategy::Auto);
/// assert_eq!(MatmulStrategy::Cublas.to_string(), "cublas");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum MatmulStrategy {
    /// Let kiln choose (see [`choose`]); calls return the strategy they used.
    #[default]
    Auto,
    /// kiln's own tiled kernel, on every backend.
    Tiled,
    /// One thread per output element (the baseline).
    Naive,
    /// cuBLAS, on CUDA devices where kiln-cuda registered it.
    Cublas,
}

impl MatmulStrategy {
    /// Every strategy.
    pub const ALL: [MatmulStrategy; 4] =
        [MatmulStrategy::Auto, MatmulStrategy::Tiled, MatmulStrategy::Naive, MatmulStrategy::Cublas];

    /// Lower-case name ("tiled").
    pub const fn name(self) -> &'static str {
        match self {
            MatmulStrategy::Auto => "auto",
            MatmulStrategy::Tiled => "tiled",
            MatmulStrategy::Naive => "naive",
            MatmulStrategy::Cublas => "cublas",
        }
    }
}

impl std::fmt::Display for MatmulStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The shape of `c (m x n) = a (m x k) . b (k x n)`.
///
/// # Examples
/// ```
/// use kiln_kernels::matmul::MatmulShape;
/// let s = MatmulShape::new(2, 3, 4);
/// assert_eq!(s.flops(), 48);
/// assert_eq!(s.to_string(), "(2 x 4) . (4 x 3)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MatmulShape {
    /// Rows of `a` and `c`.
    pub m: usize,
    /// Columns of `b` and `c`.
    pub n: usize,
    /// Columns of `a`, rows of `b`.
    pub k: usize,
}

impl MatmulShape {
    /// The shape `m x k` times `k x n`.
    pub const fn new(m: usize, n: usize, k: usize) -> Self {
        MatmulShape { m, n, k }
    }

    /// Floating-point operations of the product: `2 m n k`.
    pub fn flops(&self) -> u64 {
        2 * self.m as u64 * self.n as u64 * self.k as u64
    }
}

impl std::fmt::Display for MatmulShape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({} x {}) . ({} x {})", self.m, self.k, self.k, self.n)
    }
}

/// Products of at least this many flops go to the vendor library under
/// [`MatmulStrategy::Auto`]; smaller ones are launch-bound either way, and
/// kiln's kernel needs no library handle.
pub const AUTO_VENDOR_MIN_FLOPS: u64 = 1 << 20;

/// The strategy [`MatmulStrategy::Auto`] resolves to for a product of
/// `shape` on `dtype` on `device`: cuBLAS where it is registered, supports
/// the dtype and the product has at least [`AUTO_VENDOR_MIN_FLOPS`] flops;
/// kiln's tiled kernel otherwise.
///
/// # Examples
/// ```
/// use kiln_core::{DType, Device};
/// use kiln_kernels::matmul::{choose, MatmulShape, MatmulStrategy};
/// let dev = Device::<kiln_cpu::Cpu>::open(0).unwrap();
/// assert_eq!(choose(&dev, DType::F32, MatmulShape::new(4096, 4096, 4096)), MatmulStrategy::Tiled);
/// ```
pub fn choose<B: Backend>(device: &Device<B>, dtype: DType, shape: MatmulShape) -> MatmulStrategy {
    let _ = device;
    match vendor_matmul(B::KIND) {
        Some(v) if (v.supports)(dtype) && shape.k > 0 && shape.flops() >= AUTO_VENDOR_MIN_FLOPS => {
            MatmulStrategy::Cublas
        }
        _ => MatmulStrategy::Tiled,
    }
}

/// `c = a . b` on `stream` with [`MatmulStrategy::Auto`]; returns the
/// strategy that ran. `a` is `m x k`, `b` is `k x n` and `c` is `m x n`,
/// all row-major, with exactly those lengths.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::matmul::{matmul, MatmulShape, MatmulStrategy};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let a = s.upload(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0])?;  // 2 x 3
/// let b = s.upload(&[1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0])?;  // 3 x 2
/// let mut c = s.alloc::<f32>(4)?;
/// let used = matmul(&s, &a, &b, &mut c, MatmulShape::new(2, 2, 3))?;
/// assert_eq!(used, MatmulStrategy::Tiled);
/// assert_eq!(c.to_vec()?, vec![4.0, 5.0, 10.0, 11.0]);
/// # Ok(()) }
/// ```
pub fn matmul<B: Backend, T: MatmulElement>(
    stream: &Stream<B>,
    a: &impl View<B, T>,
    b: &impl View<B, T>,
    c: &mut impl ViewMut<B, T::Acc>,
    shape: MatmulShape,
) -> Result<MatmulStrategy> {
    matmul_with(stream, MatmulStrategy::Auto, a, b, c, shape)
}

/// [`matmul`] with a chosen strategy; returns the strategy that ran (the
/// resolved one for [`MatmulStrategy::Auto`]). A strategy the backend or
/// dtype lacks (cuBLAS off CUDA, or on integers) is `Err(Unsupported)`.
///
/// # Examples
/// ```
/// use kiln_core::{bf16, Device};
/// use kiln_cpu::Cpu;
/// use kiln_kernels::matmul::{matmul_with, MatmulShape, MatmulStrategy};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let a = s.upload(&[bf16::from_f32(1.5), bf16::from_f32(-2.0)])?;  // 1 x 2
/// let b = s.upload(&[bf16::from_f32(4.0), bf16::from_f32(0.5)])?;   // 2 x 1
/// let mut c = s.alloc::<f32>(1)?;
/// matmul_with(&s, MatmulStrategy::Naive, &a, &b, &mut c, MatmulShape::new(1, 1, 2))?;
/// assert_eq!(c.to_vec()?, vec![5.0]);
/// assert!(matmul_with(&s, MatmulStrategy::Cublas, &a, &b, &mut c, MatmulShape::new(1, 1, 2)).is_err());
/// # Ok(()) }
/// ```
pub fn matmul_with<B: Backend, T: MatmulElement>(
    stream: &Stream<B>,
    strategy: MatmulStrategy,
    a: &impl View<B, T>,
    b: &impl View<B, T>,
    c: &mut impl ViewMut<B, T::Acc>,
    shape: MatmulShape,
) -> Result<MatmulStrategy> {
    let MatmulShape { m, n, k } = shape;
    let what = format!("matmul {shape} on {}", T::DTYPE);
    let count = |x: usize, y: usize, name: &str| {
        x.checked_mul(y).ok_or_else(|| Error::invalid(what.clone(), format!("{name} overflows the address space")))
    };
    let (len_a, len_b, len_c) = (count(m, k, "m x k")?, count(k, n, "k x n")?, count(m, n, "m x n")?);
    for (name, expected, actual) in [
        ("a (m x k)", len_a, a.view().len()),
        ("b (k x n)", len_b, b.view().len()),
        ("c (m x n)", len_c, c.view().len()),
    ] {
        if expected != actual {
            return Err(Error::LengthMismatch { what: format!("{what}: {name}"), expected, actual });
        }
    }
    check_element::<B, T>(stream, &what)?;
    let resolved = match strategy {
        MatmulStrategy::Auto => choose(stream.device(), T::DTYPE, shape),
        s => s,
    };
    if len_c == 0 {
        return Ok(resolved);
    }
    if resolved == MatmulStrategy::Cublas {
        run_vendor(stream, a, b, c, shape, &what)?;
        return Ok(resolved);
    }
    if k == 0 {
        // An empty sum: every element of c is zero.
        stream.fill(c, T::zero())?;
        return Ok(resolved);
    }
    let dims = dims::<B>(shape, &what)?;
    let offsets = [
        a.view().offset() * size_of::<T>(),
        b.view().offset() * size_of::<T>(),
        c.view().offset() * size_of::<T::Acc>(),
    ];
    let (prog, config) = plan::<B, T>(stream.device(), resolved, shape, &offsets);
    let kernel = stream.device().kernel(&prog)?;
    let args = Args::new().arg(a.view()).arg(b.view()).arg(c.view_mut());
    let args = match dims {
        Dims::U32(m, n, k) => args.arg(m).arg(n).arg(k),
        Dims::U64(m, n, k) => args.arg(m).arg(n).arg(k),
    };
    // SAFETY: the kernel reads a[0..m k) and b[0..k n) and writes c[0..m n),
    // the lengths checked above; the 16-byte path is chosen only where
    // every pointer and row is 16-byte aligned.
    unsafe { stream.launch(&kernel, config, args)? };
    Ok(resolved)
}

/// `Err(Unsupported)` for input dtypes the device cannot compute on.
fn check_element<B: Backend, T: MatmulElement>(stream: &Stream<B>, what: &str) -> Result<()> {
    if T::DTYPE == DType::BF16 && B::KIND == BackendKind::Wgpu {
        return Err(Error::unsupported(B::KIND, what, "WGSL has no bfloat16 type"));
    }
    check_dtype(stream, T::DTYPE, "matmul")
}

enum Dims {
    U32(u32, u32, u32),
    U64(u64, u64, u64),
}

/// The dimensions in the ABI's type; on WGSL every matrix must be indexable with u32.
fn dims<B: Backend>(shape: MatmulShape, what: &str) -> Result<Dims> {
    let MatmulShape { m, n, k } = shape;
    if B::KIND != BackendKind::Wgpu {
        return Ok(Dims::U64(m as u64, n as u64, k as u64));
    }
    let largest = (m as u64 * k as u64).max(k as u64 * n as u64).max(m as u64 * n as u64);
    if largest > u32::MAX as u64 {
        return Err(Error::unsupported(
            B::KIND,
            what,
            format!("a matrix of {largest} elements exceeds WGSL's u32 indices"),
        ));
    }
    Ok(Dims::U32(m as u32, n as u32, k as u32))
}

/// Blocks of `tile` covering `n`, capped at `max` (the kernels loop for the rest).
fn blocks(n: usize, tile: usize, max: u32) -> u32 {
    u32::try_from(n.div_ceil(tile)).unwrap_or(u32::MAX).min(max)
}

/// The program and launch shape of the naive or tiled kernel.
fn plan<B: Backend, T: MatmulElement>(
    device: &Device<B>,
    strategy: MatmulStrategy,
    shape: MatmulShape,
    offsets: &[usize; 3],
) -> (Arc<Program>, LaunchConfig) {
    let MatmulShape { m, n, k } = shape;
    let max = device.info().limits.max_grid;
    let naive = strategy == MatmulStrategy::Naive;
    // CUDA's f32 sgemm takes 16-byte loads when every row and pointer is 16-byte aligned.
    let sgemm = B::KIND == BackendKind::Cuda && T::DTYPE == DType::F32 && !naive;
    let vec = sgemm && k % 4 == 0 && n % 4 == 0 && offsets.iter().all(|o| o % 16 == 0);
    let (algo, tile, block) = match (naive, sgemm, B::KIND) {
        (true, _, _) => (0, 16, LaunchConfig::new(1, (16, 16)).block),
        (false, true, _) => (2, 128, LaunchConfig::new(1, 256).block),
        (false, false, BackendKind::Wgpu) => (1, 64, LaunchConfig::new(1, (16, 16)).block),
        (false, false, _) => (1, 64, LaunchConfig::new(1, 256).block),
    };
    let config = LaunchConfig::new((blocks(n, tile, max[0]), blocks(m, tile, max[1])), block);
    // Programs are shared by every backend in the process, so everything a
    // backend chooses differently (the kernel, the vector loads) is in the name.
    let form = ["naive", "tiled", "sgemm"][algo as usize];
    let name = format!("kiln_matmul_{form}_{}{}", T::DTYPE, if vec { "_vec4" } else { "" });
    let prog = program(&name, || {
        let (acc, out) = T::CUDA_TYPES;
        let wgsl_in = T::DTYPE.wgsl_name().unwrap_or("unsupported_type");
        let wgsl_acc = <T::Acc as Element>::DTYPE.wgsl_name().unwrap_or("unsupported_type");
        let enable = if T::DTYPE == DType::F16 { "enable f16;\n" } else { "" };
        Program::new(&name)
            .cuda(cuda_source(T::DTYPE, include_str!("kernel.cu")))
            .wgsl(format!("{enable}{}", include_str!("kernel.wgsl")))
            .host(cpu::matmul::<T>)
            .define("KERNEL", &name)
            .define(if naive { "NAIVE" } else { "TILED" }, &name)
            .define("ALGO", algo)
            .define("VEC", u8::from(vec))
            .define("ACC", acc)
            .define("OUT", out)
            .define("IN", wgsl_in)
            .define("ACCUM", wgsl_acc)
    });
    (prog, config)
}

/// Hand the product to the vendor library registered for this backend.
fn run_vendor<B: Backend, T: MatmulElement>(
    stream: &Stream<B>,
    a: &impl View<B, T>,
    b: &impl View<B, T>,
    c: &mut impl ViewMut<B, T::Acc>,
    shape: MatmulShape,
    what: &str,
) -> Result<()> {
    let vendor = vendor_matmul(B::KIND).ok_or_else(|| {
        Error::unsupported(
            B::KIND,
            format!("{what} with strategy cublas"),
            "no vendor matrix library is registered for this backend (kiln-cuda registers cuBLAS on CUDA devices)",
        )
    })?;
    if !(vendor.supports)(T::DTYPE) {
        return Err(Error::unsupported(
            B::KIND,
            format!("{what} with strategy cublas"),
            format!("{} has no product of {} matrices", vendor.name, T::DTYPE),
        ));
    }
    if shape.k == 0 {
        return stream.fill(c, T::zero());
    }
    let (av, bv, cv) = (a.view(), b.view(), c.view_mut());
    for (name, device) in [("a", av.buffer().device()), ("b", bv.buffer().device())] {
        if !device.same(stream.device()) {
            return Err(Error::DeviceMismatch {
                what: format!("{what}: operand {name}"),
                first: stream.device().name().to_string(),
                second: device.name().to_string(),
            });
        }
    }
    let (c_buffer, c_offset, c_len) = cv.into_parts();
    if !c_buffer.device().same(stream.device()) {
        return Err(Error::DeviceMismatch {
            what: format!("{what}: output c"),
            first: stream.device().name().to_string(),
            second: c_buffer.device().name().to_string(),
        });
    }
    let call = VendorCall {
        stream,
        a: operand(&av),
        b: operand(&bv),
        c: VendorOperand {
            buffer: c_buffer.raw(),
            offset: c_offset * size_of::<T::Acc>(),
            len: c_len * size_of::<T::Acc>(),
        },
        m: shape.m,
        n: shape.n,
        k: shape.k,
        input: T::DTYPE,
        output: <T::Acc as Element>::DTYPE,
    };
    stream.device().check_usable()?;
    // SAFETY: the stream and buffers are backend B's (the one that registered
    // `vendor`), on one device (checked above); the byte ranges are the views'
    // and have the shape's lengths (checked by the caller); `c` is borrowed
    // mutably, so it overlaps neither input, and the views stay borrowed
    // until the work is enqueued, after which stream order protects them.
    unsafe { (vendor.run)(&call) }
}

/// A vendor operand: the view's backend buffer and its byte range.
fn operand<'a, B: Backend, T: Element>(view: &BufferView<'a, B, T>) -> VendorOperand<'a> {
    VendorOperand {
        buffer: view.buffer().raw(),
        offset: view.offset() * size_of::<T>(),
        len: view.len() * size_of::<T>(),
    }
}
