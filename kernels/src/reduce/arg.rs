//! argmin and argmax: the position of the extreme element.
//!
//! The order the kernels fold in does not matter: "comes before" is a total
//! order on (value, index) pairs (a NaN before any number, then the smaller
//! or larger value, then the smaller index), so every backend and grid picks
//! the same element: the first NaN if there is one, else the first index of
//! the extreme value.

use std::sync::Arc;

use kiln_core::{
    Args, Backend, BufferView, BufferViewMut, Error, Kernel, LaunchConfig, Program, Result, Stream, View, ViewMut,
};
use rayon::prelude::*;

use super::{check_out_len, check_reducible, cpu::extreme, first_pass_blocks, is_nan, reduce_cuda, wgsl_is_nan};
use crate::Number;
use crate::launch::{BLOCK, host_fn, index_width, program, wgsl_preamble};
use crate::widen::{check_widened, is_half};

/// Which extreme an arg-reduction looks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ArgOp {
    /// The position of the smallest element.
    ArgMin,
    /// The position of the largest element.
    ArgMax,
}

impl ArgOp {
    /// Both operations.
    pub const ALL: [ArgOp; 2] = [ArgOp::ArgMin, ArgOp::ArgMax];

    /// Lower-case name ("argmin").
    pub const fn name(self) -> &'static str {
        match self {
            ArgOp::ArgMin => "argmin",
            ArgOp::ArgMax => "argmax",
        }
    }

    /// Whether `(a, ia)` comes before `(b, ib)`: NaN first, then the extreme
    /// value, then the smaller index.
    ///
    /// # Examples
    /// ```
    /// use kiln_kernels::reduce::ArgOp;
    /// assert!(ArgOp::ArgMin.before(1.0f32, 5, 2.0, 0));
    /// assert!(ArgOp::ArgMin.before(f32::NAN, 9, f32::NEG_INFINITY, 0));
    /// assert!(ArgOp::ArgMax.before(3, 1, 3, 2));          // ties: the smaller index
    /// ```
    pub fn before<T: Number>(self, a: T, ia: u64, b: T, ib: u64) -> bool {
        let (an, bn) = (is_nan(a), is_nan(b));
        if an || bn {
            return an && (!bn || ia < ib);
        }
        match self {
            ArgOp::ArgMin if a < b => true,
            ArgOp::ArgMax if a > b => true,
            _ if a == b => ia < ib,
            _ => false,
        }
    }

    /// The value no element comes after: +inf (or MAX) for argmin.
    fn sentinel<T: Number>(self) -> T {
        extreme::<T>(self == ArgOp::ArgMin)
    }

    fn code(self) -> u8 {
        self as u8
    }
}

impl std::fmt::Display for ArgOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

fn arg_program<T: Number>(op: ArgOp, finish: bool) -> Arc<Program> {
    let name = format!("kiln_{op}_{}{}", T::DTYPE, if finish { "_finish" } else { "" });
    program(&name, || {
        // Indices are u64 in the ABI; WGSL writes them as two u32 words (its
        // buffers never exceed 2^32 elements, so the high word is 0).
        let mut buffers = vec![("src", "T", false)];
        if finish {
            buffers.push(("src_idx", "u32", false));
        }
        buffers.extend([("dst", "T", true), ("dst_idx", "u32", true)]);
        let wgsl =
            format!("{}{}{}", wgsl_preamble(T::DTYPE, &buffers), wgsl_is_nan(T::DTYPE), include_str!("arg.wgsl"));
        let host: kiln_core::HostFn = match (op, finish) {
            (ArgOp::ArgMin, false) => host_fn!(first_pass::<T, 0>),
            (ArgOp::ArgMax, false) => host_fn!(first_pass::<T, 1>),
            (ArgOp::ArgMin, true) => host_fn!(finish_pass::<T, 0>),
            (ArgOp::ArgMax, true) => host_fn!(finish_pass::<T, 1>),
        };
        Program::new(&name)
            .cuda(reduce_cuda(T::DTYPE))
            .wgsl(wgsl)
            .host(host)
            .define("KERNEL", &name)
            .define("MODE", if finish { 3 } else { 2 })
            .define("OP", 0)
            .define("ARG", op.code())
            .define("BETTER", if op == ArgOp::ArgMin { "a < b" } else { "a > b" })
            .define("INDEX", if finish { "src_idx[2u * i]" } else { "i" })
    })
}

