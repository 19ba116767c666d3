//! A multi-stream copy/compute pipeline: the input is cut into chunks; each
//! chunk is copied in from page-locked host memory, computed on, and copied
//! back, with chunk `i` on stream `i % streams`. On a GPU the copies of one
//! chunk overlap the kernels of others (and copies in overlap copies out),
//! so 4 streams beat 1; on the CPU both take the same time. Written on the
//! run-time tier.
//!
//! ```text
//! cargo run --release --example pipeline
//! ```

mod common;

use std::process::ExitCode;
use std::time::Instant;

use kiln::kernels::map::{MapOp, map};
use kiln::{HostBuffer, Priority, Result};

/// `chunks` chunks of `chunk` floats, squared on their way through the device.
struct Pipeline {
    chunks: usize,
    chunk: usize,
}

impl Pipeline {
    /// One pass on `streams` streams; returns the wall time.
    fn pass(
        &self,
        dev: &kiln::Device,
        streams: usize,
        input: &[HostBuffer<f32>],
        output: &mut [HostBuffer<f32>],
    ) -> Result<f64> {
        let streams: Vec<_> = (0..streams).map(|_| dev.create_stream(Priority::Normal)).collect::<Result<_>>()?;
        // One pair of device buffers per stream, reused chunk after chunk in stream order.
        let mut bufs: Vec<_> = streams
            .iter()
            .map(|s| Ok((s.alloc::<f32>(self.chunk)?, s.alloc::<f32>(self.chunk)?)))
            .collect::<Result<_>>()?;
        let t = Instant::now();
        for (c, (hin, hout)) in input.iter().zip(output.iter_mut()).enumerate() {
            let i = c % streams.len();
            let (s, (din, dout)) = (&streams[i], &mut bufs[i]);
            s.copy_to_device_async(hin, din)?; // returns at once
            map(s, MapOp::Square, &*din, dout)?;
            s.copy_to_host_async(&*dout, hout)?;
        }
        for s in &streams {
            s.synchronize()?;
        }
        Ok(t.elapsed().as_secs_f64())
    }

    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let mut input = Vec::new();
        let mut output = Vec::new();
        for c in 0..self.chunks {
            let mut h = dev.alloc_host::<f32>(self.chunk)?;
            for (j, v) in h.as_mut_slice()?.iter_mut().enumerate() {
                *v = ((c * 31 + j) % 1024) as f32 * 0.125;
            }
            input.push(h);
            output.push(dev.alloc_host::<f32>(self.chunk)?);
        }
        self.pass(dev, 1, &input, &mut output)?; // warm-up: compile, first-touch
        let one = self.pass(dev, 1, &input, &mut output)?;
        let four = self.pass(dev, 4, &input, &mut output)?;
        for (c, (hin, hout)) in input.iter().zip(&output).enumerate() {
            let want: Vec<f32> = hin.as_slice()?.iter().map(|a| a * a).collect();
            common::check(&format!("chunk {c}"), hout.as_slice()?, &want, |g, w| g == w)?;
        }
        Ok(format!(
            "{} chunks of {} floats: 1 stream {:.2} ms, 4 streams {:.2} ms ({:.2}x)",
            self.chunks,
            self.chunk,
            one * 1e3,
            four * 1e3,
            one / four
        ))
    }
}

fn main() -> ExitCode {
    common::run("pipeline", |dev| Pipeline { chunks: 16, chunk: 1 << 22 }.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_on_every_backend_found() {
        common::on_every_device(|dev| Pipeline { chunks: 5, chunk: 1000 }.run(dev));
    }
}
