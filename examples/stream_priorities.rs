//! Stream priorities: a latency-critical stream (`Priority::High`) next to
//! background work (`Priority::Low`). On CUDA the levels map onto the
//! device's priority range (lower numbers first there) and are clamped to
//! it; each stream reports the level it really got. Backends without
//! priorities accept every level and run them alike.
//!
//! ```text
//! cargo run --release --example stream_priorities
//! ```

use std::time::Duration;

use kiln::kernels::map::{map_in_place, MapOp};
use kiln::{Backend, DeviceOf, DeviceVisitor, Priority, Result};

struct Priorities {
    background: usize,
    urgent: usize,
}

impl DeviceVisitor for Priorities {
    type Output = Result<(Duration, Duration)>;

    fn visit<B: Backend>(self, dev: &DeviceOf<B>) -> Result<(Duration, Duration)> {
        let low = dev.create_stream(Priority::Low)?;
        let high = dev.create_stream(Priority::High)?;
        println!("asked Low, got {:?}; asked High, got {:?}", low.priority(), high.priority());

        // Background: many passes over a large buffer.
        let mut big = low.upload(&vec![1.0001f32; self.background])?;
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

        assert!(small.to_vec()?.iter().all(|&v| v == 9.0));
        bg_stop.synchronize()?;
        let want = (0..8).fold(1.0001f32, |v, _| v * v);
        assert!(big.to_vec()?.iter().all(|&v| v == want));
        let (urgent, background) = (stop.elapsed_since(&start)?, bg_stop.elapsed_since(&bg_start)?);
        println!("urgent job: {urgent:?}; background work: {background:?}");
        Ok((urgent, background))
    }
}

fn main() -> Result<()> {
    let dev = kiln::Device::best()?;
    println!("{}", dev.info());
    dev.visit(Priorities { background: 1 << 26, urgent: 1 << 12 })?.map(drop)
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs_on_the_cpu() {
        let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0).unwrap();
        dev.visit(super::Priorities { background: 1 << 12, urgent: 64 }).unwrap().unwrap();
    }
}