/// The position and value of the extreme element of `x` (see [`ArgOp`]),
/// left on the device in `index` and `value` (views of one element each);
/// returns at once. An empty `x` is `Err(InvalidArgument)`.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::reduce::{arg_reduce_into, ArgOp};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[4i32, -7, 9, -7])?;
/// let (mut index, mut value) = (s.alloc::<u64>(1)?, s.alloc::<i32>(1)?);
/// arg_reduce_into(&s, ArgOp::ArgMin, &x, &mut index, &mut value)?;
/// assert_eq!((index.to_vec()?, value.to_vec()?), (vec![1], vec![-7]));
/// # Ok(()) }
/// ```
pub fn arg_reduce_into<B: Backend, T: Number>(
    stream: &Stream<B>,
    op: ArgOp,
    x: &impl View<B, T>,
    index: &mut impl ViewMut<B, u64>,
    value: &mut impl ViewMut<B, T>,
) -> Result<()> {
    check_reducible::<B, T>(op.name())?;
    let x = x.view();
    let n = x.len();
    check_out_len(&format!("{op} index"), index.view().len())?;
    check_out_len(&format!("{op} value"), value.view().len())?;
    if n == 0 {
        return Err(Error::invalid(op.name(), "an empty array has no extreme element"));
    }
    check_widened(stream, T::DTYPE, op.name())?;
    if is_half(T::DTYPE) {
        return super::half::arg_into(stream, op, x, index.view_mut(), value.view_mut());
    }
    let first = stream.device().kernel(&arg_program::<T>(op, false))?;
    let sentinel = op.sentinel::<T>();
    match first_pass_blocks(stream.device(), n, T::DTYPE) {
        1 => launch_first(stream, &first, x, value.view_mut(), index.view_mut(), sentinel),
        blocks => {
            let mut part_val = stream.alloc::<T>(blocks)?;
            let mut part_idx = stream.alloc::<u64>(blocks)?;
            launch_first(stream, &first, x, part_val.view_mut(), part_idx.view_mut(), sentinel)?;
            let finish = stream.device().kernel(&arg_program::<T>(op, true))?;
            let args = Args::new()
                .arg(part_val.view())
                .arg(part_idx.view())
                .arg(value.view_mut())
                .arg(index.view_mut())
                .scalar(sentinel);
            let args = args.length(index_width(stream), blocks, finish.name())?;
            // SAFETY: one block reads the `blocks` partials (both arrays hold
            // that many) and writes element 0 of `value` and `index`.
            unsafe { stream.launch(&finish, LaunchConfig::new(1, BLOCK), args) }
        }
    }
}

fn launch_first<B: Backend, T: Number>(
    stream: &Stream<B>,
    kernel: &Kernel<B>,
    x: BufferView<'_, B, T>,
    value: BufferViewMut<'_, B, T>,
    index: BufferViewMut<'_, B, u64>,
    sentinel: T,
) -> Result<()> {
    let (n, blocks) = (x.len(), value.len().min(index.len()));
    let args =
        Args::new().arg(x).arg(value).arg(index).scalar(sentinel).length(index_width(stream), n, kernel.name())?;
    // SAFETY: the kernel reads x[0..n) and writes element b of `value` and
    // `index` for each block b < blocks, both holding at least `blocks` elements.
    unsafe { stream.launch(kernel, LaunchConfig::new(blocks as u32, BLOCK), args) }
}

