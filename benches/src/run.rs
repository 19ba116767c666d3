//! Running one case on one device: inputs, rotation, the timed operation.

use kiln_core::{Args, Backend, Buffer, DType, Error, Result, Stream};
use kiln_kernels::elementwise::{BinaryOp, axpy, binary};
use kiln_kernels::expr::var;
use kiln_kernels::fill::{fill, sequence};
use kiln_kernels::map::map;
use kiln_kernels::user::Elementwise;
use rand::{Rng, SeedableRng};

use crate::case::{Case, Pattern};
use crate::options::{RunOptions, set_count};
use crate::timing::{Timing, time_runs};

/// Why a case was not run on a device (too big, a dtype it lacks).
pub fn skip_reason<B: Backend>(stream: &Stream<B>, case: &Case) -> Option<String> {
    if let Some(reason) = crate::matrix::skip_reason(stream, case) {
        return Some(reason);
    }
    let info = stream.device().info();
    let features = info.features;
    let has_dtype = match case.dtype {
        DType::F64 => features.f64,
        DType::F16 => features.f16,
        DType::BF16 => features.bf16,
        _ => true,
    };
    if !has_dtype {
        return Some(format!("{} has no {} arithmetic", stream.device().name(), case.dtype));
    }
    let array = case.n as u64 * case.dtype.size() as u64;
    if array > info.limits.max_binding_bytes || array > info.limits.max_buffer_bytes {
        return Some(format!(
            "{array} bytes per array exceed this device's largest buffer binding ({} bytes)",
            info.limits.max_binding_bytes.min(info.limits.max_buffer_bytes)
        ));
    }
    let needed = array * case.pattern.arrays() as u64;
    let budget = info.memory_bytes / 2;
    if info.memory_bytes > 0 && needed > budget {
        return Some(format!("needs {needed} bytes, over half of the device's {} bytes", info.memory_bytes));
    }
    None
}

/// Time `case` on `stream`. Inputs are random (never zeros), allocated and
/// uploaded before timing; small working sets are rotated among several
/// buffer sets so that the numbers measure memory, not cache.
pub fn run_case<B: Backend>(stream: &Stream<B>, case: &Case, opts: &RunOptions) -> Result<Timing> {
    if crate::matrix::handles(case.pattern) {
        return crate::matrix::run_case(stream, case, opts);
    }
    if crate::parallel::handles(case.pattern) {
        return crate::parallel::run_case(stream, case, opts);
    }
    if crate::array::handles(case.pattern) {
        return crate::array::run_case(stream, case, opts);
    }
    if crate::latency::handles(case.pattern) {
        return crate::latency::run_case(stream, case, opts);
    }
    match case.dtype {
        DType::F32 => run_typed::<B, f32>(stream, case, opts, |r| r.random_range(0.5f32..2.0)),
        DType::F64 => run_typed::<B, f64>(stream, case, opts, |r| r.random_range(0.5f64..2.0)),
        DType::I32 => run_typed::<B, i32>(stream, case, opts, |r| r.random_range(1i32..1000)),
        DType::U32 => run_typed::<B, u32>(stream, case, opts, |r| r.random_range(1u32..1000)),
        d => Err(Error::invalid("bench", format!("no bench inputs for {d}"))),
    }
}

fn run_typed<B: Backend, T: kiln_kernels::Number>(
    stream: &Stream<B>,
    case: &Case,
    opts: &RunOptions,
    draw: impl Fn(&mut rand_chacha::ChaCha8Rng) -> T,
) -> Result<Timing> {
    let n = case.n;
    let sets = set_count(stream, case.pattern.bytes(n, case.dtype));
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(opts.seed ^ n as u64);
    let host: Vec<T> = (0..n).map(|_| draw(&mut rng)).collect();
    let mut buffers: Vec<Vec<Buffer<B, T>>> = Vec::with_capacity(sets);
    for _ in 0..sets {
        let set = (0..case.pattern.arrays()).map(|_| stream.upload(&host)).collect::<Result<Vec<_>>>()?;
        buffers.push(set);
    }
    stream.synchronize()?;
    let alpha: T = draw(&mut rng);
    let t = kiln_kernels::expr::Ty::from(T::DTYPE);
    let user_axpy = Elementwise::new("bench_axpy")
        .scalar("a", t.clone())
        .input("x", t.clone())
        .input("y", t.clone())
        .output("z", t)
        .set("z", var("a") * var("x") + var("y"))
        .build()?;
    time_runs(stream, &opts.sampling(), |i| {
        let set = &mut buffers[i % sets];
        let (inputs, outputs) = set.split_at_mut(case.pattern.arrays().saturating_sub(1));
        let out = &mut outputs[0];
        match case.pattern {
            Pattern::CopyD2d => stream.copy(&inputs[0], out),
            Pattern::Fill => fill(stream, out, alpha),
            Pattern::Sequence => sequence(stream, out, alpha, alpha),
            Pattern::Map(op) => map(stream, op, &inputs[0], out),
            Pattern::VectorAdd => binary(stream, BinaryOp::Add, &inputs[0], &inputs[1], out),
            Pattern::Axpy => axpy(stream, alpha, &inputs[0], &inputs[1], out),
            Pattern::UserAxpy => {
                user_axpy.launch(stream, Args::new().scalar(alpha).arg(&inputs[0]).arg(&inputs[1]).arg(out))
            }
            p => Err(Error::invalid("bench", format!("{} is not an elementwise pattern", p.name()))),
        }
    })
}
