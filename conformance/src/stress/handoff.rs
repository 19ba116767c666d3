//! Work that crosses streams: produced on stream A, handed to stream B by an
//! event and consumed there; and the use-after-free case, an input read by
//! stream B that is dropped as soon as B's read is enqueued, while stream A
//! allocates and overwrites buffers of the same size.

use std::fmt;

use kiln_core::{Backend, Stream};
use kiln_kernels::Number;
use kiln_kernels::elementwise::{BinaryOp, binary};
use kiln_kernels::fill::fill;
use kiln_kernels::map::{MapOp, map, map_in_place};
use kiln_kernels::reduce::{ReduceOp, reduce_into};
use kiln_kernels::scan::{ScanKind, scan};
use rand::Rng;

use super::step::{Fault, Owned, Started, Step, inputs, prefix_sums, read, total};
use crate::{Arith, CaseRng, Expected, Tolerance, binary as reference, unary};

/// What stream B does with the data it was handed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Consumer {
    /// A device-to-device copy.
    Copy,
    /// `z = y + w`, `w` uploaded on B.
    Add,
    /// An inclusive scan.
    Scan,
    /// A sum left on the device (`reduce_into`).
    Sum,
}

impl Consumer {
    fn random(rng: &mut CaseRng) -> Consumer {
        [Consumer::Copy, Consumer::Add, Consumer::Scan, Consumer::Sum][rng.random_range(0..4)]
    }
}

impl fmt::Display for Consumer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Consumer::Copy => "a copy",
            Consumer::Add => "elementwise add",
            Consumer::Scan => "an inclusive scan",
            Consumer::Sum => "reduce_into sum",
        })
    }
}

/// Enqueue `consumer` reading `y` (whose contents are `y_host`) on stream
/// `b`; the output, poisoned first, and what it must hold.
fn consume<B: Backend, T: Arith + Number>(
    step: &mut Step<'_, B>,
    consumer: Consumer,
    b: &Stream<B>,
    y: &Owned<B, T>,
    y_host: &[T],
) -> Result<(Expected<T>, Owned<B, T>), Fault> {
    let expected = match consumer {
        Consumer::Copy => Expected::new(y_host.to_vec(), Tolerance::Exact),
        Consumer::Add => {
            let w: Vec<T> = inputs(&mut step.rng, y_host.len());
            let want = y_host.iter().zip(&w).map(|(&y, &w)| reference(BinaryOp::Add, y, w)).collect();
            let expected = Expected::new(want, Tolerance::Ulps(1));
            let wb = step.upload(b, &w)?;
            let mut z = step.poisoned(b, &expected.values)?;
            binary(b, BinaryOp::Add, y, &wb, &mut z)?;
            return Ok((expected, z));
        }
        Consumer::Scan => prefix_sums(y_host),
        Consumer::Sum => total(y_host),
    };
    let mut z = step.poisoned(b, &expected.values)?;
    match consumer {
        Consumer::Copy => b.copy(y, &mut z)?,
        Consumer::Scan => scan(b, ScanKind::Inclusive, y, &mut z)?,
        Consumer::Sum => reduce_into(b, ReduceOp::Sum, y, &mut z)?,
        Consumer::Add => {}
    }
    Ok((expected, z))
}

/// `y = negate(x)` or `abs(x)` (exact, so the host knows `y`) on stream A,
/// an event, and B, after waiting on it, consumes `y`.
pub(crate) fn handoff<B: Backend, T: Arith + Number>(step: &mut Step<'_, B>) -> Result<Started, Fault> {
    let n = step.plan.len(&mut step.rng);
    let ((ai, a), (bi, b)) = step.two_streams();
    let producer = if step.rng.random() { MapOp::Negate } else { MapOp::Abs };
    let consumer = Consumer::random(&mut step.rng);
    step.describe(format!(
        "{n} {} made by map {producer} on stream {ai}, handed by an event to stream {bi} for {consumer}",
        T::DTYPE
    ));
    let Some(f) = unary::<T>(producer) else {
        return Ok(Started::Done);
    };
    let x: Vec<T> = inputs(&mut step.rng, n);
    let y_host: Vec<T> = x.iter().map(|&v| f(v)).collect();
    let xb = step.upload(&a, &x)?;
    let mut y = step.alloc::<T>(&a, n)?;
    map(&a, producer, &xb, &mut y)?;
    drop(xb);
    let ready = a.record_event()?;
    b.wait(&ready)?;
    let (expected, out) = consume(step, consumer, &b, &y, &y_host)?;
    let check = step.check.clone();
    Ok(Started::Pending(Box::new(move || {
        let got = read(&check.tally, &b, &out)?;
        // `y` lives on A and was read on B: its free must wait for that read.
        drop(y);
        check.expect(&format!("{consumer} on the second stream"), &expected, got)
    })))
}

/// The use-after-free case. `x` is uploaded on stream A; stream B, busy
/// with other work first when the coin says so, waits for the upload and
/// reads `x`; `x` is dropped as soon as that read is enqueued, and A then
/// allocates buffers of the same size and overwrites them, which reuses
/// `x`'s memory if its free did not wait for B. B's result must be right.
pub(crate) fn drop_in_flight<B: Backend, T: Arith + Number>(step: &mut Step<'_, B>) -> Result<Started, Fault> {
    let n = step.plan.len(&mut step.rng).max(1);
    let ((ai, a), (bi, b)) = step.two_streams();
    let consumer = Consumer::random(&mut step.rng);
    let busy = step.rng.random_bool(0.5).then_some(step.plan.max_elements);
    let refills = step.rng.random_range(1..=3);
    step.describe(format!(
        "{n} {} uploaded on stream {ai}, read by {consumer} on stream {bi}{}, dropped at once; \
         then {refills} buffer(s) of the same size allocated and overwritten on stream {ai}",
        T::DTYPE,
        busy.map(|m| format!(" (after {m} elements of other work there)")).unwrap_or_default()
    ));
    if let Some(m) = busy {
        // Work ahead of the read on B, so that the read comes late.
        let mut work = step.alloc::<T>(&b, m)?;
        fill(&b, &mut work, T::index(3))?;
        map_in_place(&b, MapOp::Square, &mut work)?;
        map_in_place(&b, MapOp::Negate, &mut work)?;
    }
    let x_host: Vec<T> = inputs(&mut step.rng, n);
    let x = step.upload(&a, &x_host)?;
    let uploaded = a.record_event()?;
    b.wait(&uploaded)?;
    let (expected, out) = consume(step, consumer, &b, &x, &x_host)?;
    drop(x);
    let value = T::random(&mut step.rng);
    let mut reuse = Vec::with_capacity(refills);
    for _ in 0..refills {
        let mut r = step.alloc::<T>(&a, n)?;
        fill(&a, &mut r, value)?;
        reuse.push(r);
    }
    let check = step.check.clone();
    Ok(Started::Pending(Box::new(move || {
        let got = read(&check.tally, &b, &out)?;
        drop(reuse);
        check.expect(&format!("{consumer} of a buffer dropped while in use"), &expected, got)
    })))
}
