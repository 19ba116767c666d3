//! Launch arguments on the run-time tier.

use kiln_core::{Element, Error, IndexWidth, Result, Scalar, bf16, f16};

use super::tier::{AnyArgs, ArgsTier};
use super::{Buffer, BufferView, BufferViewMut, View, ViewMut, describe, dispatch, mismatch};

/// The argument list of one launch on the run-time tier, built in the
/// kernel's parameter order: buffers and views (`&buf` read-only,
/// `&mut buf` writable) and scalars. Every buffer must be on the launching
/// stream's device; the launch names the first that is not.
///
/// # Examples
/// ```
/// use kiln::Args;
/// # fn main() -> kiln::Result<()> {
/// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
/// let x = dev.upload(&[1.0f32, 2.0])?;
/// let mut y = dev.alloc::<f32>(2)?;
/// let args = Args::new().arg(2u32).arg(&x).arg(&mut y);
/// assert_eq!(args.len(), 3);
/// # Ok(()) }
/// ```
pub struct Args<'a> {
    state: State<'a>,
    len: usize,
}

enum State<'a> {
    /// Only scalars so far: the backend is not known yet.
    Scalars(Vec<Scalar>),
    Typed(AnyArgs<'a>),
    /// A buffer of another backend than the first one's: reported at launch.
    Mixed {
        index: usize,
        first: kiln_core::BackendKind,
        other: String,
    },
}

impl Default for Args<'_> {
    fn default() -> Self {
        Args { state: State::Scalars(Vec::new()), len: 0 }
    }
}

impl<'a> Args<'a> {
    /// An empty argument list.
    pub fn new() -> Self {
        Self::default()
    }

    /// Append one argument.
    pub fn arg(mut self, value: impl KernelArg<'a>) -> Self {
        self.push(value);
        self
    }

    /// Append a scalar of any element type.
    pub fn scalar<T: Element>(self, value: T) -> Self {
        self.arg(Scalar::new(value))
    }

    /// Append the length `n` as the device's kernels take it (the kernel
    /// ABI's length convention): a `u32` at [`IndexWidth::U32`] (wgpu), a
    /// `u64` at [`IndexWidth::U64`] (CUDA, the CPU); the width is the
    /// device's `info().features.index_width`. `what` names the kernel or
    /// operation for the error when `n` does not fit.
    ///
    /// # Examples
    /// ```
    /// use kiln::Args;
    /// # fn main() -> kiln::Result<()> {
    /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
    /// let x = dev.upload(&[1.0f32, 2.0])?;
    /// let args = Args::new().arg(&x).length(dev.info().features.index_width, x.len(), "kernel `k`")?;
    /// assert_eq!(args.len(), 2);
    /// assert!(Args::new().length(kiln::IndexWidth::U32, 1 << 33, "kernel `k`").is_err());
    /// # Ok(()) }
    /// ```
    pub fn length(self, width: IndexWidth, n: usize, what: &str) -> Result<Self> {
        if n as u64 > width.max_len() {
            let reason = format!("{n} elements exceed the device's {}-bit kernel indices", width.bits());
            return Err(match &self.state {
                State::Typed(t) => Error::unsupported(any_kind(t), what, reason),
                _ => Error::invalid(what, reason),
            });
        }
        Ok(match width {
            IndexWidth::U32 => self.arg(n as u32),
            IndexWidth::U64 => self.arg(n as u64),
        })
    }

    /// Append one argument in place.
    pub fn push(&mut self, value: impl KernelArg<'a>) -> &mut Self {
        value.push_to(self);
        self.len += 1;
        self
    }

