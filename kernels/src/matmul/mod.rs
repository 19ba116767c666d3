//! matmul: `c = a . b` for row-major matrices of any shape, one product or
//! a batch of them, operands transposed or padded ([`MatmulShape`]), in the
//! arithmetic the caller allows ([`Precision`]), with the strategy chosen
//! automatically (and visible, and overridable).
//!
//! - [`MatmulStrategy::Tiled`], kiln's own kernel on every backend: on CUDA
//!   the tensor cores where the device has matrix units for the product
//!   ([`MatrixUnits`](kiln_core::MatrixUnits), sm_80 and later: `mma.sync`
//!   kernels for f16 and bf16, for f64, and for f32 where the precision
//!   mode allows TF32), else a register-blocked sgemm for f32 (128 x 128
//!   tiles, 8 x 8 outputs per thread, double-buffered shared memory,
//!   16-byte loads) and a 64 x 64 shared-memory tiling for the other
//!   dtypes; on WGSL a 64 x 64 workgroup-memory tiling; on the CPU packed
//!   f32 and f64 kernels, rows in parallel.
//! - [`MatmulStrategy::Naive`], one thread per output element: the seed's
//!   first matmul, kept as a baseline.
//! - [`MatmulStrategy::Vendor`], the vendor library's GEMM where the
//!   device offers one (cuBLAS on CUDA): a backend capability,
//!   [`RawDevice::vendor_gemm`] and [`RawDevice::gemm`], which this module
//!   calls after checking shapes, lengths and devices.
//!
//! Inputs are `f32`, `f64`, `f16` and `bf16` (accumulated and returned in
//! `f32`, or rounded to their own type by [`matmul_rounded`]), `i32` and
//! `u32` (wrapping modulo 2^32); see [`MatmulElement`].
//! f32 products are computed in plain fp32 FMA unless the shape's
//! [`Precision`] allows TF32 or bf16 inputs, which the tensor-core paths
//! use (cuBLAS's, and kiln's own TF32 kernel on CUDA); each mode's bound on
//! the error of an element is [`Precision::error_bound`] times
//! `sum |a||b|`.

mod cpu;
// The lean route is compiled into every test build, so the default build's
// tests check it too.
#[cfg(any(test, not(feature = "cpu-gemm")))]
mod cpu_blocks;
#[cfg(feature = "cpu-gemm")]
mod cpu_gemm;
mod cpu_layout;
mod launch;
mod plan;
mod program;
mod rounded;
mod scaled;

use kiln_core::{
    Backend, DType, Device, Element, Error, RawDevice, Result, Stream, VendorGemm, View, ViewMut, bf16, f16,
};
pub use kiln_core::{MatmulShape, MatrixLayout, Precision};
pub use rounded::{RoundedElement, choose_rounded, matmul_rounded};
pub use scaled::{Fp8Element, ScaledOutput, matmul_scaled};

use crate::launch::check_dtype;

/// CPU products of fewer multiply-adds than this run on one thread: below
/// it, handing blocks to the pool costs more than it saves (the packed
/// kernels of `cpu_gemm.rs` and `cpu_blocks.rs`).
const PARALLEL_FROM: usize = 1 << 18;

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
/// assert_eq!(MatmulStrategy::Vendor.to_string(), "vendor");
/// assert_eq!(MatmulStrategy::parse("cublas"), Some(MatmulStrategy::Vendor));
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
    /// The vendor library's GEMM, where the device offers one for the dtype
    /// ([`RawDevice::vendor_gemm`]: cuBLAS on CUDA); `Err(Unsupported)` elsewhere.
    Vendor,
}

impl MatmulStrategy {
    /// Every strategy.
    pub const ALL: [MatmulStrategy; 4] =
        [MatmulStrategy::Auto, MatmulStrategy::Tiled, MatmulStrategy::Naive, MatmulStrategy::Vendor];

