//! A data-parallel sum over every CUDA device found: the input is split into
//! one shard per device, each device sums its shard (kiln's reduction, on
//! its own stream), and one NCCL all-reduce leaves the total on every
//! device. One GPU gives a communicator of one rank; any number works.
//!
//! ```text
//! cargo run --release --example data_parallel_sum            # 64 Mi floats
//! cargo run --release --example data_parallel_sum -- 1000    # or n of them
//! ```
//!
//! Without a CUDA device or without the NCCL library it says so and exits
//! successfully: there is nothing to run.

use std::process::ExitCode;

#[cfg(feature = "cuda")]
fn run(n: usize) -> kiln::Result<Option<String>> {
    use kiln::Cuda;
    use kiln::nccl::{Comms, ReduceOp, nccl_version};
    use kiln::typed::Device;
    use kiln::typed::kernels::reduce::{ReduceOp as Reduce, reduce_into};

    let Ok(found) = Device::<Cuda>::list() else { return Ok(None) };
    if found.is_empty() {
        return Ok(None);
    }
    if let Err(e) = nccl_version() {
        println!("{e}");
        return Ok(None);
    }
    let devices = found.iter().map(|d| Device::<Cuda>::open(d.ordinal)).collect::<kiln::Result<Vec<_>>>()?;
    let comms = Comms::new(&devices)?;
    let streams: Vec<_> = devices.iter().map(|d| d.stream()).collect();
    // Values whose float sum is exact in any order: multiples of 1/4 below 256.
    let xs: Vec<f32> = (0..n).map(|i| ((i * 7919) % 1024) as f32 * 0.25).collect();
    let want: f64 = xs.iter().map(|&x| x as f64).sum();
    let shard = n.div_ceil(devices.len());
    let mut partial = Vec::new();
    for (s, chunk) in streams.iter().zip(xs.chunks(shard.max(1)).chain(std::iter::repeat(&[][..]))) {
        let x = s.upload(chunk)?;
        let mut sum = s.alloc::<f32>(1)?;
        reduce_into(s, Reduce::Sum, &x, &mut sum)?;
        partial.push(sum);
    }
    comms.all_reduce_in_place(&streams, &mut partial, ReduceOp::Sum)?;
    for (d, p) in devices.iter().zip(&partial) {
        let got = p.to_vec()?[0] as f64;
        if (got - want).abs() > want.abs() * 1e-6 {
            return Err(kiln::Error::invalid(
                "data_parallel_sum",
                format!("{} holds {got}, the host sums {want}", d.name()),
            ));
        }
    }
    Ok(Some(format!("{n} floats over {} device(s): {want} on every one", devices.len())))
}

#[cfg(not(feature = "cuda"))]
fn run(_n: usize) -> kiln::Result<Option<String>> {
    Ok(None)
}

fn main() -> ExitCode {
    let n = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(64 << 20);
    match run(n) {
        Ok(Some(line)) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Ok(None) => {
            println!("no CUDA device with NCCL here: nothing to run");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("data_parallel_sum: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    /// On a machine with CUDA and NCCL the sum is checked inside `run`;
    /// elsewhere there is nothing to run.
    #[test]
    fn sums_over_every_gpu_or_says_why_not() {
        for n in [1, 100_003] {
            if let Some(line) = super::run(n).unwrap() {
                assert!(line.starts_with(&format!("{n} floats")), "{line}");
            }
        }
    }
}
