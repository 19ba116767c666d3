//! The list of the suite's groups, written once, and every case, built from it.
//!
//! [`for_each_group!`](crate::for_each_group) holds the list. [`GROUPS`],
//! [`cases`] and the tests [`conformance_tests!`](crate::conformance_tests)
//! stamps into each backend all expand from it, so a new group is one line
//! there and a new pattern one entry in its group's file under
//! [`patterns`](crate::patterns).

use kiln_core::Backend;

use crate::{Case, Cases};

/// Expand `then!` with the suite's groups, in matrix order: after `args`
/// (one token tree, passed through), one `name => add,` per group, where
/// `name` is the group's name as an identifier and `add` its function in
/// [`patterns`](crate::patterns), which adds the group's cases.
///
/// This is the one list of groups; a new group is one line here.
///
/// # Examples
/// ```
/// macro_rules! names {
///     ([$prefix:literal] $($group:ident => $add:ident,)*) => {
///         [$(concat!($prefix, stringify!($group))),*]
///     };
/// }
/// let names = kiln_conformance::for_each_group!(names! ["conformance_"]);
/// assert!(names.contains(&"conformance_reduce"));
/// assert_eq!(names.len(), kiln_conformance::GROUPS.len());
/// ```
#[macro_export]
macro_rules! for_each_group {
    ($($then:ident)::+ ! $args:tt) => {
        $($then)::+! { $args
            fill => add_fill,
            sequence => add_sequence,
            map => add_map,
            elementwise => add_elementwise,
            memory => add_memory,
            transpose => add_transpose,
            matmul => add_matmul,
            image => add_image,
            sort => add_sort,
            reduce => add_reduce,
            scan => add_scan,
            compact => add_compact,
            histogram => add_histogram,
            user => add_user,
            array => add_array,
            random => add_random,
            fft => add_fft,
            linalg => add_linalg,
        }
    };
}

/// [`GROUPS`] and [`cases`], from the list.
macro_rules! registry {
    ([] $($group:ident => $add:ident,)*) => {
        /// The groups cases belong to, in matrix order;
        /// [`conformance_tests!`](crate::conformance_tests) stamps one test
        /// per group.
        ///
        /// # Examples
        /// ```
        /// assert_eq!(kiln_conformance::GROUPS[0], "fill");
        /// assert!(kiln_conformance::GROUPS.contains(&"reduce"));
        /// ```
        pub const GROUPS: &[&str] = &[$(stringify!($group)),*];

        /// Every case, on backend `B`, in matrix order: each group's cases,
        /// in the order of [`GROUPS`].
        ///
        /// # Examples
        /// ```
        /// let cases = kiln_conformance::cases::<kiln_cpu::Cpu>();
        /// assert!(cases.iter().any(|c| c.pattern == "map/sqrt" && c.dtype == kiln_core::DType::I32));
        /// assert!(cases.iter().all(|c| kiln_conformance::GROUPS.contains(&c.group)));
        /// ```
        pub fn cases<B: Backend>() -> Vec<Case<B>> {
            let mut c = Cases::<B>::new();
            $(crate::patterns::$add(&mut c, stringify!($group));)*
            c.into_vec()
        }
    };
}

crate::for_each_group!(registry![]);
