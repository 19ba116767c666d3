//! f16 and bf16 arithmetic is correctly rounded: every operation equals
//! the exact result (computed in f64) rounded once to the 16-bit type; and
//! their reductions and scans accumulate in f32, rounding once at the end.

use kiln_core::{Device, bf16, f16};
use kiln_cpu::Cpu;
use kiln_kernels::elementwise::{BinaryOp, binary};
use kiln_kernels::map::{MapOp, map};
use kiln_kernels::reduce::{ReduceOp, argmax, argmin, dot, reduce, reduce_axis};
use kiln_kernels::scan::{ScanKind, scan, scan_in_place};
use rand::{Rng, SeedableRng};

/// The tests that every binary and unary operation on the 16-bit type `$t`
/// equals the exact result rounded once, on random bit patterns.
macro_rules! round_once_tests {
    ($t:ident, $binary:ident, $unary:ident) => {
        #[test]
        fn $binary() {
            let s = Device::<Cpu>::open(0).unwrap().stream();
            let n = 4099;
            let (a, b) = (random::<$t>(n, 1), random::<$t>(n, 2));
            let (da, db) = (s.upload(&a).unwrap(), s.upload(&b).unwrap());
            let mut c = s.upload(&vec![$t::NAN; n]).unwrap();
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
                    let want = $t::from_f64(exact);
                    let same = got[i].to_bits() == want.to_bits() || (got[i].is_nan() && want.is_nan());
                    assert!(same, "{op} at {i}: {x} {y} -> got {} want {}", got[i], want);
                }
            }
        }

        #[test]
        fn $unary() {
            let s = Device::<Cpu>::open(0).unwrap().stream();
            let n = 2053;
            let x = random::<$t>(n, 3);
            let dx = s.upload(&x).unwrap();
            let mut y = s.upload(&vec![$t::NAN; n]).unwrap();
            for op in MapOp::ALL {
                map(&s, op, &dx, &mut y).unwrap();
                let got = y.to_vec().unwrap();
                for i in 0..n {
                    let v = x[i].to_f64();
                    let want = match op {
                        MapOp::Square => $t::from_f64(v * v),
                        MapOp::Abs => $t::from_bits(x[i].to_bits() & 0x7fff),
                        MapOp::Negate => $t::from_bits(x[i].to_bits() ^ 0x8000),
                        MapOp::Sqrt => $t::from_f64(v.sqrt()),
                    };
                    let same = got[i].to_bits() == want.to_bits() || (got[i].is_nan() && want.is_nan());
                    assert!(same, "{op} at {i}: {v} -> got {} want {}", got[i], want);
                }
            }
        }
    };
}

/// `n` values of a 16-bit type from random bit patterns (NaNs and infinities included).
fn random<T: From16>(n: usize, seed: u64) -> Vec<T> {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| T::from_bits16(rng.random())).collect()
}

/// The 16-bit float types, from their bits.
trait From16 {
    fn from_bits16(bits: u16) -> Self;
}
impl From16 for f16 {
    fn from_bits16(bits: u16) -> Self {
        f16::from_bits(bits)
    }
}
impl From16 for bf16 {
    fn from_bits16(bits: u16) -> Self {
        bf16::from_bits(bits)
    }
}

round_once_tests!(f16, f16_binary_ops_round_once, f16_unary_ops_round_once);
round_once_tests!(bf16, bf16_binary_ops_round_once, bf16_unary_ops_round_once);

/// A sum of 10^4 ones is 10^4 in f32 (and then in f16, which holds it
/// exactly); accumulated in f16 it would stop at 2048, where 2048 + 1
/// rounds back to 2048.
#[test]
fn sums_accumulate_in_f32() {
    let s = Device::<Cpu>::open(0).unwrap().stream();
    let ones = s.upload(&vec![f16::ONE; 10_000]).unwrap();
    assert_eq!(reduce(&s, ReduceOp::Sum, &ones).unwrap(), f16::from_f32(10_000.0));
    assert_eq!(dot(&s, &ones, &ones).unwrap(), f16::from_f32(10_000.0));
    let ones = s.upload(&vec![bf16::ONE; 1000]).unwrap();
    // bf16 holds 1000 exactly (1111101000 in binary: 7 significant bits after the first).
    assert_eq!(reduce(&s, ReduceOp::Sum, &ones).unwrap(), bf16::from_f32(1000.0));
    // Past the range: the f32 sum rounds to infinity once, at the end.
    let big = s.upload(&[f16::MAX, f16::MAX, f16::MIN]).unwrap();
    assert_eq!(reduce(&s, ReduceOp::Sum, &big).unwrap(), f16::MAX);
    let big = s.upload(&[f16::MAX, f16::MAX]).unwrap();
    assert_eq!(reduce(&s, ReduceOp::Sum, &big).unwrap(), f16::INFINITY);
}

#[test]
fn extremes_are_exact_and_propagate_nan() {
    let s = Device::<Cpu>::open(0).unwrap().stream();
    let v: Vec<f16> = [3.0f32, -0.5, 7.25, -9.0, 7.25].iter().map(|&v| f16::from_f32(v)).collect();
    let x = s.upload(&v).unwrap();
    assert_eq!(reduce(&s, ReduceOp::Min, &x).unwrap(), f16::from_f32(-9.0));
    assert_eq!(reduce(&s, ReduceOp::Max, &x).unwrap(), f16::from_f32(7.25));
    assert_eq!(argmax(&s, &x).unwrap(), (2, f16::from_f32(7.25)));
    assert_eq!(argmin(&s, &x).unwrap(), (3, f16::from_f32(-9.0)));
    let mut with_nan = v.clone();
    with_nan[1] = f16::NAN;
    let x = s.upload(&with_nan).unwrap();
    assert!(reduce(&s, ReduceOp::Max, &x).unwrap().is_nan());
    assert_eq!(argmin(&s, &x).unwrap().0, 1);
    // Column sums of a 2 x 3 array.
    let x = s.upload(&[1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0].map(bf16::from_f32)).unwrap();
    let mut cols = s.upload(&[bf16::NAN; 3]).unwrap();
    reduce_axis(&s, ReduceOp::Sum, &x, 2, 3, 0, &mut cols).unwrap();
    assert_eq!(cols.to_vec().unwrap(), [5.0f32, 7.0, 9.0].map(bf16::from_f32));
}

/// Each prefix is the f32 prefix rounded once: past 2048 f16 steps by 2,
/// and the running sum keeps counting where an f16 accumulator would stall.
#[test]
fn scans_accumulate_in_f32() {
    let s = Device::<Cpu>::open(0).unwrap().stream();
    let n = 5000;
    let ones = s.upload(&vec![f16::ONE; n]).unwrap();
    let mut y = s.upload(&vec![f16::NAN; n]).unwrap();
    scan(&s, ScanKind::Inclusive, &ones, &mut y).unwrap();
    let want: Vec<f16> = (1..=n).map(|i| f16::from_f64(i as f64)).collect();
    assert_eq!(y.to_vec().unwrap(), want);
    let mut x = s.upload(&vec![bf16::ONE; n]).unwrap();
    scan_in_place(&s, ScanKind::Exclusive, &mut x).unwrap();
    let want: Vec<bf16> = (0..n).map(|i| bf16::from_f64(i as f64)).collect();
    assert_eq!(x.to_vec().unwrap(), want);
}
