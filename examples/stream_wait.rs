//! Two streams where one waits on the other's event: stream A computes
//! `y = x * x`, records an event, and stream B waits on it before computing
//! `z = y + w`. The wait is on the device; the host never blocks until it
//! reads the result.
//!
//! ```text
//! cargo run --release --example stream_wait
//! ```

use kiln::kernels::elementwise::{binary, BinaryOp};
use kiln::kernels::map::{map, MapOp};
use kiln::{Backend, DeviceOf, DeviceVisitor, Priority, Result};

struct Handoff {
    n: usize,
}

impl DeviceVisitor for Handoff {
    type Output = Result<()>;

    fn visit<B: Backend>(self, dev: &DeviceOf<B>) -> Result<()> {
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
        for i in 0..self.n {
            assert_eq!(got[i], xs[i] * xs[i] + ws[i], "element {i}");
        }
        println!("z = x*x + w checked on {} elements: B saw A's result", self.n);
        Ok(())
    }
}

fn main() -> Result<()> {
    let dev = kiln::Device::best()?;
    println!("{}", dev.info());
    dev.visit(Handoff { n: 1 << 22 })?
}

#[cfg(test)]
mod tests {
    #[test]
    fn runs_on_the_cpu() {
        let dev = kiln::Device::open(kiln::BackendKind::Cpu, 0).unwrap();
        dev.visit(super::Handoff { n: 1001 }).unwrap().unwrap();
    }
}
