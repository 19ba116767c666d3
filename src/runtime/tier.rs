//! The enums of the run-time tier and the [`Tier`] trait, generated from
//! the one list of backends ([`backend_list`](super::backend_list)).

use kiln_core::{Backend, Element};

use super::backend_list;
use kiln_kernels::array::{Array as TypedArray, ArrayExpr as TypedExpr};

mod sealed {
    pub trait Sealed {}
}

/// A backend compiled into the run-time tier: the bridge between the
/// run-time enums and the typed tier.
///
/// Each method picks the typed value out of a run-time one when it belongs
/// to this backend (`None` otherwise), or wraps a typed value. Implemented
/// for every backend compiled in, and sealed.
///
/// # Examples
/// ```
/// use kiln::{Cpu, Tier};
/// # fn main() -> kiln::Result<()> {
/// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
/// let typed: &kiln::typed::Device<Cpu> = Cpu::device(&dev).expect("a CPU device");
/// let buf = Cpu::wrap_buffer(typed.upload(&[1u32, 2, 3])?);
/// assert_eq!(buf.to_vec()?, [1, 2, 3]);
/// # Ok(()) }
/// ```
pub trait Tier: Backend + sealed::Sealed {
    /// The typed device, if `device` is of this backend.
    fn device(device: &Device) -> Option<&kiln_core::Device<Self>>;
    /// The typed stream, if `stream` is of this backend.
    fn stream(stream: &Stream) -> Option<&kiln_core::Stream<Self>>;
    /// The typed buffer, if `buffer` is of this backend.
    fn buffer<T: Element>(buffer: &Buffer<T>) -> Option<&kiln_core::Buffer<Self, T>>;
    /// The typed buffer, writable, if `buffer` is of this backend.
    fn buffer_mut<T: Element>(buffer: &mut Buffer<T>) -> Option<&mut kiln_core::Buffer<Self, T>>;
    /// The typed view, if `view` is of this backend; otherwise `view` back.
    fn view<T: Element>(view: BufferView<'_, T>) -> Result<kiln_core::BufferView<'_, Self, T>, BufferView<'_, T>>;
    /// The typed writable view, if `view` is of this backend; otherwise `view` back.
    fn view_mut<T: Element>(
        view: BufferViewMut<'_, T>,
    ) -> Result<kiln_core::BufferViewMut<'_, Self, T>, BufferViewMut<'_, T>>;
    /// The typed host buffer, if `host` is of this backend.
    fn host<T: Element>(host: &HostBuffer<T>) -> Option<&kiln_core::HostBuffer<Self, T>>;
    /// The typed host buffer, writable, if `host` is of this backend.
    fn host_mut<T: Element>(host: &mut HostBuffer<T>) -> Option<&mut kiln_core::HostBuffer<Self, T>>;
    /// The typed event, if `event` is of this backend.
    fn event(event: &Event) -> Option<&kiln_core::Event<Self>>;
    /// The typed kernel, if `kernel` is of this backend.
    fn kernel(kernel: &Kernel) -> Option<&kiln_core::Kernel<Self>>;
    /// The typed array, if `array` is of this backend.
    fn array<T: Element>(array: &Array<T>) -> Option<&TypedArray<Self, T>>;
    /// The typed graph, if `graph` is of this backend.
    fn graph(graph: &Graph) -> Option<&kiln_core::Graph<Self>>;

    /// A typed device on the run-time tier.
    fn wrap_device(device: kiln_core::Device<Self>) -> Device;
    /// A typed stream on the run-time tier.
    fn wrap_stream(stream: kiln_core::Stream<Self>) -> Stream;
    /// A typed buffer on the run-time tier.
    fn wrap_buffer<T: Element>(buffer: kiln_core::Buffer<Self, T>) -> Buffer<T>;
    /// A typed view on the run-time tier.
    fn wrap_view<T: Element>(view: kiln_core::BufferView<'_, Self, T>) -> BufferView<'_, T>;
    /// A typed writable view on the run-time tier.
    fn wrap_view_mut<T: Element>(view: kiln_core::BufferViewMut<'_, Self, T>) -> BufferViewMut<'_, T>;
    /// A typed host buffer on the run-time tier.
    fn wrap_host<T: Element>(host: kiln_core::HostBuffer<Self, T>) -> HostBuffer<T>;
    /// A typed event on the run-time tier.
    fn wrap_event(event: kiln_core::Event<Self>) -> Event;
    /// A typed kernel on the run-time tier.
    fn wrap_kernel(kernel: kiln_core::Kernel<Self>) -> Kernel;
    /// A typed array on the run-time tier.
    fn wrap_array<T: Element>(array: TypedArray<Self, T>) -> Array<T>;
    /// A typed graph on the run-time tier.
    fn wrap_graph(graph: kiln_core::Graph<Self>) -> Graph;
}

/// The crate's own bridge for array expressions.
pub(crate) trait ExprTier: Tier {
    /// A typed expression as the run-time arm.
    fn wrap_expr<T: Element>(expr: TypedExpr<Self, T>) -> ExprArm<T>;
    /// The typed expression, if the arm is of this backend; otherwise the arm
    /// back, moved, as large as the `Ok` side (boxing it would allocate on
    /// every evaluation for nothing).
    #[allow(clippy::result_large_err)]
    fn expr<T: Element>(expr: ExprArm<T>) -> Result<TypedExpr<Self, T>, ExprArm<T>>;
}

/// The crate's own bridge for launch arguments (kept out of [`Tier`], whose
/// signatures are public).
pub(crate) trait ArgsTier: Tier {
    /// Typed arguments as the run-time list.
    fn wrap_args(args: kiln_core::Args<'_, Self>) -> AnyArgs<'_>;
    /// The typed arguments, if the list is of this backend.
    fn args_mut<'s, 'a>(args: &'s mut AnyArgs<'a>) -> Option<&'s mut kiln_core::Args<'a, Self>>;
    /// The typed arguments, if the list is of this backend.
    fn into_args(args: AnyArgs<'_>) -> Option<kiln_core::Args<'_, Self>>;
}

/// The enums, one arm per backend.
macro_rules! runtime_enums {
    (() $($(#[$attr:meta])* $variant:ident($backend:path),)*) => {
        /// A device whose backend is chosen at run time; cheap to clone.
        ///
        /// Open one with [`Device::best`], [`Device::open`] or
        /// [`Device::by_name`]; everything it hands out (streams, buffers,
        /// events, kernels) is on the same backend.
        ///
        /// # Examples
        /// ```
        /// # fn main() -> kiln::Result<()> {
        /// let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
        /// let buf = dev.upload(&[1.0f32, 2.0])?;
        /// assert_eq!(buf.to_vec()?, [1.0, 2.0]);
        /// # Ok(()) }
        /// ```
        #[derive(Clone, Debug)]
        #[non_exhaustive]
        pub enum Device {
            $($(#[$attr])* #[doc = concat!("A device of the `", stringify!($variant), "` backend.")]
            $variant(kiln_core::Device<$backend>),)*
        }

        /// An ordered queue of work on a [`Device`] of any backend; cheap to clone.
        #[derive(Clone, Debug)]
        #[non_exhaustive]
        pub enum Stream {
            $($(#[$attr])* #[doc = concat!("A stream of the `", stringify!($variant), "` backend.")]
            $variant(kiln_core::Stream<$backend>),)*
        }

        /// A device array of `T` on a device of any backend.
        #[derive(Debug)]
        #[non_exhaustive]
        pub enum Buffer<T: Element> {
            $($(#[$attr])* #[doc = concat!("A buffer of the `", stringify!($variant), "` backend.")]
            $variant(kiln_core::Buffer<$backend, T>),)*
        }

        /// A read-only range of a [`Buffer`].
        #[non_exhaustive]
        pub enum BufferView<'a, T: Element> {
            $($(#[$attr])* #[doc = concat!("A view of the `", stringify!($variant), "` backend.")]
            $variant(kiln_core::BufferView<'a, $backend, T>),)*
        }

        /// A writable range of a [`Buffer`].
        #[non_exhaustive]
        pub enum BufferViewMut<'a, T: Element> {
            $($(#[$attr])* #[doc = concat!("A writable view of the `", stringify!($variant), "` backend.")]
            $variant(kiln_core::BufferViewMut<'a, $backend, T>),)*
        }

        /// Host memory a device of any backend copies to and from asynchronously.
        #[non_exhaustive]
        pub enum HostBuffer<T: Element> {
            $($(#[$attr])* #[doc = concat!("A host buffer of the `", stringify!($variant), "` backend.")]
            $variant(kiln_core::HostBuffer<$backend, T>),)*
        }

        /// A point in a [`Stream`] of any backend.
        #[non_exhaustive]
        pub enum Event {
            $($(#[$attr])* #[doc = concat!("An event of the `", stringify!($variant), "` backend.")]
            $variant(kiln_core::Event<$backend>),)*
        }

        /// A compiled entry point on a [`Device`] of any backend; cheap to clone.
        #[derive(Clone, Debug)]
        #[non_exhaustive]
        pub enum Kernel {
            $($(#[$attr])* #[doc = concat!("A kernel of the `", stringify!($variant), "` backend.")]
            $variant(kiln_core::Kernel<$backend>),)*
        }

        /// An n-d array of `T` on a device of any backend (the typed tier's
        /// [`Array`](kiln_kernels::array::Array) in one arm per backend):
        /// see [`crate::array`]. Cloning shares the elements (copy-on-write),
        /// not the error a failed in-place operator left (see
        /// [`Array::check`]).
        #[derive(Clone, Debug)]
        #[non_exhaustive]
        pub enum Array<T: Element> {
            $($(#[$attr])* #[doc = concat!("An array of the `", stringify!($variant), "` backend.")]
            $variant(TypedArray<$backend, T>),)*
        }

        /// Work captured from a [`Stream`] of any backend, replayed with
        /// [`Graph::launch`]: see [`Stream::begin_capture`].
        #[derive(Debug)]
        #[non_exhaustive]
        pub enum Graph {
            $($(#[$attr])* #[doc = concat!("A graph of the `", stringify!($variant), "` backend.")]
            $variant(kiln_core::Graph<$backend>),)*
        }

        /// An array expression of one backend.
        #[derive(Clone)]
        pub(crate) enum ExprArm<T: Element> {
            $($(#[$attr])* $variant(TypedExpr<$backend, T>),)*
        }

        /// The typed argument list of one launch, on whichever backend its
        /// first buffer is.
        pub(crate) enum AnyArgs<'a> {
            $($(#[$attr])* $variant(kiln_core::Args<'a, $backend>),)*
        }

        impl<T: Element> Clone for BufferView<'_, T> {
            fn clone(&self) -> Self {
                *self
            }
        }
        impl<T: Element> Copy for BufferView<'_, T> {}

        $(
            $(#[$attr])*
            impl sealed::Sealed for $backend {}

            $(#[$attr])*
            #[allow(unreachable_patterns)]
            impl ArgsTier for $backend {
                fn wrap_args(args: kiln_core::Args<'_, Self>) -> AnyArgs<'_> {
                    AnyArgs::$variant(args)
                }
                fn args_mut<'s, 'a>(args: &'s mut AnyArgs<'a>) -> Option<&'s mut kiln_core::Args<'a, Self>> {
                    match args { AnyArgs::$variant(a) => Some(a), _ => None }
                }
                fn into_args(args: AnyArgs<'_>) -> Option<kiln_core::Args<'_, Self>> {
                    match args { AnyArgs::$variant(a) => Some(a), _ => None }
                }
            }

            $(#[$attr])*
            #[allow(unreachable_patterns)]
            impl ExprTier for $backend {
                fn wrap_expr<T: Element>(expr: TypedExpr<Self, T>) -> ExprArm<T> {
                    ExprArm::$variant(expr)
                }
                fn expr<T: Element>(expr: ExprArm<T>) -> Result<TypedExpr<Self, T>, ExprArm<T>> {
                    match expr { ExprArm::$variant(e) => Ok(e), other => Err(other) }
                }
            }

            $(#[$attr])*
            #[allow(unreachable_patterns)]
            impl Tier for $backend {
                fn device(device: &Device) -> Option<&kiln_core::Device<Self>> {
                    match device { Device::$variant(d) => Some(d), _ => None }
                }
                fn stream(stream: &Stream) -> Option<&kiln_core::Stream<Self>> {
                    match stream { Stream::$variant(s) => Some(s), _ => None }
                }
                fn buffer<T: Element>(buffer: &Buffer<T>) -> Option<&kiln_core::Buffer<Self, T>> {
                    match buffer { Buffer::$variant(b) => Some(b), _ => None }
                }
                fn buffer_mut<T: Element>(buffer: &mut Buffer<T>) -> Option<&mut kiln_core::Buffer<Self, T>> {
                    match buffer { Buffer::$variant(b) => Some(b), _ => None }
                }
                fn view<T: Element>(
                    view: BufferView<'_, T>,
                ) -> Result<kiln_core::BufferView<'_, Self, T>, BufferView<'_, T>> {
                    match view { BufferView::$variant(v) => Ok(v), other => Err(other) }
                }
                fn view_mut<T: Element>(
                    view: BufferViewMut<'_, T>,
                ) -> Result<kiln_core::BufferViewMut<'_, Self, T>, BufferViewMut<'_, T>> {
                    match view { BufferViewMut::$variant(v) => Ok(v), other => Err(other) }
                }
                fn host<T: Element>(host: &HostBuffer<T>) -> Option<&kiln_core::HostBuffer<Self, T>> {
                    match host { HostBuffer::$variant(h) => Some(h), _ => None }
                }
                fn host_mut<T: Element>(host: &mut HostBuffer<T>) -> Option<&mut kiln_core::HostBuffer<Self, T>> {
                    match host { HostBuffer::$variant(h) => Some(h), _ => None }
                }
                fn event(event: &Event) -> Option<&kiln_core::Event<Self>> {
                    match event { Event::$variant(e) => Some(e), _ => None }
                }
                fn kernel(kernel: &Kernel) -> Option<&kiln_core::Kernel<Self>> {
                    match kernel { Kernel::$variant(k) => Some(k), _ => None }
                }
                fn array<T: Element>(array: &Array<T>) -> Option<&TypedArray<Self, T>> {
                    match array { Array::$variant(a) => Some(a), _ => None }
                }
                fn wrap_array<T: Element>(array: TypedArray<Self, T>) -> Array<T> {
                    Array::$variant(array)
                }
                fn graph(graph: &Graph) -> Option<&kiln_core::Graph<Self>> {
                    match graph { Graph::$variant(g) => Some(g), _ => None }
                }
                fn wrap_graph(graph: kiln_core::Graph<Self>) -> Graph {
                    Graph::$variant(graph)
                }
                fn wrap_device(device: kiln_core::Device<Self>) -> Device {
                    Device::$variant(device)
                }
                fn wrap_stream(stream: kiln_core::Stream<Self>) -> Stream {
                    Stream::$variant(stream)
                }
                fn wrap_buffer<T: Element>(buffer: kiln_core::Buffer<Self, T>) -> Buffer<T> {
                    Buffer::$variant(buffer)
                }
                fn wrap_view<T: Element>(view: kiln_core::BufferView<'_, Self, T>) -> BufferView<'_, T> {
                    BufferView::$variant(view)
                }
                fn wrap_view_mut<T: Element>(view: kiln_core::BufferViewMut<'_, Self, T>) -> BufferViewMut<'_, T> {
                    BufferViewMut::$variant(view)
                }
                fn wrap_host<T: Element>(host: kiln_core::HostBuffer<Self, T>) -> HostBuffer<T> {
                    HostBuffer::$variant(host)
                }
                fn wrap_event(event: kiln_core::Event<Self>) -> Event {
                    Event::$variant(event)
                }
                fn wrap_kernel(kernel: kiln_core::Kernel<Self>) -> Kernel {
                    Kernel::$variant(kernel)
                }
            }
        )*
    };
}

backend_list!(runtime_enums!());
