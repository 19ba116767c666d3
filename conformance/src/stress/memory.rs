//! Memory operations: allocation churn from one byte to the largest size
//! allowed, and page-locked host buffers reused for many asynchronous copies.

use kiln_core::Backend;
use kiln_kernels::map::{MapOp, map_in_place};
use rand::Rng;
use rand::seq::SliceRandom;

use super::report::bytes;
use super::step::{Fault, Pinned, Started, Step, log_uniform};
use crate::{Expected, Tolerance};

/// One to three allocations of log-uniform sizes on random streams: each
/// filled with one byte value, its first and last bytes then written with
/// others, and its first, last and a random byte read back; then all are
/// dropped in random order.
pub(crate) fn churn<B: Backend>(step: &mut Step<'_, B>) -> Result<Started, Fault> {
    let count = step.rng.random_range(1..=3);
    let plans: Vec<_> = (0..count)
        .map(|_| {
            let size = log_uniform(&mut step.rng, 1, step.plan.max_alloc) as usize;
            let (si, s) = step.stream();
            let (fill, first, last): (u8, u8, u8) = (step.rng.random(), step.rng.random(), step.rng.random());
            let mid = step.rng.random_range(0..size);
            (si, s, size, fill, first, last, mid)
        })
        .collect();
    let sizes: Vec<String> = plans.iter().map(|p| format!("{} on stream {}", bytes(p.2 as u64), p.0)).collect();
    step.describe(format!("allocation churn: {}", sizes.join(", ")));
    let mut live = Vec::with_capacity(count);
    for (_, s, size, fill, first, last, mid) in plans {
        let mut buf = step.alloc::<u8>(&s, size)?;
        s.fill(&mut buf, fill)?;
        s.copy_to_device(&[first], &mut buf.slice_mut(..1)?)?;
        s.copy_to_device(&[last], &mut buf.slice_mut(size - 1..)?)?;
        step.tally().moved(2);
        // With one byte, the last write is the first byte too.
        let at = |i: usize| {
            if i == size - 1 {
                last
            } else if i == 0 {
                first
            } else {
                fill
            }
        };
        live.push((s, buf, [0, mid, size - 1], [at(0), at(mid), at(size - 1)]));
    }
    live.shuffle(&mut step.rng);
    for (s, buf, at, want) in &live {
        let mut got = vec![0u8; 3];
        for (g, &i) in got.iter_mut().zip(at) {
            s.copy_to_host(&buf.slice(i..i + 1)?, std::slice::from_mut(g))?;
        }
        step.tally().moved(3);
        let what = format!("bytes {at:?} of a {}-byte allocation", buf.len());
        step.check.expect(&what, &Expected::new(want.to_vec(), Tolerance::Exact), got)?;
    }
    live.shuffle(&mut step.rng);
    for l in live {
        drop(l);
    }
    Ok(Started::Done)
}

/// One to four round trips through the worker's page-locked buffers: new
/// data written into `up`, copied to the device asynchronously, `up`
/// overwritten at once (its accessor must wait for the copy in flight),
/// the data negated on the device or not, copied back into `down`
/// asynchronously, and `down` read (its accessor waits for that copy).
pub(crate) fn pinned<B: Backend>(step: &mut Step<'_, B>) -> Result<Started, Fault> {
    let rounds = step.rng.random_range(1..=4);
    let lens: Vec<usize> = step.pinned.iter().map(Pinned::len).collect();
    step.describe(format!("{rounds} round trip(s) through page-locked buffers of {lens:?} u32"));
    let mut unchecked: Vec<Option<Vec<u32>>> = vec![None; step.pinned.len()];
    for _ in 0..rounds {
        let p = step.rng.random_range(0..step.pinned.len());
        let (_, s) = step.stream();
        // The result still in this pair's `down` is checked before it is reused.
        if let Some(want) = unchecked[p].take() {
            check_down(step, p, want)?;
        }
        let data: Vec<u32> = crate::random_vec(&mut step.rng, lens[p]);
        step.pinned[p].up.as_mut_slice()?.copy_from_slice(&data);
        let mut d = step.alloc::<u32>(&s, lens[p])?;
        s.copy_to_device_async(&step.pinned[p].up, &mut d)?;
        step.pinned[p].up.as_mut_slice()?.fill(0xdead_beef);
        let negate = step.rng.random_bool(0.5);
        if negate {
            map_in_place(&s, MapOp::Negate, &mut d)?;
        }
        s.copy_to_host_async(&d, &mut step.pinned[p].down)?;
        drop(d);
        step.tally().moved(2 * lens[p] * size_of::<u32>());
        unchecked[p] = Some(if negate { data.iter().map(|v| v.wrapping_neg()).collect() } else { data });
    }
    for (p, want) in unchecked.into_iter().enumerate() {
        if let Some(want) = want {
            check_down(step, p, want)?;
        }
    }
    Ok(Started::Done)
}

fn check_down<B: Backend>(step: &Step<'_, B>, p: usize, want: Vec<u32>) -> Result<(), Fault> {
    let got = step.pinned[p].down.as_slice()?.to_vec();
    step.check.expect("page-locked read-back", &Expected::new(want, Tolerance::Exact), got)
}
