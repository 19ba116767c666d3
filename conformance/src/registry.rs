//! Every case of the suite, in one list. A new pattern is one entry here.

use kiln_core::Backend;
use kiln_kernels::elementwise::BinaryOp;
use kiln_kernels::map::MapOp;

use crate::patterns::{
    AsyncRoundTrip, Axpy, Binary, CopyRange, Fill, FillView, Map, MismatchedLengths, RoundTrip, Sequence,
};
use crate::{Case, Cases};

/// The groups cases belong to; [`conformance_tests!`](crate::conformance_tests)
/// stamps one test per group.
pub const GROUPS: [&str; 13] = [
    "fill",
    "sequence",
    "map",
    "elementwise",
    "memory",
    "transpose",
    "matmul",
    "image",
    "sort",
    "reduce",
    "scan",
    "compact",
    "histogram",
];

/// Every case, on backend `B`, in matrix order.
///
/// # Examples
/// ```
/// let cases = kiln_conformance::cases::<kiln_cpu::Cpu>();
/// assert!(cases.iter().any(|c| c.pattern == "map/sqrt" && c.dtype == kiln_core::DType::I32));
/// assert!(cases.iter().all(|c| kiln_conformance::GROUPS.contains(&c.group)));
/// ```
pub fn cases<B: Backend>() -> Vec<Case<B>> {
    let mut c = Cases::<B>::new();
    c.elements("fill", "fill", Fill);
    c.numbers("sequence", "sequence", Sequence);
    for in_place in [false, true] {
        let form = if in_place { "map_in_place" } else { "map" };
        for op in MapOp::ALL {
            c.numbers("map", format!("{form}/{op}"), Map { op, in_place });
        }
    }
    for in_place in [false, true] {
        let form = if in_place { "elementwise_in_place" } else { "elementwise" };
        for op in BinaryOp::ALL {
            c.numbers("elementwise", format!("{form}/{op}"), Binary { op, in_place });
        }
    }
    c.numbers("elementwise", "axpy", Axpy { in_place: false });
    c.numbers("elementwise", "axpy_in_place", Axpy { in_place: true });
    c.numbers("elementwise", "elementwise/mismatched_lengths", MismatchedLengths);
    c.elements("memory", "memory/round_trip", RoundTrip);
    c.elements("memory", "memory/async_round_trip", AsyncRoundTrip);
    c.elements("memory", "memory/copy_range", CopyRange);
    c.elements("memory", "memory/fill_view", FillView);
    crate::patterns::add_transpose(&mut c);
    crate::patterns::add_matmul(&mut c);
    crate::patterns::add_image(&mut c);
    crate::patterns::add_sort(&mut c);
    crate::patterns::add_reduce(&mut c);
    crate::patterns::add_scan(&mut c);
    crate::patterns::add_compact(&mut c);
    crate::patterns::add_histogram(&mut c);
    c.into_vec()
}
