//! f16 arithmetic is correctly rounded: every operation equals the exact
//! result (computed in f64) rounded once to half precision.

use kiln_core::{Device, f16};
use kiln_cpu::Cpu;
use kiln_kernels::elementwise::{BinaryOp, binary};
use kiln_kernels::map::{MapOp, map};
use rand::{Rng, SeedableRng};

fn random_halves(n: usize, seed: u64) -> Vec<f16> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    // Every bit pattern, NaNs and infinities included.
    (0..n).map(|_| f16::from_bits(rng.random())).collect()
}

fn same(a: f16, b: f16) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn binary_ops_round_once() {
    let dev = Device::<Cpu>::open(0).unwrap();
    let s = dev.stream();
    let n = 4099;
    let (a, b) = (random_halves(n, 1), random_halves(n, 2));
    let (da, db) = (s.upload(&a).unwrap(), s.upload(&b).unwrap());
    let mut c = s.upload(&vec![f16::from_bits(0x7e01); n]).unwrap();
    for op in BinaryOp::ALL {
        binary(&s, op, &da, &db, &mut c).unwrap();
        let got = c.to_vec().unwrap();
        for i in 0..n {
            let (x, y) = (a[i].to_f64(), b[i].to_f64());
            let exact = match op {
                BinaryOp::Add => x + y,
                BinaryOp::Sub => x - y,
                BinaryOp::Mul => x * y,
                BinaryOp::Div => x / y,
            };
            let want = f16::from_f64(exact);
            assert!(same(got[i], want), "{op} at {i}: {x} {y} -> got {} want {}", got[i], want);
        }
    }
}

#[test]
fn unary_ops_round_once() {
    let dev = Device::<Cpu>::open(0).unwrap();
    let s = dev.stream();
    let n = 2053;
    let x = random_halves(n, 3);
    let dx = s.upload(&x).unwrap();
    let mut y = s.upload(&vec![f16::from_bits(0x7e01); n]).unwrap();
    for op in MapOp::ALL {
        map(&s, op, &dx, &mut y).unwrap();
        let got = y.to_vec().unwrap();
        for i in 0..n {
            let v = x[i].to_f64();
            let want = match op {
                MapOp::Square => f16::from_f64(v * v),
                MapOp::Abs => f16::from_bits(x[i].to_bits() & 0x7fff),
                MapOp::Negate => f16::from_bits(x[i].to_bits() ^ 0x8000),
                MapOp::Sqrt => f16::from_f64(v.sqrt()),
            };
            assert!(same(got[i], want), "{op} at {i}: {v} -> got {} want {}", got[i], want);
        }
    }
}
