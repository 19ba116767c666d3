//! fill and sequence (iota).

mod cpu;

use kiln_core::{Args, Backend, Element, Program, Result, Stream, ViewMut};

use crate::launch::{check_dtype, cuda_source, elementwise_config, index_width, program, wgsl_source, Access};
use crate::Number;

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
/// Integers wrap; for floats `i` is first converted to `T` and the product
/// and sum are rounded separately (never fused), so every backend agrees.
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
            .wgsl(wgsl_source(T::DTYPE, &[("dst", Access::ReadWrite)], include_str!("kernel.wgsl")))
            .host(cpu::sequence::<T>)
            .define("KERNEL", &name)
    });
    let kernel = stream.device().kernel(&prog)?;
    let cfg = elementwise_config::<B, T>(stream.device(), n, &[dst.view().offset()]);
    let args = Args::new().arg(dst.view_mut()).scalar(start).scalar(step).length(index_width(stream), n, &name)?;
    // SAFETY: the kernel writes dst[0..n) only, n being dst's length.
    unsafe { stream.launch(&kernel, cfg, args) }
}
