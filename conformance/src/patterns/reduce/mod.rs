//! reduce and reduce_into (sum, product, min, max), dot, argmin/argmax and
//! reduce_axis, against a sequential reference: integers exact (wrapping),
//! float sums within `eps * (4 log2(n + 1) + 2) * sum(|x|)` of a compensated
//! f64 sum, products of mostly +-1 factors within a few ulps, min, max and
//! arg-reductions exact; NaN and infinities by the documented rules; empty
//! inputs and mismatched operands refused without writing anything.
//!
//! Inputs sit at a random offset (0 to 3 elements) into their buffer, so
//! every run is also a run on a view at some 16-byte misalignment.
//!
//! One role a file: `values` draws what each operation is checked on,
//! `reference` folds it sequentially with an error bound; the patterns are
//! `whole` (reduce and dot of a whole array), `arg`, `axis`, `specials`
//! (NaN and infinities) and `refusals` (with the checks of a refused call
//! the others share).

mod arg;
mod axis;
mod reference;
mod refusals;
mod specials;
mod values;
mod whole;

pub(super) use values::shape;

use kiln_core::{Backend, DType};
use kiln_kernels::reduce::{ArgOp, ReduceOp};

use crate::Cases;

use arg::Arg;
use axis::Axis;
use whole::{Dot, Reduce};

/// Add the reduce cases to `group`: every operation on every number type,
/// dot, argmin/argmax, both axes, NaN and infinities, refusals.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    for op in ReduceOp::ALL {
        c.numbers_and_halves(group, format!("reduce/{op}"), Reduce { op });
    }
    c.numbers_and_halves(group, "reduce/dot", Dot);
    for op in ArgOp::ALL {
        c.numbers_and_halves(group, format!("reduce/{op}"), Arg { op });
    }
    for axis in [0, 1] {
        for op in ReduceOp::ALL {
            c.numbers_and_halves(group, format!("reduce_axis{axis}/{op}"), Axis { op, axis });
        }
    }
    c.one(group, "reduce/nan_inf", DType::F32, specials::nan_inf::<B, f32>);
    c.one(group, "reduce/nan_inf", DType::F64, specials::nan_inf::<B, f64>);
    c.one(group, "reduce/refusals", DType::F32, refusals::refusals::<B>);
}
