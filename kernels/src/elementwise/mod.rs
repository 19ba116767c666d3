//! Elementwise binary operations (`c = a + b`, the seed's vector add) and
//! axpy (`z = alpha * x + y`), out of place and in place.

mod cpu;

use std::sync::Arc;

use kiln_core::{Args, Backend, DType, Error, HostFn, Program, Result, Stream, View, ViewMut};

use crate::Number;
use crate::launch::{
    Access, WGSL_ROUND_F16, cuda_source, elementwise_config, host_fn, index_width, program, wgsl_source,
};
use crate::widen::{as_bits, check_widened, narrow, to_f32, widen};

/// A binary operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `a + b` (wrapping for integers).
    Add,
    /// `a - b` (wrapping for integers).
    Sub,
    /// `a * b` (wrapping for integers).
    Mul,
    /// `a / b`; for integers `a` when `b == 0` or the quotient overflows.
    Div,
}

crate::code::codes!(BinaryOp, "binary operation", "operation");

impl BinaryOp {
    /// Every operation.
    pub const ALL: [BinaryOp; 4] = [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div];

    /// Lower-case name ("add").
    pub const fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
        }
    }

    fn wgsl(self, dtype: DType) -> &'static str {
        // WGSL's integer division already gives `a` for b == 0 and for MIN / -1.
        // Vulkan bounds f32 division (2.5 ulp) only for divisors within
        // [2^-126, 2^126]; NVIDIA's driver computes a * (1 / b), which
        // flushes to zero past 2^126. Scaling both operands by 1/4 there is
        // exact and brings the divisor into range.
        match (self, dtype) {
            (BinaryOp::Add, _) => "a + b",
            (BinaryOp::Sub, _) => "a - b",
            (BinaryOp::Mul, _) => "a * b",
            (BinaryOp::Div, DType::F32) => "select(a / b, (a * 0.25) / (b * 0.25), abs(b) > 8.507059e37)",
            // f16 in f32, rounded once on the bits (`kiln_round_f16`): the
            // driver's f16 division, a * (1 / b), overflows for |b| < 2^-16.
            (BinaryOp::Div, DType::F16) => "f16(kiln_round_f16(f32(a) / f32(b)))",
            (BinaryOp::Div, _) => "a / b",
        }
    }

    fn host<T: Number>(self, in_place: bool) -> HostFn {
        match (self, in_place) {
            (BinaryOp::Add, false) => host_fn!(cpu::binary::<T, 0>),
            (BinaryOp::Sub, false) => host_fn!(cpu::binary::<T, 1>),
            (BinaryOp::Mul, false) => host_fn!(cpu::binary::<T, 2>),
            (BinaryOp::Div, false) => host_fn!(cpu::binary::<T, 3>),
            (BinaryOp::Add, true) => host_fn!(cpu::binary_in_place::<T, 0>),
            (BinaryOp::Sub, true) => host_fn!(cpu::binary_in_place::<T, 1>),
            (BinaryOp::Mul, true) => host_fn!(cpu::binary_in_place::<T, 2>),
            (BinaryOp::Div, true) => host_fn!(cpu::binary_in_place::<T, 3>),
        }
    }
}

impl std::fmt::Display for BinaryOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How one elementwise kernel is assembled: op code, WGSL pieces, host fn.
struct Spec {
    name: String,
    code: u8,
    combine: &'static str,
    fields: &'static str,
    buffers: &'static [(&'static str, Access)],
    alias: Option<(&'static str, &'static str)>,
    host: HostFn,
    in_place: bool,
}

fn build(spec: Spec, dtype: DType) -> Arc<Program> {
    let name = spec.name.clone();
    program(&name, move || {
        let round = if dtype == DType::F16 { WGSL_ROUND_F16 } else { "" };
        let mut p = Program::new(&spec.name)
            .cuda(cuda_source(dtype, include_str!("kernel.cu")))
            .wgsl(wgsl_source(dtype, spec.buffers, &format!("{round}{}", include_str!("kernel.wgsl"))))
            .host(spec.host)
            .define("KERNEL", &spec.name)
            .define("OP", spec.code)
            .define("COMBINE", spec.combine)
            .define("PARAMS_FIELDS", spec.fields);
        if spec.in_place {
            p = p.define("IN_PLACE", 1);
        }
        if let Some((from, to)) = spec.alias {
            p = p.define(from, to);
        }
        p
    })
}

const OUT_OF_PLACE: &[(&str, Access)] =
    &[("ew_a", Access::Read), ("ew_b", Access::Read), ("ew_out", Access::ReadWrite)];

