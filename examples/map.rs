//! map: `y = op(x)` for each operation of `kiln::kernels::map`, on f32 and
//! i32, with the library's kernels on the run-time tier; checked against
//! the host.
//!
//! ```sh
//! cargo run --release --example map -- --backend cpu
//! ```

mod common;

use kiln::kernels::map::{MapOp, map, map_in_place};

/// The host's answer for `op` on f32.
fn host_f32(op: MapOp, x: f32) -> f32 {
    match op {
        MapOp::Square => x * x,
        MapOp::Abs => x.abs(),
        MapOp::Negate => -x,
        MapOp::Sqrt => x.sqrt(),
    }
}

/// Every map operation over `n` elements.
struct Maps {
    n: usize,
}

impl Maps {
    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let s = dev.stream();
        // Values from -4 to 4: negative ones make Sqrt produce NaN, as IEEE says.
        let x: Vec<f32> = (0..self.n).map(|i| (i % 801) as f32 / 100.0 - 4.0).collect();
        let dx = s.upload(&x)?;
        let mut dy = s.alloc::<f32>(self.n)?;
        let mut lines = Vec::new();
        for op in MapOp::ALL {
            dy.fill(f32::NAN)?;
            map(&s, op, &dx, &mut dy)?;
            let y = dy.to_vec()?;
            let want: Vec<f32> = x.iter().map(|&v| host_f32(op, v)).collect();
            common::check(&format!("{op}(x)"), &y, &want, common::close_f32)?;
            lines.push(format!("{:>6}(x): x[1] = {:>6} -> {:>8}", op.name(), x[1], y[1]));
        }
        // Integers wrap: |i32::MIN| is i32::MIN; in place, no second buffer.
        let ints = [3, -7, i32::MIN, i32::MAX];
        let mut di = s.upload(&ints)?;
        map_in_place(&s, MapOp::Abs, &mut di)?;
        let got = di.to_vec()?;
        common::check("abs in place (i32)", &got, &[3, 7, i32::MIN, i32::MAX], |g, w| g == w)?;
        lines.push(format!("abs in place on i32 {ints:?} -> {got:?}"));
        // Sqrt on integers is refused, not computed.
        let refused = map_in_place(&s, MapOp::Sqrt, &mut di).map_err(|e| e.to_string()).err();
        lines.push(format!("sqrt on i32: {}", refused.as_deref().unwrap_or("accepted (unexpected)")));
        common::ensure(refused.is_some(), || "sqrt on i32 was accepted; it must be refused".into())?;
        Ok(lines.join("\n"))
    }
}

fn main() -> std::process::ExitCode {
    common::run("map", |dev| Maps { n: 1 << 20 }.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_on_every_backend() {
        for n in [2, 1025] {
            common::on_every_device(|dev| Maps { n }.run(dev));
        }
    }
}
