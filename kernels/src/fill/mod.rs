//! fill and sequence (iota).

mod cpu;

use kiln_core::{Args, Backend, DType, Element, Program, Result, Stream, ViewMut};

use crate::Number;
use crate::launch::{Access, check_dtype, cuda_source, elementwise_config, host_fn, index_width, program, wgsl_source};

/// Set every element of `dst` to `value`, on `stream`; any element type.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let mut b = s.alloc::<u8>(5)?;
/// kiln_kernels::fill::fill(&s, &mut b, 7)?;
/// assert_eq!(b.to_vec()?, vec![7; 5]);
/// # Ok(()) }
/// ```
pub fn fill<B: Backend, T: Element>(stream: &Stream<B>, dst: &mut impl ViewMut<B, T>, value: T) -> Result<()> {
    stream.fill(dst, value)
}

/// `dst[i] = start + i * step`, on `stream` (NumPy's `arange`, Thrust's `sequence`).
///
/// Integers wrap; for floats `i` is first converted to `T` (rounded to
/// nearest) and the product and sum are rounded separately (never fused),
/// so every backend gives the same bits.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let mut b = s.alloc::<f32>(4)?;
/// kiln_kernels::fill::sequence(&s, &mut b, 1.0, 0.5)?;
/// assert_eq!(b.to_vec()?, vec![1.0, 1.5, 2.0, 2.5]);
/// # Ok(()) }
/// ```
pub fn sequence<B: Backend, T: Number>(
    stream: &Stream<B>,
    dst: &mut impl ViewMut<B, T>,
    start: T,
    step: T,
) -> Result<()> {
    let n = dst.view().len();
    if n == 0 {
        return Ok(());
    }
    check_dtype(stream, T::DTYPE, "sequence")?;
    let name = format!("kiln_sequence_{}", T::DTYPE);
    let prog = program(&name, || {
        Program::new(&name)
            .cuda(cuda_source(T::DTYPE, include_str!("kernel.cu")))
            .wgsl(wgsl_source(
                T::DTYPE,
                &[("dst", Access::ReadWrite)],
                &format!("{}{}", wgsl_product(T::DTYPE), include_str!("kernel.wgsl")),
            ))
            .host(host_fn!(cpu::sequence::<T>))
            .define("KERNEL", &name)
    });
    let kernel = stream.device().kernel(&prog)?;
    let cfg = elementwise_config::<B, T>(stream.device(), n, &[dst.view().offset()]);
    let args = Args::new().arg(dst.view_mut()).scalar(start).scalar(step).length(index_width(stream), n, &name)?;
    // SAFETY: the kernel writes dst[0..n) only, n being dst's length.
    unsafe { stream.launch(&kernel, cfg, args) }
}

/// WGSL's `kiln_product(a, b, zero, zero2)`: `a * b` rounded to `T` on its
/// own, whatever the compiler. `zero` and `zero2` are run-time zeros the
/// compiler cannot prove equal: an f32 product's bits are XORed with one,
/// other floats go through private memory (stored at one index, loaded from
/// the other), integers need nothing.
fn wgsl_product(dtype: DType) -> &'static str {
    match dtype {
        DType::F32 => {
            "fn kiln_product(a: T, b: T, zero: u32, zero2: u32) -> T { return bitcast<f32>(bitcast<u32>(a * b) ^ zero); }\n"
        }
        DType::F16 | DType::F64 => {
            "var<private> kiln_scratch: array<T, 2>;\n\
             fn kiln_product(a: T, b: T, zero: u32, zero2: u32) -> T { kiln_scratch[zero] = a * b; return kiln_scratch[zero2]; }\n"
        }
        _ => "fn kiln_product(a: T, b: T, zero: u32, zero2: u32) -> T { return a * b; }\n",
    }
}
