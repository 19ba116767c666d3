//! map: a unary operation applied to every element (`y = x * x`, CuPy's
//! `ElementwiseKernel` with one input).

mod cpu;

use kiln_core::{Args, Backend, DType, Error, HostFn, Program, Result, Stream, View, ViewMut};

use crate::Number;
use crate::code::Code;
use crate::launch::{Access, cuda_source, elementwise_config, host_fn, index_width, program, wgsl_source};
use crate::widen::{as_bits, check_widened, narrow, widen};

/// A unary operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MapOp {
    /// `x * x` (wrapping for integers).
    Square,
    /// `|x|` (wrapping at `i32::MIN`; the identity on `u32`).
    Abs,
    /// `-x` (wrapping for integers).
    Negate,
    /// `sqrt(x)`; floats only (NaN for negative inputs).
    Sqrt,
}

crate::code::codes!(MapOp, "map", "operation");

impl MapOp {
    /// Every operation.
    pub const ALL: [MapOp; 4] = [MapOp::Square, MapOp::Abs, MapOp::Negate, MapOp::Sqrt];

    /// Lower-case name ("square").
    pub const fn name(self) -> &'static str {
        match self {
            MapOp::Square => "square",
            MapOp::Abs => "abs",
            MapOp::Negate => "negate",
            MapOp::Sqrt => "sqrt",
        }
    }

    /// The WGSL expression of this operation on `v: T`.
    fn wgsl(self, dtype: DType) -> &'static str {
        match (self, dtype) {
            (MapOp::Square, _) => "v * v",
            (MapOp::Abs, _) => "abs(v)",
            (MapOp::Negate, DType::U32) => "0u - v",
            (MapOp::Negate, _) => "-v",
            (MapOp::Sqrt, _) => "sqrt(v)",
        }
    }

    /// The host function for `T`, chosen at compile time so each is a plain fn pointer.
    fn host<T: Number>(self, in_place: bool) -> HostFn {
        match (self, in_place) {
            (MapOp::Square, false) => host_fn!(cpu::map::<T, 0>),
            (MapOp::Abs, false) => host_fn!(cpu::map::<T, 1>),
            (MapOp::Negate, false) => host_fn!(cpu::map::<T, 2>),
            (MapOp::Sqrt, false) => host_fn!(cpu::map::<T, 3>),
            (MapOp::Square, true) => host_fn!(cpu::map_in_place::<T, 0>),
            (MapOp::Abs, true) => host_fn!(cpu::map_in_place::<T, 1>),
            (MapOp::Negate, true) => host_fn!(cpu::map_in_place::<T, 2>),
            (MapOp::Sqrt, true) => host_fn!(cpu::map_in_place::<T, 3>),
        }
    }
}

impl std::fmt::Display for MapOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

fn check<B: Backend, T: Number>(stream: &Stream<B>, op: MapOp) -> Result<()> {
    if op == MapOp::Sqrt && !T::IS_FLOAT {
        return Err(Error::unsupported(
            B::KIND,
            format!("map {op} on {}", T::DTYPE),
            "sqrt is defined for floats only",
        ));
    }
    check_widened(stream, T::DTYPE, &format!("map {op}"))
}

fn map_program<T: Number>(op: MapOp, in_place: bool) -> std::sync::Arc<Program> {
    let name = format!("kiln_map_{op}_{}{}", T::DTYPE, if in_place { "_inplace" } else { "" });
    program(&name, || {
        let buffers: &[(&str, Access)] = if in_place {
            &[("map_out", Access::ReadWrite)]
        } else {
            &[("map_in", Access::Read), ("map_out", Access::ReadWrite)]
        };
        let mut p = Program::new(&name)
            .cuda(cuda_source(T::DTYPE, include_str!("kernel.cu")))
            .wgsl(wgsl_source(T::DTYPE, buffers, include_str!("kernel.wgsl")))
            .host(op.host::<T>(in_place))
            .define("KERNEL", &name)
            .define("OP", op.code())
            .define("APPLY", op.wgsl(T::DTYPE));
        if in_place {
            // One binding serves as input and output: WGSL's `map_in` becomes `map_out`.
            p = p.define("IN_PLACE", 1).define("map_in", "map_out");
        }
        p
    })
}

/// `y[i] = op(x[i])`, on `stream`; `x` and `y` must have the same length.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::map::{map, MapOp};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[-2.0f32, 3.0])?;
/// let mut y = s.alloc::<f32>(2)?;
/// map(&s, MapOp::Square, &x, &mut y)?;
/// assert_eq!(y.to_vec()?, vec![4.0, 9.0]);
/// # Ok(()) }
/// ```
pub fn map<B: Backend, T: Number>(
    stream: &Stream<B>,
    op: MapOp,
    x: &impl View<B, T>,
    y: &mut impl ViewMut<B, T>,
) -> Result<()> {
    let n = x.view().len();
    if y.view().len() != n {
        return Err(Error::LengthMismatch {
            what: format!("map {op}: output y vs input x"),
            expected: n,
            actual: y.view().len(),
        });
    }
    check::<B, T>(stream, op)?;
    if n == 0 {
        return Ok(());
    }
    if as_bits::<B>(T::DTYPE) {
        // No kernel type for T: computed in f32, each result rounded once.
        let mut wide = widen(stream, x.view())?;
        map_in_place(stream, op, &mut wide)?;
        return narrow(stream, wide.view(), y.view_mut());
    }
    let prog = map_program::<T>(op, false);
    let kernel = stream.device().kernel(&prog)?;
    let cfg = elementwise_config::<B, T>(stream.device(), n, &[x.view().offset(), y.view().offset()]);
    let args = Args::new().arg(x.view()).arg(y.view_mut()).length(index_width(stream), n, prog.name())?;
    // SAFETY: the kernel reads x[0..n) and writes y[0..n), the lengths of both.
    unsafe { stream.launch(&kernel, cfg, args) }
}

/// `x[i] = op(x[i])`, on `stream`.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::map::{map_in_place, MapOp};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let mut x = s.upload(&[-2i32, 3])?;
/// map_in_place(&s, MapOp::Negate, &mut x)?;
/// assert_eq!(x.to_vec()?, vec![2, -3]);
/// # Ok(()) }
/// ```
pub fn map_in_place<B: Backend, T: Number>(stream: &Stream<B>, op: MapOp, x: &mut impl ViewMut<B, T>) -> Result<()> {
    let n = x.view().len();
    check::<B, T>(stream, op)?;
    if n == 0 {
        return Ok(());
    }
    if as_bits::<B>(T::DTYPE) {
        let mut wide = widen(stream, x.view())?;
        map_in_place(stream, op, &mut wide)?;
        return narrow(stream, wide.view(), x.view_mut());
    }
    let prog = map_program::<T>(op, true);
    let kernel = stream.device().kernel(&prog)?;
    let cfg = elementwise_config::<B, T>(stream.device(), n, &[x.view().offset()]);
    let args = Args::new().arg(x.view_mut()).length(index_width(stream), n, prog.name())?;
    // SAFETY: the kernel reads and writes x[0..n), x's length.
    unsafe { stream.launch(&kernel, cfg, args) }
}
