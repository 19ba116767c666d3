//! WGSL's one-pass compaction: the scan's decoupled look-back with
//! decoupled fallback over the tiles' counts (compact/fallback.wgsl on
//! scan/lookback.wgsl).

use std::sync::Arc;

use kiln_core::{Args, Backend, BufferView, BufferViewMut, Element, LaunchConfig, Program, Result, Stream};

use super::{Predicate, wgsl_header};
use crate::Number;
use crate::launch::{index_width, program};
use crate::scan::fallback::Lookback;

fn fallback_program<T: Number>(pred: Predicate<T>, indices: bool, lookback: Lookback) -> Arc<Program> {
    let name = format!(
        "kiln_copy_if_fallback_{}{}_{}_{}",
        pred.name(),
        if indices { "_indices" } else { "" },
        lookback.suffix(),
        T::DTYPE
    );
    program(&name, || {
        let out = if indices { "u32" } else { "T" };
        let buffers =
            [("src", "T", false), ("dst", out, true), ("count", "u32", true), ("status", "atomic<u32>", true)];
        let header = format!(
            "{}alias C = u32;\n\
             fn tile_value(i: u32) -> C {{ return select(0u, 1u, keep(src[i])); }}\n\
             fn flag_at(i: u32) -> u32 {{ return 0u; }}\n\
             fn store_flag(s: u32, f: u32) {{}}\n\
             fn load_flag(s: u32) -> u32 {{ return 0u; }}\n",
            wgsl_header(pred, &buffers)
        );
        let header = format!("{header}{}", out_values(lookback.items, indices));
        let program =
            Program::new(&name).wgsl(lookback.source(&header, include_str!("fallback.wgsl"))).define("KERNEL", &name);
        lookback.define(program)
    })
}

/// `out_values(first)`: what the `items` elements from `first` write if
/// kept (their values, or their indices), every load issued before the
/// first is used (one at a time, each kept element waited for its load).
/// An element past the end reads the last one instead (it is not kept).
fn out_values(items: usize, indices: bool) -> String {
    let ty = if indices { "u32" } else { "T" };
    let mut f = format!("fn out_values(first: u32) -> array<{ty}, {items}> {{\n    let last = params.n - 1u;\n");
    for k in 0..items {
        let value = if indices { format!("first + {k}u") } else { format!("src[min(first + {k}u, last)]") };
        f.push_str(&format!("    let v{k} = {value};\n"));
    }
    let all: Vec<String> = (0..items).map(|k| format!("v{k}")).collect();
    f.push_str(&format!("    return array<{ty}, {items}>({});\n}}\n", all.join(", ")));
    f
}

/// Compact `x` into `out` and `count` in one WGSL pass.
pub(super) fn one_pass<B: Backend, T: Number, O: Element>(
    stream: &Stream<B>,
    x: BufferView<'_, B, T>,
    pred: Predicate<T>,
    out: BufferViewMut<'_, B, O>,
    count: BufferViewMut<'_, B, u64>,
    indices: bool,
) -> Result<()> {
    let n = x.len();
    let device = stream.device();
    let lookback = Lookback::new(device, false);
    let prog = fallback_program::<T>(pred, indices, lookback);
    let kernel = device.kernel(&prog)?;
    let (mut status, groups) = lookback.state(stream, n)?;
    let args = Args::new().arg(x).arg(out).arg(count).arg(status.view_mut()).scalar(pred.value());
    let args = args.length(index_width(stream), n, prog.name())?;
    // SAFETY: the kernel reads x[0..n), writes out[0..count) with count <=
    // n <= out's length (checked by the caller), the two words of the u64
    // count, and status[0..1 + 2 tiles), as allocated by `state` for
    // `lookback`'s tiles over n, the elements per invocation it is compiled
    // for, so its workgroup arrays fit.
    unsafe { stream.launch(&kernel, LaunchConfig::new(groups, 256), args) }
}
