//! Timing a kernel with events: record one before and one after the work on
//! a stream, wait for the second, and read the device time between them
//! (CUDA events on a GPU, the monotonic clock on the CPU).
//!
//! ```text
//! cargo run --release --example event_timing            # the best device
//! KILN_BACKEND=cpu cargo run --example event_timing     # a chosen backend
//! ```

use kiln::kernels::map::{map, MapOp};
use kiln::{Backend, DeviceOf, DeviceVisitor, Result};

/// Square `n` floats a few times and report the time and bandwidth of each run.
struct TimeSquare {
    n: usize,
    runs: usize,
}

impl DeviceVisitor for TimeSquare {
    type Output = Result<f64>;

    fn visit<B: Backend>(self, dev: &DeviceOf<B>) -> Result<f64> {
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
        let got = y.to_vec()?;
        for (i, (a, b)) in xs.iter().zip(&got).enumerate() {
            assert_eq!(a * a, *b, "element {i}");
        }
        Ok(best)
    }
}

fn main() -> Result<()> {
    let dev = kiln::Device::best()?;
    println!("{}", dev.info());
    let best = dev.visit(TimeSquare { n: 1 << 24, runs: 5 })??;
    println!("best: {:.3} ms", best * 1e3);
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs_on_the_cpu() {
        let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0).unwrap();
        assert!(dev.visit(super::TimeSquare { n: 4099, runs: 2 }).unwrap().unwrap() >= 0.0);
    }
}