    /// Number of arguments.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn push_scalar(&mut self, value: Scalar) {
        match &mut self.state {
            State::Scalars(v) => v.push(value),
            State::Typed(t) => typed_push(t, value),
            State::Mixed { .. } => {}
        }
    }

    fn push_view<T: Element>(&mut self, view: BufferView<'a, T>) {
        let index = self.len;
        let state = &mut self.state;
        dispatch!(view, BufferView, v => push_buffer::<B, _>(state, index, v, |v| describe(v.buffer().device())))
    }

    fn push_view_mut<T: Element>(&mut self, view: BufferViewMut<'a, T>) {
        let index = self.len;
        let state = &mut self.state;
        dispatch!(view, BufferViewMut, v => {
            push_buffer::<B, _>(state, index, v, |v| describe(kiln_core::View::view(v).buffer().device()))
        })
    }

    /// The typed list for a launch on `stream`, or the error naming the
    /// argument on another device's backend; `what` names the launch, and
    /// runs only for an error.
    pub(crate) fn into_typed<B: ArgsTier>(
        self,
        what: impl FnOnce() -> String,
        stream: &kiln_core::Stream<B>,
    ) -> Result<kiln_core::Args<'a, B>> {
        match self.state {
            State::Scalars(v) => Ok(v.into_iter().fold(kiln_core::Args::new(), |a, s| a.arg(s))),
            State::Typed(t) => {
                let first = any_kind(&t);
                B::into_args(t).ok_or_else(|| {
                    mismatch(&what(), describe(stream.device()), format!("the arguments, on a {first} device"))
                })
            }
            State::Mixed { index, first, other } => Err(mismatch(
                &format!("{}, argument {index}", what()),
                format!("the earlier buffer arguments, on a {first} device"),
                other,
            )),
        }
    }
}

fn any_kind(args: &AnyArgs<'_>) -> kiln_core::BackendKind {
    dispatch!(args, AnyArgs, _a => <B as kiln_core::Backend>::KIND)
}

/// Append a typed buffer argument; on a backend other than the earlier
/// buffers' the list turns into the error, with `name` describing the device.
fn push_buffer<'a, B: ArgsTier, A: kiln_core::KernelArg<'a, B>>(
    state: &mut State<'a>,
    index: usize,
    arg: A,
    name: impl FnOnce(&A) -> String,
) {
    match state {
        State::Scalars(scalars) => {
            let mut typed = kiln_core::Args::<B>::new();
            for s in scalars.drain(..) {
                typed.push(s);
            }
            typed.push(arg);
            *state = State::Typed(B::wrap_args(typed));
        }
        State::Typed(t) => match B::args_mut(t) {
            Some(typed) => {
                typed.push(arg);
            }
            None => {
                let first = any_kind(t);
                *state = State::Mixed { index, first, other: name(&arg) };
            }
        },
        State::Mixed { .. } => {}
    }
}

fn typed_push(args: &mut AnyArgs<'_>, value: Scalar) {
    dispatch!(args, AnyArgs, a => {
        a.push(value);
    })
}

mod sealed {
    pub trait Sealed {}
}

/// Anything that can be passed to a kernel on the run-time tier: buffers
/// and views (`&buf` read-only, `&mut buf` writable) and scalars of every
/// [`Element`] type. Sealed.
pub trait KernelArg<'a>: sealed::Sealed {
    /// Append this argument to `args`.
    #[doc(hidden)]
    fn push_to(self, args: &mut Args<'a>);
}

impl<T: Element> sealed::Sealed for &Buffer<T> {}
impl<'a, T: Element> KernelArg<'a> for &'a Buffer<T> {
    fn push_to(self, args: &mut Args<'a>) {
        args.push_view(self.view());
    }
}

impl<T: Element> sealed::Sealed for &mut Buffer<T> {}
impl<'a, T: Element> KernelArg<'a> for &'a mut Buffer<T> {
    fn push_to(self, args: &mut Args<'a>) {
        args.push_view_mut(self.view_mut());
    }
}

impl<T: Element> sealed::Sealed for BufferView<'_, T> {}
impl<'a, T: Element> KernelArg<'a> for BufferView<'a, T> {
    fn push_to(self, args: &mut Args<'a>) {
        args.push_view(self);
    }
}

impl<T: Element> sealed::Sealed for BufferViewMut<'_, T> {}
impl<'a, T: Element> KernelArg<'a> for BufferViewMut<'a, T> {
    fn push_to(self, args: &mut Args<'a>) {
        args.push_view_mut(self);
    }
}

impl sealed::Sealed for Scalar {}
impl<'a> KernelArg<'a> for Scalar {
    fn push_to(self, args: &mut Args<'a>) {
        args.push_scalar(self);
    }
}

macro_rules! scalar_arg {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl<'a> KernelArg<'a> for $t {
            fn push_to(self, args: &mut Args<'a>) {
                args.push_scalar(Scalar::new(self));
            }
        }
    )*};
}
scalar_arg!(u8, i32, u32, i64, u64, f16, bf16, f32, f64);