fn lengths(what: String, n: usize, others: &[(&str, usize)]) -> Result<()> {
    match others.iter().find(|(_, len)| *len != n) {
        Some((name, len)) => Err(Error::LengthMismatch { what: format!("{what}: {name}"), expected: n, actual: *len }),
        None => Ok(()),
    }
}

/// `c[i] = a[i] op b[i]`, on `stream`; all three of the same length.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::elementwise::{binary, BinaryOp};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let (a, b) = (s.upload(&[7i32, -9])?, s.upload(&[2i32, 0])?);
/// let mut c = s.alloc::<i32>(2)?;
/// binary(&s, BinaryOp::Div, &a, &b, &mut c)?;
/// assert_eq!(c.to_vec()?, vec![3, -9]);     // x / 0 gives x
/// # Ok(()) }
/// ```
pub fn binary<B: Backend, T: Number>(
    stream: &Stream<B>,
    op: BinaryOp,
    a: &impl View<B, T>,
    b: &impl View<B, T>,
    c: &mut impl ViewMut<B, T>,
) -> Result<()> {
    let n = a.view().len();
    lengths(format!("elementwise {op}"), n, &[("b vs a", b.view().len()), ("output c vs a", c.view().len())])?;
    check_widened(stream, T::DTYPE, &format!("elementwise {op}"))?;
    if n == 0 {
        return Ok(());
    }
    if as_bits::<B>(T::DTYPE) {
        // No kernel type for T: computed in f32, each result rounded once.
        let (mut wa, wb) = (widen(stream, a.view())?, widen(stream, b.view())?);
        binary_in_place(stream, op, &mut wa, &wb)?;
        return narrow(stream, wa.view(), c.view_mut());
    }
    let spec = Spec {
        name: format!("kiln_{op}_{}", T::DTYPE),
        code: op as u8,
        combine: op.wgsl(T::DTYPE),
        fields: "n: u32,",
        buffers: OUT_OF_PLACE,
        alias: None,
        host: op.host::<T>(false),
        in_place: false,
    };
    let prog = build(spec, T::DTYPE);
    let kernel = stream.device().kernel(&prog)?;
    let cfg =
        elementwise_config::<B, T>(stream.device(), n, &[a.view().offset(), b.view().offset(), c.view().offset()]);
    let args = Args::new().arg(a.view()).arg(b.view()).arg(c.view_mut()).length(index_width(stream), n, prog.name())?;
    // SAFETY: the kernel reads a[0..n), b[0..n) and writes c[0..n), the common length.
    unsafe { stream.launch(&kernel, cfg, args) }
}

/// `a[i] = a[i] op b[i]`, on `stream`.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// use kiln_kernels::elementwise::{binary_in_place, BinaryOp};
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let mut a = s.upload(&[1.0f64, 2.0])?;
/// binary_in_place(&s, BinaryOp::Mul, &mut a, &s.upload(&[3.0, 4.0])?)?;
/// assert_eq!(a.to_vec()?, vec![3.0, 8.0]);
/// # Ok(()) }
/// ```
pub fn binary_in_place<B: Backend, T: Number>(
    stream: &Stream<B>,
    op: BinaryOp,
    a: &mut impl ViewMut<B, T>,
    b: &impl View<B, T>,
) -> Result<()> {
    let n = a.view().len();
    lengths(format!("elementwise {op} in place"), n, &[("b vs a", b.view().len())])?;
    check_widened(stream, T::DTYPE, &format!("elementwise {op}"))?;
    if n == 0 {
        return Ok(());
    }
    if as_bits::<B>(T::DTYPE) {
        let (mut wa, wb) = (widen(stream, a.view())?, widen(stream, b.view())?);
        binary_in_place(stream, op, &mut wa, &wb)?;
        return narrow(stream, wa.view(), a.view_mut());
    }
    let spec = Spec {
        name: format!("kiln_{op}_{}_inplace", T::DTYPE),
        code: op as u8,
        combine: op.wgsl(T::DTYPE),
        fields: "n: u32,",
        buffers: &[("ew_out", Access::ReadWrite), ("ew_b", Access::Read)],
        alias: Some(("ew_a", "ew_out")),
        host: op.host::<T>(true),
        in_place: true,
    };
    let prog = build(spec, T::DTYPE);
    let kernel = stream.device().kernel(&prog)?;
    let cfg = elementwise_config::<B, T>(stream.device(), n, &[a.view().offset(), b.view().offset()]);
    let args = Args::new().arg(a.view_mut()).arg(b.view()).length(index_width(stream), n, prog.name())?;
    // SAFETY: the kernel reads and writes a[0..n) and reads b[0..n), the common length.
    unsafe { stream.launch(&kernel, cfg, args) }
}

