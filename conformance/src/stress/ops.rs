//! The operations a stress step picks from, each started on the step: one
//! pattern on one stream (`patterns.rs`), work crossing streams and buffers
//! dropped while another stream reads them (`handoff.rs`), allocation churn
//! and pinned buffers reused (`memory.rs`).

use kiln_core::{Backend, DType};
use kiln_kernels::Number;

use super::kind::OpKind;
use super::step::{Fault, Started, Step};
use super::{handoff, memory, patterns};
use crate::Arith;

/// Start operation `op`: enqueue its work and return what is left to check.
pub(crate) fn start<B: Backend>(op: OpKind, step: &mut Step<'_, B>) -> Result<Started, Fault> {
    match op {
        OpKind::Sort => patterns::sort_keys(step),
        OpKind::Churn => memory::churn(step),
        OpKind::Pinned => memory::pinned(step),
        _ => match step.dtype() {
            DType::I32 => numeric::<B, i32>(op, step),
            DType::U32 => numeric::<B, u32>(op, step),
            DType::F32 => numeric::<B, f32>(op, step),
            _ => numeric::<B, f64>(op, step),
        },
    }
}

/// The operations that run on any numeric dtype.
fn numeric<B: Backend, T: Arith + Number>(op: OpKind, step: &mut Step<'_, B>) -> Result<Started, Fault> {
    match op {
        OpKind::Map => patterns::map_op::<B, T>(step),
        OpKind::Binary => patterns::binary_op::<B, T>(step),
        OpKind::Axpy => patterns::axpy_op::<B, T>(step),
        OpKind::ReduceSum => patterns::reduce_sum::<B, T>(step),
        OpKind::Scan => patterns::scan_op::<B, T>(step),
        OpKind::Fill => patterns::fill_op::<B, T>(step),
        OpKind::Handoff => handoff::handoff::<B, T>(step),
        OpKind::DropInFlight => handoff::drop_in_flight::<B, T>(step),
        OpKind::Sort | OpKind::Churn | OpKind::Pinned => Ok(Started::Done),
    }
}
