//! Stream priorities: a latency-critical stream (`Priority::High`) next to
//! background work (`Priority::Low`). On CUDA the levels map onto the
//! device's priority range (lower numbers first there) and are clamped to
//! it; each stream reports the level it really got. Backends without
//! priorities accept every level and run them alike. Written on the
//! run-time tier.
//!
//! ```text
//! cargo run --release --example stream_priorities
//! ```

mod common;

use std::process::ExitCode;

use kiln::Priority;
use kiln::kernels::map::{MapOp, map_in_place};

/// Squares of `background` floats on a low-priority stream, of `urgent` on a high one.
struct Priorities {
    background: usize,
    urgent: usize,
}

impl Priorities {
    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let low = dev.create_stream(Priority::Low)?;
        let high = dev.create_stream(Priority::High)?;
        println!("asked Low, got {:?}; asked High, got {:?}", low.priority(), high.priority());

        // Background: many passes over a large buffer (no larger than one
        // kernel argument may be on this device).
        let background = self.background.min((dev.info().limits.max_binding_bytes / 4) as usize);
        let mut big = low.upload(&vec![1.0001f32; background])?;
        let bg_start = low.record_event()?;
        for _ in 0..8 {
            map_in_place(&low, MapOp::Square, &mut big)?;
        }
        let bg_stop = low.record_event()?;

        // Urgent: a small job submitted while the background work is queued.
        let mut small = high.upload(&vec![3.0f32; self.urgent])?;
        let start = high.record_event()?;
        map_in_place(&high, MapOp::Square, &mut small)?;
        let stop = high.record_event()?;

        common::check("small", &small.to_vec()?, &vec![9.0f32; self.urgent], |g, w| g == w)?;
        bg_stop.synchronize()?;
        let want = (0..8).fold(1.0001f32, |v, _| v * v);
        common::check("big", &big.to_vec()?, &vec![want; background], |g, w| g == w)?;
        let (urgent, work) = (stop.elapsed_since(&start)?, bg_stop.elapsed_since(&bg_start)?);
        Ok(format!("urgent job: {urgent:?}; background work: {work:?}"))
    }
}

fn main() -> ExitCode {
    common::run("stream_priorities", |dev| Priorities { background: 1 << 26, urgent: 1 << 12 }.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_on_every_backend_found() {
        common::on_every_device(|dev| Priorities { background: 1 << 12, urgent: 64 }.run(dev));
    }
}