/// `z[i] = alpha * x[i] + y[i]`, on `stream` (BLAS's axpy, out of place).
/// On GPUs the multiply-add may be fused into one rounding.
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let (x, y) = (s.upload(&[1.0f32, 2.0])?, s.upload(&[10.0f32, 20.0])?);
/// let mut z = s.alloc::<f32>(2)?;
/// kiln_kernels::elementwise::axpy(&s, 2.0, &x, &y, &mut z)?;
/// assert_eq!(z.to_vec()?, vec![12.0, 24.0]);
/// # Ok(()) }
/// ```
pub fn axpy<B: Backend, T: Number>(
    stream: &Stream<B>,
    alpha: T,
    x: &impl View<B, T>,
    y: &impl View<B, T>,
    z: &mut impl ViewMut<B, T>,
) -> Result<()> {
    let n = x.view().len();
    lengths("axpy".to_string(), n, &[("y vs x", y.view().len()), ("output z vs x", z.view().len())])?;
    check_widened(stream, T::DTYPE, "axpy")?;
    if n == 0 {
        return Ok(());
    }
    if as_bits::<B>(T::DTYPE) {
        let (wx, mut wy) = (widen(stream, x.view())?, widen(stream, y.view())?);
        axpy_in_place(stream, to_f32(alpha), &wx, &mut wy)?;
        return narrow(stream, wy.view(), z.view_mut());
    }
    let spec = Spec {
        name: format!("kiln_axpy_{}", T::DTYPE),
        code: 4,
        combine: "params.alpha * a + b",
        fields: "alpha: T, n: u32,",
        buffers: OUT_OF_PLACE,
        alias: None,
        host: host_fn!(cpu::axpy::<T>),
        in_place: false,
    };
    let prog = build(spec, T::DTYPE);
    let kernel = stream.device().kernel(&prog)?;
    let cfg =
        elementwise_config::<B, T>(stream.device(), n, &[x.view().offset(), y.view().offset(), z.view().offset()]);
    let args = Args::new().arg(x.view()).arg(y.view()).arg(z.view_mut()).scalar(alpha);
    let args = args.length(index_width(stream), n, prog.name())?;
    // SAFETY: the kernel reads x[0..n), y[0..n) and writes z[0..n), the common length.
    unsafe { stream.launch(&kernel, cfg, args) }
}

/// `y[i] = alpha * x[i] + y[i]`, on `stream` (BLAS's axpy).
///
/// # Examples
/// ```
/// use kiln_core::Device;
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let s = dev.stream();
/// let x = s.upload(&[1u32, 2])?;
/// let mut y = s.upload(&[5u32, 5])?;
/// kiln_kernels::elementwise::axpy_in_place(&s, 3, &x, &mut y)?;
/// assert_eq!(y.to_vec()?, vec![8, 11]);
/// # Ok(()) }
/// ```
pub fn axpy_in_place<B: Backend, T: Number>(
    stream: &Stream<B>,
    alpha: T,
    x: &impl View<B, T>,
    y: &mut impl ViewMut<B, T>,
) -> Result<()> {
    let n = x.view().len();
    lengths("axpy in place".to_string(), n, &[("y vs x", y.view().len())])?;
    check_widened(stream, T::DTYPE, "axpy")?;
    if n == 0 {
        return Ok(());
    }
    if as_bits::<B>(T::DTYPE) {
        let (wx, mut wy) = (widen(stream, x.view())?, widen(stream, y.view())?);
        axpy_in_place(stream, to_f32(alpha), &wx, &mut wy)?;
        return narrow(stream, wy.view(), y.view_mut());
    }
    let spec = Spec {
        name: format!("kiln_axpy_{}_inplace", T::DTYPE),
        code: 4,
        combine: "params.alpha * a + b",
        fields: "alpha: T, n: u32,",
        buffers: &[("ew_a", Access::Read), ("ew_out", Access::ReadWrite)],
        alias: Some(("ew_b", "ew_out")),
        host: host_fn!(cpu::axpy_in_place::<T>),
        in_place: true,
    };
    let prog = build(spec, T::DTYPE);
    let kernel = stream.device().kernel(&prog)?;
    let cfg = elementwise_config::<B, T>(stream.device(), n, &[x.view().offset(), y.view().offset()]);
    let args = Args::new().arg(x.view()).arg(y.view_mut()).scalar(alpha).length(index_width(stream), n, prog.name())?;
    // SAFETY: the kernel reads x[0..n) and reads and writes y[0..n), the common length.
    unsafe { stream.launch(&kernel, cfg, args) }
}