    /// Lower-case name ("tiled").
    pub const fn name(self) -> &'static str {
        match self {
            MatmulStrategy::Auto => "auto",
            MatmulStrategy::Tiled => "tiled",
            MatmulStrategy::Naive => "naive",
            MatmulStrategy::Vendor => "vendor",
        }
    }

    /// The strategy named `name` (as [`name`](Self::name) writes it); "cublas"
    /// is also read as [`Vendor`](Self::Vendor), its name before vendor GEMMs
    /// became a backend capability.
    pub fn parse(name: &str) -> Option<MatmulStrategy> {
        match name {
            "cublas" => Some(MatmulStrategy::Vendor),
            _ => MatmulStrategy::ALL.into_iter().find(|s| s.name() == name),
        }
    }
}

impl std::fmt::Display for MatmulStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Products of at least this many flops go to the vendor library under
/// [`MatmulStrategy::Auto`]; smaller ones are launch-bound either way, and
/// kiln's kernel needs no library handle.
pub const AUTO_VENDOR_MIN_FLOPS: u64 = 1 << 20;

/// The strategy [`MatmulStrategy::Auto`] resolves to for a product of
/// `shape` on `dtype` on `device`: the vendor GEMM where the device offers
/// one for `dtype` ([`RawDevice::vendor_gemm`]) and the product has at least
/// [`AUTO_VENDOR_MIN_FLOPS`] flops; kiln's tiled kernel otherwise.
///
/// # Examples
/// ```
/// use kiln_core::{DType, Device};
/// use kiln_kernels::matmul::{choose, MatmulShape, MatmulStrategy};
/// let dev = Device::<kiln_cpu::Cpu>::open(0).unwrap();
/// assert_eq!(choose(&dev, DType::F32, MatmulShape::new(4096, 4096, 4096)), MatmulStrategy::Tiled);
/// ```
pub fn choose<B: Backend>(device: &Device<B>, dtype: DType, shape: MatmulShape) -> MatmulStrategy {
    auto(device.raw().vendor_gemm(), dtype, shape)
}

/// [`choose`] given what the device offers.
fn auto(vendor: Option<VendorGemm>, dtype: DType, shape: MatmulShape) -> MatmulStrategy {
    match accumulator(dtype) {
        Some(acc) => auto_into(vendor, dtype, acc, shape),
        None => MatmulStrategy::Tiled,
    }
}

/// What Auto picks for a product of `input` matrices into `output` given
/// what the device offers: the vendor GEMM where it multiplies `input`
/// into `output` and the product has at least [`AUTO_VENDOR_MIN_FLOPS`]
/// flops, kiln's tiled kernel otherwise.
fn auto_into(vendor: Option<VendorGemm>, input: DType, output: DType, shape: MatmulShape) -> MatmulStrategy {
    match vendor {
        Some(v) if v.supports(input, output) && shape.k > 0 && shape.flops() >= AUTO_VENDOR_MIN_FLOPS => {
            MatmulStrategy::Vendor
        }
        _ => MatmulStrategy::Tiled,
    }
}

/// The accumulator (and product) dtype of matmul on `input`, as
/// [`MatmulElement::Acc`] says; `None` for dtypes matmul does not take.
fn accumulator(input: DType) -> Option<DType> {
    match input {
        DType::F32 | DType::F16 | DType::BF16 => Some(DType::F32),
        DType::F64 => Some(DType::F64),
        DType::I32 | DType::U32 => Some(input),
        _ => None,
    }
}

