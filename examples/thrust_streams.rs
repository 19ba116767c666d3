//! thrust_streams: the seed that ran Thrust on streams, with kiln's
//! Thrust-style helpers. Stream A fills `x` with 0, 1, 2, ... (sequence)
//! and squares it (transform), then records an event; stream B waits on
//! that event on the device and sums the squares (reduce) and keeps those
//! over a threshold (copy_if). Meanwhile stream A goes on with work of its
//! own. The host blocks only to read results, which are checked against
//! closed forms. Written on the run-time tier.
//!
//! ```sh
//! cargo run --release --example thrust_streams -- --backend cpu
//! ```

mod common;

use kiln::Priority;
use kiln::kernels::compact::Predicate;
use kiln::kernels::map::MapOp;
use kiln::kernels::reduce::ReduceOp;
use kiln::kernels::thrust;

/// The two-stream program over `n` elements.
struct TwoStreams {
    n: usize,
}

impl TwoStreams {
    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let n = self.n;
        let (a, b) = (dev.create_stream(Priority::Normal)?, dev.create_stream(Priority::Normal)?);

        // Stream A: x = 0, 1, 2, ...; squares = x * x (u32, wrapping past 2^32).
        let mut x = a.alloc::<u32>(n)?;
        thrust::sequence(&a, &mut x, 0, 1)?;
        let mut squares = a.alloc::<u32>(n)?;
        thrust::transform(&a, &x, &mut squares, MapOp::Square)?;
        let squares_ready = a.record_event()?;

        // Stream A goes on: x = x * x too, which B never reads.
        let mut x_again = a.alloc::<u32>(n)?;
        thrust::transform(&a, &x, &mut x_again, MapOp::Square)?;

        // Stream B: waits for A's squares on the device, then reduces and compacts them.
        b.wait(&squares_ready)?;
        let total = thrust::reduce(&b, &squares, 0, ReduceOp::Sum)?;
        let threshold = 1_000_000u32;
        let mut big = b.alloc::<u32>(n)?;
        let kept = thrust::copy_if(&b, &squares, &mut big, Predicate::GreaterThan(threshold))?;

        // Closed forms: the sum of i^2 for i < n is (n-1) n (2n-1) / 6 (taken
        // modulo 2^32, as the wrapping u32 sum is); i^2 > 10^6 for i > 1000,
        // as long as i^2 does not wrap (i < 65536 here).
        let m = n as u128;
        let want_total = (m.saturating_sub(1) * m * (2 * m).saturating_sub(1) / 6) as u32;
        common::ensure(total == want_total, || format!("sum of squares = {total}, expected {want_total}"))?;
        let want_kept = n.saturating_sub(1001);
        common::ensure(kept == want_kept, || format!("{kept} squares over {threshold}, expected {want_kept}"))?;
        let first = big.slice(..kept.min(3))?.to_vec()?;
        let want_first: Vec<u32> = (1001..1001 + kept.min(3) as u32).map(|i| i * i).collect();
        common::ensure(first == want_first, || format!("first squares kept = {first:?}, expected {want_first:?}"))?;
        common::check("stream A's second transform", &x_again.to_vec()?, &squares.to_vec()?, |g, w| g == w)?;
        Ok(format!(
            "A: sequence and square of {n} u32; B after A's event: sum of squares = {total} (mod 2^32), \
             {kept} squares over {threshold}, starting {first:?}"
        ))
    }
}

fn main() -> std::process::ExitCode {
    common::run("thrust_streams", |dev| TwoStreams { n: 60_000 }.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_streams_on_every_backend() {
        for n in [1, 1001, 1002, 60_000] {
            common::on_every_device(|dev| TwoStreams { n }.run(dev));
        }
    }
}
