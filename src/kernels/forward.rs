//! The run-time tier's pattern functions, generated from the entries of
//! `kiln_kernels::entry_points!` (kernels/src/entries.rs): each takes a
//! [`Stream`](crate::Stream) and buffers or views of the run-time tier,
//! checks that every buffer is on the stream's device (an `Err` naming the
//! function and argument where it is not) and calls the typed function of
//! the same name on the stream's backend.

/// A run-time argument of an entry: `view` and `view_mut` take anything
/// that views a buffer, a `value` its type.
macro_rules! argument {
    (view $ty:ty) => { &impl $crate::View<$ty> };
    (view_mut $ty:ty) => { &mut impl $crate::ViewMut<$ty> };
    (value $ty:ty) => { $ty };
}
pub(crate) use argument;

/// The argument as the backend-neutral view the call converts.
macro_rules! viewed {
    (view $arg:ident) => {
        $arg.view()
    };
    (view_mut $arg:ident) => {
        $arg.view_mut()
    };
    (value $arg:ident) => {
        $arg
    };
}
pub(crate) use viewed;

/// The argument on stream `s`'s backend, or the mismatch error naming `what`.
macro_rules! typed {
    (view $s:ident, $what:expr, $arg:ident) => {
        &$crate::runtime::typed_view($what, $s, $arg)?
    };
    (view_mut $s:ident, $what:expr, $arg:ident) => {
        &mut $crate::runtime::typed_view_mut($what, $s, $arg)?
    };
    (value $s:ident, $what:expr, $arg:ident) => {
        $arg
    };
}
pub(crate) use typed;

/// The functions of one module's entries.
macro_rules! forward {
    ($module:ident;
     $(
        $(#[$attr:meta])*
        fn $name:ident $(<$($generic:ident: $bound:path),*>)? ($($arg:ident: $role:ident $ty:ty),* $(,)?) -> $ret:ty;
     )*
    ) => {
        $(
            $(#[$attr])*
            #[allow(clippy::too_many_arguments)]
            pub fn $name $(<$($generic: $bound),*>)? (
                stream: &$crate::Stream,
                $($arg: $crate::kernels::forward::argument!($role $ty)),*
            ) -> $crate::Result<$ret> {
                $(let $arg = $crate::kernels::forward::viewed!($role $arg);)*
                $crate::runtime::dispatch!(stream, Stream, s => kiln_kernels::$module::$name(
                    s,
                    $($crate::kernels::forward::typed!($role s, concat!(stringify!($name), ": ", stringify!($arg)), $arg)),*
                ))
            }
        )*
    };
}
pub(crate) use forward;
