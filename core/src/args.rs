//! Kernel arguments: the untyped form backends receive, and the typed builder.

use std::sync::Arc;

use crate::{Backend, Buffer, BufferView, BufferViewMut, DType, Element, Error, LaunchConfig, Result, Storage};
use half::{bf16, f16};

/// A scalar kernel argument: its bytes (little-endian, at most 8) and type.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scalar {
    bytes: [u8; 8],
    dtype: DType,
}

impl Scalar {
    /// Wrap a value.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{DType, Scalar};
    /// let s = Scalar::new(7u32);
    /// assert_eq!(s.dtype(), DType::U32);
    /// assert_eq!(s.as_bytes(), &7u32.to_le_bytes());
    /// assert_eq!(s.get::<u32>(), Some(7));
    /// ```
    pub fn new<T: Element>(value: T) -> Self {
        // Every element type is at most 8 bytes wide: `Element` is sealed and
        // its sizes are checked against `DType::size` at compile time.
        const { assert!(size_of::<T>() <= 8 && size_of::<T>() == T::DTYPE.size()) };
        let mut bytes = [0u8; 8];
        bytes[..size_of::<T>()].copy_from_slice(bytemuck::bytes_of(&value));
        Scalar { bytes, dtype: T::DTYPE }
    }

    /// A scalar of type `dtype` from its little-endian bytes, which must be
    /// exactly `dtype.size()` of them.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{DType, Scalar};
    /// let s = Scalar::from_bytes(DType::I32, &(-2i32).to_le_bytes())?;
    /// assert_eq!(s.get::<i32>(), Some(-2));
    /// assert!(Scalar::from_bytes(DType::F64, &[0u8; 4]).is_err());
    /// # Ok::<(), kiln_core::Error>(())
    /// ```
    pub fn from_bytes(dtype: DType, value: &[u8]) -> Result<Self> {
        if value.len() != dtype.size() {
            return Err(Error::invalid(
                "Scalar::from_bytes",
                format!("a {dtype} scalar is {} bytes, got {}", dtype.size(), value.len()),
            ));
        }
        let mut bytes = [0u8; 8];
        bytes[..value.len()].copy_from_slice(value);
        Ok(Scalar { bytes, dtype })
    }

    /// The value's type.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The value's bytes (`dtype().size()` of them).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.dtype.size()]
    }

    /// The value, if `T` is its type.
    pub fn get<T: Element>(&self) -> Option<T> {
        (T::DTYPE == self.dtype).then(|| bytemuck::pod_read_unaligned(self.as_bytes()))
    }
}

/// One untyped kernel argument, as a backend receives it.
#[derive(Debug)]
pub enum RawArg<'a, B: Backend> {
    /// A range of a device buffer.
    Buffer {
        /// The storage.
        buffer: &'a B::Buffer,
        /// Start of the range, in bytes.
        offset: usize,
        /// Length of the range, in bytes.
        len: usize,
        /// Element type the kernel sees.
        dtype: DType,
        /// Whether the kernel may write it.
        writable: bool,
    },
    /// A value passed by copy.
    Scalar(Scalar),
}

/// Anything that can be passed to a kernel: buffers and views (`&buf` is
/// read-only, `&mut buf` writable) and scalars of every [`Element`] type.
///
/// The trait is sealed: a buffer argument's range and device come from the
/// buffer or view itself, never from code outside kiln, so an argument can
/// neither point past its buffer nor skip the launch's device check.
///
/// ```compile_fail,E0277
/// use kiln_core::{Buffer, DType, Device, KernelArg, RawArg};
/// use kiln_cpu::Cpu;
///
/// struct AnyRange<'a>(&'a Buffer<Cpu, u8>);
///
/// impl<'a> KernelArg<'a, Cpu> for AnyRange<'a> {
///     fn into_raw(self) -> (RawArg<'a, Cpu>, Option<&'a std::sync::Arc<kiln_core::Storage<Cpu>>>) {
///         let arg = RawArg::Buffer { buffer: self.0.raw(), offset: 1 << 20, len: 8, dtype: DType::U8, writable: true };
///         (arg, None)
///     }
/// }
/// ```
pub trait KernelArg<'a, B: Backend>: sealed::Sealed {
    /// The untyped argument, and the memory it lives in (scalars: none).
    fn into_raw(self) -> (RawArg<'a, B>, Option<&'a Arc<Storage<B>>>);
}

mod sealed {
    use crate::{Backend, Buffer, BufferView, BufferViewMut, Element, Scalar};
    use half::{bf16, f16};

    /// Keeps [`KernelArg`](super::KernelArg) to the types listed here.
    pub trait Sealed {}

