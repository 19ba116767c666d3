//! Arrays made on the device: filled, counted, spaced, and the identity.

use std::sync::OnceLock;

use kiln_core::{Args, Backend, DType, Element, Error, Result, Stream};

use super::Array;
use crate::Number;
use crate::expr::{Ty, index, select, var};
use crate::user::{Elementwise, ElementwiseKernel};

/// `v` as f64 (a complex value's real part), for counting `arange`'s elements.
fn wide<T: Element>(v: T) -> f64 {
    let mut bits = [0u8; 8];
    let size = size_of::<T>().min(8);
    bits[..size].copy_from_slice(&bytemuck::bytes_of(&v)[..size]);
    let b = u64::from_le_bytes(bits);
    match T::DTYPE {
        DType::F32 | DType::C64 => f64::from(f32::from_bits(b as u32)),
        DType::F64 | DType::C128 => f64::from_bits(b),
        DType::I32 => f64::from(b as u32 as i32),
        DType::U32 => f64::from(b as u32),
        DType::I64 => b as i64 as f64,
        DType::U64 => b as f64,
        DType::U8 => f64::from(b as u8),
        DType::F16 => f64::from(half::f16::from_bits(b as u16)),
        DType::BF16 => f64::from(half::bf16::from_bits(b as u16)),
        DType::F8E4M3 => kiln_core::F8E4M3::from_bits(b as u8).to_f64(),
        DType::F8E5M2 => kiln_core::F8E5M2::from_bits(b as u8).to_f64(),
    }
}

/// `z[i] = one` on the diagonal (every `m`-th element), `zero` elsewhere.
fn eye_kernel() -> Result<&'static ElementwiseKernel> {
    static K: OnceLock<Result<ElementwiseKernel>> = OnceLock::new();
    let t = Ty::param("T");
    K.get_or_init(|| {
        Elementwise::new("kiln_array_eye")
            .scalar("m", DType::U32)
            .scalar("one", t.clone())
            .scalar("zero", t.clone())
            .output("z", t)
            .set("z", select((index() % var("m")).eq(0u32), var("one"), var("zero")))
            .build()
    })
    .as_ref()
    .map_err(Clone::clone)
}

impl<B: Backend, T: Element> Array<B, T> {
    /// An array of `shape` with every element `value`.
    pub fn full(stream: &Stream<B>, shape: &[usize], value: T) -> Result<Self> {
        let mut b = stream.alloc::<T>(super::layout::checked_len(shape, "Array::full")?)?;
        stream.fill(&mut b, value)?;
        Self::from_buffer(b, shape)
    }
}

impl<B: Backend, T: Number> Array<B, T> {
    /// An array of `shape` of zeros.
    pub fn zeros(stream: &Stream<B>, shape: &[usize]) -> Result<Self> {
        Self::full(stream, shape, T::from_index(0))
    }

    /// An array of `shape` of ones.
    pub fn ones(stream: &Stream<B>, shape: &[usize]) -> Result<Self> {
        Self::full(stream, shape, T::from_index(1))
    }

    /// `start, start + step, ...` while below `stop` (above, for a negative
    /// step): NumPy's `arange`, `ceil((stop - start) / step)` elements,
    /// element `i` being `start + i * step` rounded once per operation.
    /// `Err` for a zero or NaN step.
    pub fn arange(stream: &Stream<B>, start: T, stop: T, step: T) -> Result<Self> {
        let (a, b, d) = (wide(start), wide(stop), wide(step));
        let count = ((b - a) / d).ceil();
        if d == 0.0 || !count.is_finite() && !count.is_nan() || d.is_nan() {
            return Err(Error::invalid("Array::arange", format!("the step {d} counts no elements from {a} to {b}")));
        }
        let n = if count > 0.0 { count as usize } else { 0 };
        let mut buf = stream.alloc::<T>(n)?;
        crate::fill::sequence(stream, &mut buf, start, step)?;
        Self::from_buffer(buf, &[n])
    }

    /// `num` evenly spaced values from `start` to `stop`, both included
    /// (NumPy's `linspace`): `start + i * step` with `step = (stop - start)
    /// / (num - 1)`, the last element exactly `stop`.
    pub fn linspace(stream: &Stream<B>, start: T, stop: T, num: usize) -> Result<Self> {
        let mut buf = stream.alloc::<T>(num)?;
        let step = if num > 1 { stop.sub(start).div(T::from_index(num as u64 - 1)) } else { T::from_index(0) };
        crate::fill::sequence(stream, &mut buf, start, step)?;
        if num > 1 {
            buf.slice_mut(num - 1..num)?.fill(stop)?;
        }
        Self::from_buffer(buf, &[num])
    }

    /// The `n x n` identity matrix.
    pub fn eye(stream: &Stream<B>, n: usize) -> Result<Self> {
        let len = n.checked_mul(n).ok_or_else(|| Error::invalid("Array::eye", format!("{n} x {n} overflows")))?;
        let mut buf = stream.alloc::<T>(len)?;
        if len > 0 {
            let m = u32::try_from(n + 1)
                .map_err(|_| Error::invalid("Array::eye", format!("{n} rows are past the u32 index of a kernel")))?;
            let args = Args::new().scalar(m).scalar(T::from_index(1)).scalar(T::from_index(0)).arg(&mut buf);
            eye_kernel()?.launch(stream, args)?;
        }
        Self::from_buffer(buf, &[n, n])
    }
}