fn arg_reduce<B: Backend, T: Number>(stream: &Stream<B>, op: ArgOp, x: &impl View<B, T>) -> Result<(usize, T)> {
    let (mut index, mut value) = (stream.alloc::<u64>(1)?, stream.alloc::<T>(1)?);
    arg_reduce_into(stream, op, x, &mut index, &mut value)?;
    let (mut i, mut v) = ([0u64], [T::default()]);
    stream.copy_to_host(&index, &mut i)?;
    stream.copy_to_host(&value, &mut v)?;
    let at = usize::try_from(i[0])
        .map_err(|_| Error::invalid(op.name(), format!("index {} does not fit this host's usize", i[0])))?;
    Ok((at, v[0]))
}

/// The index and value of the smallest element of `x` (the first NaN if
/// there is one; the first of equal minima), computed on `stream`; blocks
/// until the result is on the host. An empty `x` is `Err(InvalidArgument)`.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[2.0f32, 0.5, 7.0, 0.5])?;
/// assert_eq!(kiln_kernels::reduce::argmin(&s, &x)?, (1, 0.5));
/// let (i, v) = kiln_kernels::reduce::argmin(&s, &s.upload(&[1.0f32, f32::NAN, f32::NAN])?)?;
/// assert!(i == 1 && v.is_nan());
/// # Ok(()) }
/// ```
pub fn argmin<B: Backend, T: Number>(stream: &Stream<B>, x: &impl View<B, T>) -> Result<(usize, T)> {
    arg_reduce(stream, ArgOp::ArgMin, x)
}

/// The index and value of the largest element of `x` (the first NaN if
/// there is one; the first of equal maxima), computed on `stream`; blocks
/// until the result is on the host. An empty `x` is `Err(InvalidArgument)`.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// assert_eq!(kiln_kernels::reduce::argmax(&s, &s.upload(&[3u32, 9, 9, 1])?)?, (1, 9));
/// assert!(kiln_kernels::reduce::argmax(&s, &s.alloc::<u32>(0)?).is_err());
/// # Ok(()) }
/// ```
pub fn argmax<B: Backend, T: Number>(stream: &Stream<B>, x: &impl View<B, T>) -> Result<(usize, T)> {
    arg_reduce(stream, ArgOp::ArgMax, x)
}

fn op_of(code: u8) -> ArgOp {
    if code == 0 { ArgOp::ArgMin } else { ArgOp::ArgMax }
}

/// The first of `pairs` in `op`'s order, or `None` when there are none.
fn best<T: Number>(op: ArgOp, pairs: impl ParallelIterator<Item = (T, u64)>) -> Option<(T, u64)> {
    pairs.reduce_with(|a, b| if op.before(b.0, b.1, a.0, a.1) { b } else { a })
}

/// Write `found` (or the sentinel) to partial 0 and the sentinel to the rest.
fn put<T: Number>(op: ArgOp, found: Option<(T, u64)>, values: &mut [T], indices: &mut [u64]) -> Result<()> {
    let sentinel = op.sentinel::<T>();
    let (v, i) = found.unwrap_or((sentinel, u64::MAX));
    values.fill(sentinel);
    if let Some(first) = values.first_mut() {
        *first = v;
    }
    indices.fill(u64::MAX);
    if let Some(first) = indices.first_mut() {
        *first = i;
    }
    Ok(())
}

/// Pass 1 on the CPU.
fn first_pass<T: Number, const OP: u8>(
    x: &[T],
    value: &mut [T],
    index: &mut [u64],
    _sentinel: T,
    _n: u64,
) -> Result<()> {
    let op = op_of(OP);
    let found = best(op, x.par_iter().with_min_len(1 << 14).enumerate().map(|(i, &v)| (v, i as u64)));
    put(op, found, value, index)
}

/// Pass 2 on the CPU: the best of the partials `vals` and `idxs`.
fn finish_pass<T: Number, const OP: u8>(
    vals: &[T],
    idxs: &[u64],
    value: &mut [T],
    index: &mut [u64],
    _sentinel: T,
    _n: u64,
) -> Result<()> {
    let op = op_of(OP);
    let found = best(op, vals.par_iter().copied().zip(idxs.par_iter().copied()));
    put(op, found, value, index)
}
