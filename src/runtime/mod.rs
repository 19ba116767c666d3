//! The run-time tier: devices, streams, buffers, events and kernels whose
//! backend is chosen while the program runs.
//!
//! Each type is an enum with one arm per backend compiled in (the CPU
//! always; CUDA and wgpu behind the `cuda` and `wgpu` features), in the
//! manner of candle's `Device`: a program keeps "a buffer on whatever device
//! was found" in a plain struct field, calls plain functions, and gets a
//! plain [`Result`](crate::Result) back. Every arm holds the typed tier's
//! value (`kiln_core::Buffer<B, T>`, ...), so a call costs one `match` more
//! than the typed call it forwards to.
//!
//! The arms are written once, in the one list of backends
//! ([`kiln_core::backend_list!`], expanded here by [`backend_list`] behind
//! each backend's feature); every enum, every `match` and the [`Tier`]
//! trait that lets generic code go from the run-time tier to the typed one
//! are generated from that list. Using a buffer of one
//! backend with a stream of another is an [`Error::DeviceMismatch`](crate::Error::DeviceMismatch)
//! naming both; two devices of one backend are told apart by the typed tier,
//! with the same error.
//!
//! # Examples
//! ```
//! use kiln::kernels::reduce::{reduce, ReduceOp};
//!
//! # fn main() -> kiln::Result<()> {
//! let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0)?;
//! let s = dev.stream();
//! let x = s.upload(&[1.0f32, 2.0, 3.0, 4.0])?;
//! assert_eq!(reduce(&s, ReduceOp::Sum, &x)?, 10.0);
//! # Ok(()) }
//! ```

mod args;
mod buffer;
mod device;
mod event;
mod graph;
mod host;
mod stream;
mod tier;

pub use args::{Args, KernelArg};
pub use buffer::{View, ViewMut};
pub(crate) use buffer::{typed_view, typed_view_mut};
pub use tier::{Array, Buffer, BufferView, BufferViewMut, Device, Event, Graph, HostBuffer, Kernel, Stream, Tier};
pub(crate) use tier::{ExprArm, ExprTier};

/// Invoke `$callback! { ($($args)*) ARMS }` with one arm per backend compiled
/// in: `#[cfg(..)] Variant(BackendType),`, from the entries of the one list
/// of backends, [`kiln_core::backend_list!`], each behind its feature (a
/// `cfg` in a macro's expansion is evaluated in the crate expanding it:
/// here). The run-time enums, their `match`es, the [`Tier`] impls and the
/// registry ([`crate::registry`]: `Device::open`, `best`, `all`, `probe`
/// and `kiln devices`) are generated from it; the list says how to add a
/// backend.
macro_rules! backend_list {
    ($($callback:ident)::+ ! ($($args:tt)*)) => {
        kiln_core::backend_list! { $crate::runtime::compiled_arms!(($($callback)::+) ($($args)*)) }
    };
}
pub(crate) use backend_list;

/// The entries of [`kiln_core::backend_list!`] as the arms `backend_list!`
/// hands its callback.
macro_rules! compiled_arms {
    ((($($callback:tt)*) ($($args:tt)*)) $(
        $(#[doc = $doc:literal])*
        $variant:ident { name: $name:literal, preference: $preference:literal, $(feature: $feature:literal,)? backend: $backend:path },
    )*) => {
        $($callback)*! { ($($args)*)
            $(#[cfg(all($(feature = $feature)?))] $variant($backend),)*
        }
    };
}
pub(crate) use compiled_arms;

/// `dispatch!(value, Enum, binding => body)`: match `value` (an `Enum` of
/// the run-time tier) and run `body` with `binding` bound to the typed value
/// and the type alias `B` naming its backend. The body is compiled once per
/// backend.
macro_rules! dispatch {
    ($value:expr, $enum:ident, $bind:ident => $body:expr) => {
        $crate::runtime::backend_list!($crate::runtime::dispatch_arms!($value, $enum, $bind, $body))
    };
}
pub(crate) use dispatch;

macro_rules! dispatch_arms {
    (($value:expr, $enum:ident, $bind:ident, $body:expr) $($(#[$attr:meta])* $variant:ident($backend:path),)*) => {
        match $value {
            $(
                $(#[$attr])*
                $enum::$variant($bind) => {
                    #[allow(dead_code)]
                    type B = $backend;
                    $body
                }
            )*
        }
    };
}
pub(crate) use dispatch_arms;

/// `device()`, `kind()` and `typed()` of a run-time handle that is not
/// generic over the element type: `handle_basics!(Event, event, "event")`,
/// the second name being its [`Tier`] method.
macro_rules! handle_basics {
    ($handle:ident, $typed:ident, $what:literal) => {
        impl $handle {
            #[doc = concat!("The device the ", $what, " belongs to.")]
            pub fn device(&self) -> Device {
                dispatch!(self, $handle, h => B::wrap_device(h.device().clone()))
            }

            /// The backend.
            pub fn kind(&self) -> kiln_core::BackendKind {
                dispatch!(self, $handle, _h => <B as kiln_core::Backend>::KIND)
            }

            #[doc = concat!("The typed ", $what, ", if this one is of backend `B`.")]
            pub fn typed<B: Tier>(&self) -> Option<&kiln_core::$handle<B>> {
                B::$typed(self)
            }
        }
    };
}
pub(crate) use handle_basics;

/// The error for a value of one backend or device used with another's.
pub(crate) fn mismatch(what: &str, first: String, second: String) -> crate::Error {
    crate::Error::DeviceMismatch { what: what.to_string(), first, second }
}

/// "cuda:0 NVIDIA H100 80GB HBM3", for mismatch errors.
pub(crate) fn describe<B: kiln_core::Backend>(dev: &kiln_core::Device<B>) -> String {
    format!("{}:{} {}", B::KIND, dev.info().ordinal, dev.name())
}
