//! The rule a capture ends by: every stream that joined it is joined back
//! into the stream that began it (CUDA's, for the same reason: a graph has
//! one end, which the replaying stream waits for).

use std::collections::HashMap;

use super::record::{Op, Step};
use crate::{Backend, Error, Result};

/// `Ok` when every step is an ancestor of lane 0's last step, through
/// program order on each lane and its joins; otherwise an error naming the
/// first lane left hanging.
pub(crate) fn check<B: Backend>(steps: &[Step<B>]) -> Result<()> {
    let Some(end) = steps.iter().rposition(|s| s.lane == 0) else {
        return Ok(());
    };
    let mut previous = vec![None; steps.len()];
    let mut last = HashMap::new();
    let mut marks = HashMap::new();
    for (i, step) in steps.iter().enumerate() {
        previous[i] = last.insert(step.lane, i);
        if let Op::Mark(m) = step.op {
            marks.insert(m, i);
        }
    }
    let mut seen = vec![false; steps.len()];
    let mut stack = vec![end];
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        stack.extend(previous[i]);
        if let Op::Join(m) = steps[i].op {
            stack.extend(marks.get(&m).copied());
        }
    }
    match steps.iter().zip(&seen).find(|(_, seen)| !**seen) {
        None => Ok(()),
        Some((step, _)) => {
            let count = steps.iter().zip(&seen).filter(|(s, seen)| s.lane == step.lane && !**seen).count();
            Err(Error::graph(
                "Stream::end_capture",
                format!(
                    "a stream that joined the capture (lane {}) has {count} step(s) of work not joined back into the \
                     stream that began it: record an event on that stream after its work and wait for it on the \
                     capturing stream before ending the capture",
                    step.lane
                ),
            ))
        }
    }
}