    impl<B: Backend, T: Element> Sealed for &Buffer<B, T> {}
    impl<B: Backend, T: Element> Sealed for &mut Buffer<B, T> {}
    impl<B: Backend, T: Element> Sealed for BufferView<'_, B, T> {}
    impl<B: Backend, T: Element> Sealed for BufferViewMut<'_, B, T> {}
    impl<B: Backend, T: Element> Sealed for super::Parts<BufferView<'_, B, T>> {}
    impl<B: Backend, T: Element> Sealed for super::Parts<BufferViewMut<'_, B, T>> {}
    impl Sealed for Scalar {}
    macro_rules! sealed_scalar {
        ($($t:ty),*) => {$( impl Sealed for $t {} )*};
    }
    sealed_scalar!(u8, i32, u32, i64, u64, f16, bf16, f32, f64);
}

impl<'a, B: Backend, T: Element> KernelArg<'a, B> for &'a Buffer<B, T> {
    fn into_raw(self) -> (RawArg<'a, B>, Option<&'a Arc<Storage<B>>>) {
        self.view().into_raw()
    }
}

impl<'a, B: Backend, T: Element> KernelArg<'a, B> for &'a mut Buffer<B, T> {
    fn into_raw(self) -> (RawArg<'a, B>, Option<&'a Arc<Storage<B>>>) {
        self.view_mut().into_raw()
    }
}

impl<'a, B: Backend, T: Element> KernelArg<'a, B> for BufferView<'a, B, T> {
    fn into_raw(self) -> (RawArg<'a, B>, Option<&'a Arc<Storage<B>>>) {
        range_arg(self.parts(), false)
    }
}

impl<'a, B: Backend, T: Element> KernelArg<'a, B> for BufferViewMut<'a, B, T> {
    fn into_raw(self) -> (RawArg<'a, B>, Option<&'a Arc<Storage<B>>>) {
        range_arg(self.into_parts(), true)
    }
}

/// A view passed to a kernel as the parts of its elements: a view of
/// complex elements as twice as many reals of its [`real`](DType::real)
/// type (`f32` for `c64`), the same bytes; any other view as it is. Kernels
/// that only move or compute on real values (a copy, a gather, a scaling)
/// take complex data this way.
///
/// # Examples
/// ```
/// use kiln_core::{Args, Complex32, Device, Parts, RawArg, DType};
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let s = Device::<Cpu>::open(0)?.stream();
/// let z = s.upload(&[Complex32::new(1.0, 2.0); 3])?;
/// let args = Args::new().arg(Parts::new(z.view()));
/// assert!(matches!(args.raw()[0], RawArg::Buffer { dtype: DType::F32, len: 24, .. }));
/// # Ok(()) }
/// ```
pub struct Parts<V>(V);

impl<V> Parts<V> {
    /// `view` passed as its elements' parts.
    pub fn new(view: V) -> Self {
        Parts(view)
    }
}

impl<'a, B: Backend, T: Element> KernelArg<'a, B> for Parts<BufferView<'a, B, T>> {
    fn into_raw(self) -> (RawArg<'a, B>, Option<&'a Arc<Storage<B>>>) {
        as_parts(range_arg(self.0.parts(), false))
    }
}

impl<'a, B: Backend, T: Element> KernelArg<'a, B> for Parts<BufferViewMut<'a, B, T>> {
    fn into_raw(self) -> (RawArg<'a, B>, Option<&'a Arc<Storage<B>>>) {
        as_parts(range_arg(self.0.into_parts(), true))
    }
}

/// A buffer argument retyped to its elements' real type (same bytes).
fn as_parts<'a, B: Backend>(
    (arg, storage): (RawArg<'a, B>, Option<&'a Arc<Storage<B>>>),
) -> (RawArg<'a, B>, Option<&'a Arc<Storage<B>>>) {
    let arg = match arg {
        RawArg::Buffer { buffer, offset, len, dtype, writable } => {
            RawArg::Buffer { buffer, offset, len, dtype: dtype.real(), writable }
        }
        scalar => scalar,
    };
    (arg, storage)
}

/// The range `len` elements from `offset` of `buffer` as a kernel argument
/// in bytes, with the storage it keeps alive.
fn range_arg<'a, B: Backend, T: Element>(
    (buffer, offset, len): (&'a Buffer<B, T>, usize, usize),
    writable: bool,
) -> (RawArg<'a, B>, Option<&'a Arc<Storage<B>>>) {
    let size = T::DTYPE.size();
    let arg =
        RawArg::Buffer { buffer: buffer.raw(), offset: offset * size, len: len * size, dtype: T::DTYPE, writable };
    (arg, Some(buffer.storage()))
}

macro_rules! scalar_arg {
    ($($t:ty),*) => {$(
        impl<'a, B: Backend> KernelArg<'a, B> for $t {
            fn into_raw(self) -> (RawArg<'a, B>, Option<&'a Arc<Storage<B>>>) {
                (RawArg::Scalar(Scalar::new(self)), None)
            }
        }
    )*};
}
scalar_arg!(u8, i32, u32, i64, u64, f16, bf16, f32, f64);

