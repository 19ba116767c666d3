//! Timing a kernel with events: record one before and one after the work on
//! a stream, wait for the second, and read the device time between them
//! (CUDA events on a GPU, the monotonic clock on the CPU). Written on the
//! run-time tier.
//!
//! ```text
//! cargo run --release --example event_timing            # the best device
//! cargo run --example event_timing -- --backend cpu     # a chosen backend
//! ```

mod common;

use std::process::ExitCode;

use kiln::kernels::map::{MapOp, map};

/// Square `n` floats a few times and report the time and bandwidth of each run.
struct TimeSquare {
    n: usize,
    runs: usize,
}

impl TimeSquare {
    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let s = dev.stream();
        let xs: Vec<f32> = (0..self.n).map(|i| (i % 1000) as f32 * 0.5 - 250.0).collect();
        let x = s.upload(&xs)?;
        let mut y = s.alloc::<f32>(self.n)?;
        map(&s, MapOp::Square, &x, &mut y)?; // warm-up: compiles and loads the kernel
        let mut best = f64::INFINITY;
        for run in 0..self.runs {
            let start = s.record_event()?;
            map(&s, MapOp::Square, &x, &mut y)?;
            let stop = s.record_event()?;
            stop.synchronize()?; // the only wait: the host blocks here, not at the launch
            let t = stop.elapsed_since(&start)?.as_secs_f64();
            let gbs = (2 * self.n * size_of::<f32>()) as f64 / t / 1e9;
            println!("run {run}: {:8.3} ms, {gbs:7.1} GB/s", t * 1e3);
            best = best.min(t);
        }
        // The events time real work: check it was done.
        let want: Vec<f32> = xs.iter().map(|a| a * a).collect();
        common::check("y", &y.to_vec()?, &want, |g, w| g == w)?;
        Ok(format!("best of {} runs: {:.3} ms for {} elements", self.runs, best * 1e3, self.n))
    }
}

fn main() -> ExitCode {
    common::run("event_timing", |dev| TimeSquare { n: 1 << 24, runs: 5 }.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_on_every_backend_found() {
        common::on_every_device(|dev| TimeSquare { n: 4099, runs: 2 }.run(dev));
    }
}
