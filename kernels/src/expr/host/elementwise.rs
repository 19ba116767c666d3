//! Elementwise launches on the CPU: the column machine (`host_eval.rs`)
//! run over chunks of elements, fixed ranges of chunks in parallel with
//! rayon.

use kiln_core::{HostArgs, Result};
use rayon::prelude::*;

use crate::expr::check::{Role, Typed};
use crate::expr::host::eval::{Exec, Machine, internal};
use crate::expr::host::{CHUNK, Slice, SliceMut, TASK_CHUNKS, scalar_value, store};
use crate::expr::value::Value;
use crate::stream_store;

/// Run an elementwise body over a launch's arguments: the arguments in
/// declaration order, each raw input's length, then the element count.
pub(crate) fn elementwise(roles: &[Role], body: &Typed, args: &mut HostArgs<'_>) -> Result<()> {
    let mut inputs: Vec<Option<Slice<'_>>> = vec![None; roles.len()];
    let mut scalars: Vec<Option<Value>> = vec![None; roles.len()];
    let mut outputs: Vec<(usize, Vec<SliceMut<'_>>)> = Vec::new();
    for (p, role) in roles.iter().enumerate() {
        let d = body.dtypes[p];
        match role {
            Role::Input | Role::Raw => inputs[p] = Some(Slice::input(args, p, d)?),
            Role::Scalar => scalars[p] = Some(scalar_value(args, p, d)?),
            Role::Output | Role::InOut => {}
        }
    }
    let task = CHUNK * TASK_CHUNKS;
    let mut out_bytes = 0;
    for (p, role) in roles.iter().enumerate() {
        if role.writes() {
            let out = SliceMut::output(args, p, body.dtypes[p])?;
            out_bytes += out.len() * body.dtypes[p].size();
            outputs.push((p, out.chunks_of(task)));
        }
    }
    // Outputs too large to stay in cache are written past it: a plain
    // store fetches its line first.
    let stream = out_bytes >= stream_store::STREAM_FROM;
    // The first input's length (inputs are indexed by parameter, so a
    // parameter declared before it, of any role, must not shift the pairing).
    let n = inputs.iter().zip(roles).find_map(|(s, r)| s.as_ref().filter(|_| *r == Role::Input)).map(Slice::len);
    let n = n.or_else(|| outputs.first().map(|(_, c)| c.iter().map(SliceMut::len).sum())).unwrap_or(0);
    let mut per_task: Vec<Vec<(usize, SliceMut<'_>)>> = (0..n.div_ceil(task)).map(|_| Vec::new()).collect();
    for (p, chunks) in outputs {
        for (t, c) in chunks.into_iter().enumerate() {
            if let Some(slot) = per_task.get_mut(t) {
                slot.push((p, c));
            }
        }
    }
    // In-out arguments are read from their own chunk, before it is stored.
    let local: Vec<usize> = (0..roles.len()).filter(|p| roles[*p] == Role::InOut).collect();
    let (inputs, scalars, local) = (&inputs[..], &scalars[..], &local[..]);
    let stores: Vec<(usize, u32)> = body.stores.iter().map(|(p, v)| (*p as usize, *v)).collect();
    per_task.into_par_iter().enumerate().try_for_each_init(
        || Machine::new(body),
        |machine, (t, mut outs)| {
            let _fence = stream_store::FenceOnDrop(stream);
            let mut start = t * task;
            let end = n.min(start + task);
            while start < end {
                let len = CHUNK.min(end - start);
                let at = start - t * task;
                if outs.iter().any(|(_, o)| o.len() < at + len) {
                    return Err(internal("store: an output is shorter than the inputs"));
                }
                if local.is_empty() {
                    let exec = Exec { start, len, n, inputs, scalars, local };
                    machine.run(&exec)?;
                    for (p, out) in outs.iter_mut() {
                        if let Some((_, v)) = stores.iter().find(|(q, _)| q == p) {
                            machine.store(*v, &exec, &mut out.sub(at, at + len), stream)?;
                        }
                    }
                } else {
                    // In-out arguments are read from their own chunk; every
                    // stored value is settled in a column before any is stored.
                    let mut task_inputs = inputs.to_vec();
                    for (p, c) in &outs {
                        if roles[*p] == Role::InOut {
                            task_inputs[*p] = Some(c.as_slice().sub(at, at + len));
                        }
                    }
                    let exec = Exec { start, len, n, inputs: &task_inputs, scalars, local };
                    machine.run(&exec)?;
                    for (_, v) in &stores {
                        machine.settle(*v, &exec)?;
                    }
                    for (p, out) in outs.iter_mut() {
                        if let Some((_, v)) = stores.iter().find(|(q, _)| q == p) {
                            store(machine.column(*v), &mut out.sub(at, at + len), stream)?;
                        }
                    }
                }
                start += len;
            }
            Ok(())
        },
    )
}