impl<'a, B: Backend> KernelArg<'a, B> for Scalar {
    fn into_raw(self) -> (RawArg<'a, B>, Option<&'a Arc<Storage<B>>>) {
        (RawArg::Scalar(self), None)
    }
}

/// The argument list of one launch, built in the kernel's parameter order.
///
/// # Examples
/// ```
/// use kiln_core::{Args, Device};
/// use kiln_cpu::Cpu;
/// # fn main() -> kiln_core::Result<()> {
/// let dev = Device::<Cpu>::open(0)?;
/// let x = dev.upload(&[1.0f32, 2.0])?;
/// let mut y = dev.alloc::<f32>(2)?;
/// let args = Args::new().arg(&x).arg(&mut y).arg(2u32);
/// assert_eq!(args.len(), 3);
/// # Ok(()) }
/// ```
pub struct Args<'a, B: Backend> {
    raw: Vec<RawArg<'a, B>>,
    /// The memory of each argument, in order (scalars: none).
    storages: Vec<Option<&'a Arc<Storage<B>>>>,
}

impl<B: Backend> Default for Args<'_, B> {
    fn default() -> Self {
        Args { raw: Vec::new(), storages: Vec::new() }
    }
}

impl<'a, B: Backend> Args<'a, B> {
    /// An empty argument list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Append one argument.
    pub fn arg(mut self, value: impl KernelArg<'a, B>) -> Self {
        self.push(value);
        self
    }

    /// Append a scalar of any element type (for generic code, where `.arg(x)`
    /// cannot name the type).
    pub fn scalar<T: Element>(self, value: T) -> Self {
        self.arg(Scalar::new(value))
    }

    /// Append one argument in place.
    pub fn push(&mut self, value: impl KernelArg<'a, B>) -> &mut Self {
        let (raw, storage) = value.into_raw();
        self.raw.push(raw);
        self.storages.push(storage);
        self
    }

    /// Number of arguments.
    pub fn len(&self) -> usize {
        self.raw.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }

    /// A second list of the same arguments, where none is writable (shared
    /// borrows may be copied; an exclusive one may not): for work that
    /// launches several kernels over one user's inputs. `None` otherwise.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{Args, Device};
    /// use kiln_cpu::Cpu;
    /// # fn main() -> kiln_core::Result<()> {
    /// let dev = Device::<Cpu>::open(0)?;
    /// let x = dev.upload(&[1.0f32, 2.0])?;
    /// let mut y = dev.alloc::<f32>(2)?;
    /// assert_eq!(Args::new().arg(&x).arg(2u32).try_clone().map(|a| a.len()), Some(2));
    /// assert!(Args::new().arg(&x).arg(&mut y).try_clone().is_none());
    /// # Ok(()) }
    /// ```
    pub fn try_clone(&self) -> Option<Self> {
        let mut raw = Vec::with_capacity(self.raw.len());
        for a in &self.raw {
            raw.push(match a {
                RawArg::Buffer { writable: true, .. } => return None,
                RawArg::Buffer { buffer, offset, len, dtype, writable } => {
                    RawArg::Buffer { buffer: *buffer, offset: *offset, len: *len, dtype: *dtype, writable: *writable }
                }
                RawArg::Scalar(s) => RawArg::Scalar(*s),
            });
        }
        Some(Args { raw, storages: self.storages.clone() })
    }

    /// The untyped arguments.
    pub fn raw(&self) -> &[RawArg<'a, B>] {
        &self.raw
    }

    /// The memory of each argument, in order (scalars: none).
    pub(crate) fn storages(&self) -> &[Option<&'a Arc<Storage<B>>>] {
        &self.storages
    }

    /// Append an untyped argument as it is, as no code outside kiln can.
    #[cfg(test)]
    pub(crate) fn push_raw(&mut self, raw: RawArg<'a, B>) {
        self.raw.push(raw);
        self.storages.push(None);
    }
}

/// A CPU kernel's view of its arguments, typed on access.
///
/// Inputs are shared slices, outputs exclusive ones; [`output`](Self::output)
/// hands out each writable buffer once, so a kernel can hold its inputs and
/// outputs at the same time.
pub struct HostArgs<'a> {
    kernel: &'a str,
    config: LaunchConfig,
    args: Vec<HostArg<'a>>,
}

