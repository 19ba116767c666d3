//! elementwise: `c = a op b` for add, sub, mul and div, and axpy
//! `z = alpha * x + y`, with `kiln::kernels::elementwise` on the run-time
//! tier; checked against the host.
//!
//! ```sh
//! cargo run --release --example elementwise -- --backend cpu
//! ```

mod common;

use kiln::kernels::elementwise::{BinaryOp, axpy, axpy_in_place, binary};

/// The host's answer for `op`, and its symbol.
fn host(op: BinaryOp, a: f32, b: f32) -> (f32, char) {
    match op {
        BinaryOp::Add => (a + b, '+'),
        BinaryOp::Sub => (a - b, '-'),
        BinaryOp::Mul => (a * b, '*'),
        BinaryOp::Div => (a / b, '/'),
    }
}

/// Every binary operation and axpy over `n` elements.
struct Elementwise {
    n: usize,
}

impl Elementwise {
    fn run(&self, dev: &kiln::Device) -> common::Checked {
        let (n, s) = (self.n, dev.stream());
        let a: Vec<f32> = (0..n).map(|i| (i % 97) as f32 - 48.0).collect();
        let b: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.25 + 0.5).collect();
        let (da, db) = (s.upload(&a)?, s.upload(&b)?);
        let mut dc = s.alloc::<f32>(n)?;
        let mut lines = Vec::new();
        for op in BinaryOp::ALL {
            dc.fill(f32::NAN)?;
            binary(&s, op, &da, &db, &mut dc)?;
            let c = dc.to_vec()?;
            let want: Vec<f32> = a.iter().zip(&b).map(|(&a, &b)| host(op, a, b).0).collect();
            common::check(&format!("a {op} b"), &c, &want, common::close_f32)?;
            lines.push(format!("{}: {} {} {} = {}", op.name(), a[0], host(op, a[0], b[0]).1, b[0], c[0]));
        }
        let alpha = 2.5f32;
        dc.fill(f32::NAN)?;
        axpy(&s, alpha, &da, &db, &mut dc)?;
        let want: Vec<f32> = a.iter().zip(&b).map(|(&x, &y)| alpha * x + y).collect();
        common::check("axpy", &dc.to_vec()?, &want, common::close_f32)?;
        // In place: b becomes alpha * a + b, no third buffer.
        let mut db = db;
        axpy_in_place(&s, alpha, &da, &mut db)?;
        common::check("axpy in place", &db.to_vec()?, &want, common::close_f32)?;
        lines.push(format!("axpy: {alpha} * {} + {} = {}", a[0], b[0], want[0]));
        // Integers wrap, and division by zero gives the dividend.
        let (ia, ib) = (s.upload(&[i32::MAX, 7, -9])?, s.upload(&[1, 0, 2])?);
        let mut ic = s.alloc::<i32>(3)?;
        binary(&s, BinaryOp::Add, &ia, &ib, &mut ic)?;
        let sums = ic.to_vec()?;
        binary(&s, BinaryOp::Div, &ia, &ib, &mut ic)?;
        let quotients = ic.to_vec()?;
        let want_sums = [i32::MIN, 7, -7];
        let want_quotients = [i32::MAX, 7, -4];
        common::ensure(sums == want_sums && quotients == want_quotients, || {
            format!(
                "i32: sums {sums:?} (expected {want_sums:?}), quotients {quotients:?} (expected {want_quotients:?})"
            )
        })?;
        lines.push(format!("i32 [MAX, 7, -9] + [1, 0, 2] = {sums:?}; / = {quotients:?}"));
        Ok(lines.join("\n"))
    }
}

fn main() -> std::process::ExitCode {
    common::run("elementwise", |dev| Elementwise { n: 1 << 20 }.run(dev))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elementwise_on_every_backend() {
        for n in [1, 1025] {
            common::on_every_device(|dev| Elementwise { n }.run(dev));
        }
    }
}
