//! Two streams where one waits on the other's event: stream A computes
//! `y = x * x`, records an event, and stream B waits on it before computing
//! `z = y + w`. The wait is on the device; the host never blocks until it
//! reads the result. Written on the run-time tier.
//!
//! ```text
//! cargo run --release --example stream_wait
//! ```

mod common;

use std::process::ExitCode;

use kiln::Priority;
use kiln::kernels::elementwise::{BinaryOp, binary};
use kiln::kernels::map::{MapOp, map};

/// Square on stream A, add on stream B after A's event, over `n` elements.
struct Handoff {
    n: usize,
}

impl Handoff {
    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let (a, b) = (dev.create_stream(Priority::Normal)?, dev.create_stream(Priority::Normal)?);
        let xs: Vec<f32> = (0..self.n).map(|i| (i % 97) as f32 - 48.0).collect();
        let ws: Vec<f32> = (0..self.n).map(|i| (i % 13) as f32).collect();

        let x = a.upload(&xs)?;
        let mut y = a.alloc::<f32>(self.n)?;
        map(&a, MapOp::Square, &x, &mut y)?;
        let y_ready = a.record_event()?;

        let w = b.upload(&ws)?;
        let mut z = b.alloc::<f32>(self.n)?;
        b.wait(&y_ready)?; // B's later work runs after A's square
        binary(&b, BinaryOp::Add, &y, &w, &mut z)?;

        let got = z.to_vec()?; // blocks until B is done (and so A too)
        let want: Vec<f32> = xs.iter().zip(&ws).map(|(x, w)| x * x + w).collect();
        common::check("z", &got, &want, |g, w| g == w)?;
        Ok(format!("z = x*x + w on {} elements: stream B saw stream A's result", self.n))
    }
}

fn main() -> ExitCode {
    common::run("stream_wait", |dev| Handoff { n: 1 << 22 }.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_on_every_backend_found() {
        common::on_every_device(|dev| Handoff { n: 1001 }.run(dev));
    }
}