/// One argument of a CPU kernel.
#[derive(Debug)]
pub enum HostArg<'a> {
    /// A read-only buffer range.
    Input(&'a [u8], DType),
    /// A writable buffer range.
    Output(&'a mut [u8], DType),
    /// A scalar.
    Scalar(Scalar),
    /// An output already handed out by [`HostArgs::output`].
    Taken(DType),
}

impl<'a> HostArgs<'a> {
    /// Arguments for a launch of `kernel` with `config`.
    pub fn new(kernel: &'a str, config: LaunchConfig, args: Vec<HostArg<'a>>) -> Self {
        HostArgs { kernel, config, args }
    }

    /// The kernel's name, for errors.
    pub(crate) fn kernel_name(&self) -> &str {
        self.kernel
    }

    /// The launch shape the kernel was launched with.
    pub fn config(&self) -> &LaunchConfig {
        &self.config
    }

    /// Number of arguments.
    pub fn len(&self) -> usize {
        self.args.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.args.is_empty()
    }

    fn bad(&self, index: usize, reason: String) -> Error {
        Error::invalid(format!("kernel `{}` argument {index}", self.kernel), reason)
    }

    fn cast<T: Element>(&self, index: usize, found: DType) -> Result<()> {
        if found == T::DTYPE {
            Ok(())
        } else {
            Err(self.bad(index, format!("expected a {} buffer, got {found}", T::DTYPE)))
        }
    }

    /// Read-only buffer argument `index` (passed as `&buf`).
    pub fn input<T: Element>(&self, index: usize) -> Result<&'a [T]> {
        match self.args.get(index) {
            Some(HostArg::Input(bytes, d)) => {
                self.cast::<T>(index, *d)?;
                bytemuck::try_cast_slice(bytes).map_err(|e| self.bad(index, e.to_string()))
            }
            Some(other) => Err(self.bad(index, format!("expected a read-only buffer, got {}", kind(other)))),
            None => Err(self.bad(index, format!("missing: {} argument(s) given", self.args.len()))),
        }
    }

    /// Writable buffer argument `index`; each can be taken once.
    pub fn output<T: Element>(&mut self, index: usize) -> Result<&'a mut [T]> {
        match self.args.get(index) {
            Some(HostArg::Output(_, d)) => self.cast::<T>(index, *d)?,
            Some(other) => return Err(self.bad(index, format!("expected a writable buffer, got {}", kind(other)))),
            None => return Err(self.bad(index, format!("missing: {} argument(s) given", self.args.len()))),
        }
        let slot = &mut self.args[index];
        let taken = HostArg::Taken(T::DTYPE);
        match std::mem::replace(slot, taken) {
            HostArg::Output(bytes, _) => {
                bytemuck::try_cast_slice_mut(bytes).map_err(|e| self.bad(index, e.to_string()))
            }
            other => {
                *slot = other;
                Err(self.bad(index, "expected a writable buffer".to_string()))
            }
        }
    }

    /// Scalar argument `index`.
    pub fn scalar<T: Element>(&self, index: usize) -> Result<T> {
        match self.args.get(index) {
            Some(HostArg::Scalar(s)) => s
                .get::<T>()
                .ok_or_else(|| self.bad(index, format!("expected a {} scalar, got {}", T::DTYPE, s.dtype()))),
            Some(other) => Err(self.bad(index, format!("expected a scalar, got {}", kind(other)))),
            None => Err(self.bad(index, format!("missing: {} argument(s) given", self.args.len()))),
        }
    }
}

fn kind(arg: &HostArg<'_>) -> String {
    match arg {
        HostArg::Input(_, d) => format!("a read-only {d} buffer"),
        HostArg::Output(_, d) => format!("a writable {d} buffer"),
        HostArg::Scalar(s) => format!("a {} scalar", s.dtype()),
        HostArg::Taken(d) => format!("a writable {d} buffer already taken"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_from_bytes_checks_the_size() {
        let s = Scalar::from_bytes(DType::F64, &1.5f64.to_le_bytes()).unwrap();
        assert_eq!(s, Scalar::new(1.5f64));
        assert_eq!(Scalar::from_bytes(DType::U8, &[200]).unwrap().get::<u8>(), Some(200));
        let err = Scalar::from_bytes(DType::F32, &[0; 8]).unwrap_err();
        assert_eq!(err.to_string(), "Scalar::from_bytes: a f32 scalar is 4 bytes, got 8");
        assert!(Scalar::from_bytes(DType::U64, &[]).is_err());
    }

    #[test]
    fn every_element_fits_a_scalar() {
        fn round_trip<T: Element>(v: T) {
            let s = Scalar::new(v);
            assert_eq!(s.as_bytes().len(), T::DTYPE.size());
            assert_eq!(s.get::<T>(), Some(v));
        }
        round_trip(u8::MAX);
        round_trip(-3i32);
        round_trip(u32::MAX);
        round_trip(i64::MIN);
        round_trip(u64::MAX);
        round_trip(f16::from_f32(0.5));
        round_trip(bf16::from_f32(-2.0));
        round_trip(1.25f32);
        round_trip(f64::MAX);
    }
}