/// `c = a . b` on `stream` with [`MatmulStrategy::Auto`]; returns the
/// strategy that ran. For each of `shape.batch` products, `a` is `m x k`,
/// `b` is `k x n` and `c` is `m x n`, row-major unless the shape says an
/// operand is stored transposed, laid out as the shape's [`MatrixLayout`]s
/// say; each view spans exactly its operand ([`MatmulShape::spans`]:
/// `m k`, `k n` and `m n` elements times the batch for dense operands),
/// else `Err(LengthMismatch)`. Elements of `c` outside its matrices (the
/// padding of a leading dimension or batch stride) are left as they are.
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
///
/// // Two products sharing b, the first factor read transposed: each a^T . b.
/// let a = s.upload(&[1.0f32, 2.0, 3.0, 4.0, /* second */ 0.0, 1.0, 1.0, 0.0])?;
/// let b = s.upload(&[1.0f32, 1.0, 0.0, 1.0])?;
/// let mut c = s.alloc::<f32>(8)?;
/// let shape = MatmulShape::new(2, 2, 2).batch(2).transpose_a().broadcast_b();
/// matmul(&s, &a, &b, &mut c, shape)?;
/// assert_eq!(c.to_vec()?, vec![1.0, 4.0, 2.0, 6.0, /* second */ 0.0, 1.0, 1.0, 1.0]);
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
/// dtype lacks (a vendor GEMM where the device offers none, or none for the
/// dtype, such as cuBLAS on integers) is `Err(Unsupported)`.
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
/// assert!(matmul_with(&s, MatmulStrategy::Vendor, &a, &b, &mut c, MatmulShape::new(1, 1, 2)).is_err());
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
    let what = format!("matmul {shape} on {}", T::DTYPE);
    check_operands(&shape, [a.view().len(), b.view().len(), c.view().len()], &what)?;
    check_dtype(stream, T::DTYPE, "matmul")?;
    let resolved = match strategy {
        MatmulStrategy::Auto => choose(stream.device(), T::DTYPE, shape),
        s => s,
    };
    if resolved == MatmulStrategy::Vendor {
        launch::offered::<B>(stream.device(), T::DTYPE, <T::Acc as Element>::DTYPE, &what)?;
        if shape.k > 0 && !shape.is_empty() {
            stream.vendor_gemm(a, b, c, &shape)?;
            return Ok(resolved);
        }
    }
    if shape.is_empty() {
        return Ok(resolved);
    }
    // An empty sum (k = 0) too: every kernel writes zeros into c's elements and nowhere else.
    launch::own(stream, resolved == MatmulStrategy::Naive, a, b, c, shape, &what)?;
    Ok(resolved)
}

/// `Err` unless `shape`'s layouts are well formed and the operands' views
/// (`lengths` of a, b and c) span them exactly; the spans otherwise.
fn check_operands(shape: &MatmulShape, lengths: [usize; 3], what: &str) -> Result<[usize; 3]> {
    shape.check_layouts().map_err(|reason| Error::invalid(what, reason))?;
    let spans = shape.spans().ok_or_else(|| Error::invalid(what, "an operand overflows the address space"))?;
    for ((name, expected), actual) in ["a", "b", "c"].into_iter().zip(spans).zip(lengths) {
        if expected != actual {
            return Err(Error::LengthMismatch { what: format!("{what}: {name}"), expected, actual });
        }
    }
    Ok(spans)
}

#[cfg(test)]
mod tests {
    use kiln_core::{BackendKind, Device, Error};
    use kiln_cpu::Cpu;

    use super::*;

    /// Auto's choice from what a device offers: the vendor GEMM for large
    /// products of a dtype it multiplies into matmul's accumulator type.
    #[test]
    fn auto_picks_an_offered_vendor_gemm_for_large_products() {
        let blas = VendorGemm {
            name: "demo",
            products: &[(DType::F32, DType::F32), (DType::F16, DType::F32)],
            faster: &[Precision::Tf32],
            scaled: &[],
        };
        let big = MatmulShape::new(128, 64, 64);
        assert!(big.flops() >= AUTO_VENDOR_MIN_FLOPS);
        assert_eq!(auto(Some(blas), DType::F32, big), MatmulStrategy::Vendor);
        assert_eq!(auto(Some(blas), DType::F16, big), MatmulStrategy::Vendor);
        assert_eq!(auto(None, DType::F32, big), MatmulStrategy::Tiled);
        assert_eq!(auto(Some(blas), DType::I32, big), MatmulStrategy::Tiled);
        assert_eq!(auto(Some(blas), DType::F64, big), MatmulStrategy::Tiled);
        assert_eq!(auto(Some(blas), DType::F32, MatmulShape::new(4, 4, 4)), MatmulStrategy::Tiled);
        assert_eq!(auto(Some(blas), DType::F32, MatmulShape::new(1024, 1024, 0)), MatmulStrategy::Tiled);
        // f16 matmul accumulates into f32: an f16-into-f16 product does not serve it.
        let half_out = VendorGemm { name: "demo", products: &[(DType::F16, DType::F16)], faster: &[], scaled: &[] };
        assert_eq!(auto(Some(half_out), DType::F16, big), MatmulStrategy::Tiled);
        // f64 goes to a vendor that multiplies it (cuBLAS's DGEMM, not kiln's slower kernel).
        let double = VendorGemm { name: "demo", products: &[(DType::F64, DType::F64)], faster: &[], scaled: &[] };
        assert_eq!(auto(Some(double), DType::F64, big), MatmulStrategy::Vendor);
        // A batch counts all its products' flops.
        let small = MatmulShape::new(32, 32, 32);
        assert_eq!(auto(Some(blas), DType::F32, small), MatmulStrategy::Tiled);
        assert_eq!(auto(Some(blas), DType::F32, small.batch(64)), MatmulStrategy::Vendor);
    }

    #[test]
    fn accumulator_dtypes_are_matmul_elements_acc() {
        fn acc<T: MatmulElement>() {
            assert_eq!(accumulator(T::DTYPE), Some(<T::Acc as Element>::DTYPE), "{}", T::DTYPE);
        }
        acc::<f32>();
        acc::<f64>();
        acc::<f16>();
        acc::<bf16>();
        acc::<i32>();
        acc::<u32>();
        assert_eq!(accumulator(DType::U8), None);
    }

    /// The CPU offers no vendor GEMM: Auto never picks one, and asking for
    /// one is a clear `Unsupported`, whatever the shape.
    #[test]
    fn vendor_on_the_cpu_is_unsupported_and_auto_does_not_pick_it() {
        let dev = Device::<Cpu>::open(0).unwrap();
        assert!(dev.raw().vendor_gemm().is_none());
        let s = dev.stream();
        let big = MatmulShape::new(128, 64, 64);
        assert_eq!(choose(&dev, DType::F32, big), MatmulStrategy::Tiled);
        let a = s.upload(&vec![1.0f32; 128 * 64]).unwrap();
        let b = s.upload(&vec![1.0f32; 64 * 64]).unwrap();
        let mut c = s.alloc::<f32>(128 * 64).unwrap();
        assert_eq!(matmul(&s, &a, &b, &mut c, big).unwrap(), MatmulStrategy::Tiled);
        assert_eq!(c.to_vec().unwrap(), vec![64.0; 128 * 64]);

        for shape in [big, MatmulShape::new(128, 64, 0), MatmulShape::new(0, 64, 64)] {
            let (a, b) = (s.alloc::<f32>(shape.m * shape.k).unwrap(), s.alloc::<f32>(shape.k * shape.n).unwrap());
            let mut c = s.alloc::<f32>(shape.m * shape.n).unwrap();
            let err = matmul_with(&s, MatmulStrategy::Vendor, &a, &b, &mut c, shape).unwrap_err();
            assert!(matches!(err, Error::Unsupported { backend: BackendKind::Cpu, .. }), "{shape}: {err}");
            let text = err.to_string();
            assert!(text.contains("strategy vendor") && text.contains("offers no vendor GEMM"), "{text}");
        }
    }

    #[test]
    fn strategy_names_round_trip() {
        for s in MatmulStrategy::ALL {
            assert_eq!(MatmulStrategy::parse(s.name()), Some(s));
        }
        assert_eq!(MatmulStrategy::parse("cublas"), Some(MatmulStrategy::Vendor));
        assert_eq!(MatmulStrategy::parse("blas"), None);
    }
}
