//! The run-time tier's Philox fills (`kiln::kernels::random`) against the
//! typed tier's on the CPU: for fixed seeds, outputs poisoned first, the
//! same bits and the same counters, over lengths that do and do not fill
//! whole blocks and over consecutive fills.

use kiln::kernels::random::{Normal, Philox, Uniform, fill_normal, fill_uniform};
use kiln::{BackendKind, Cpu, Device, Element};

const SEEDS: [u64; 3] = [0, 42, 0x0123_4567_89ab_cdef];
const LENGTHS: [usize; 6] = [1, 2, 3, 5, 1024, 10_007];

/// A value of `T`'s to poison outputs with, and its bits for comparison.
trait Bits: Element {
    const POISON: Self;
    fn bits(self) -> u64;
}

impl Bits for u32 {
    const POISON: u32 = 0xDEAD_BEEF;
    fn bits(self) -> u64 {
        u64::from(self)
    }
}

impl Bits for f32 {
    const POISON: f32 = f32::NAN;
    fn bits(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl Bits for f64 {
    const POISON: f64 = f64::NAN;
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

/// Which fill a case runs.
#[derive(Clone, Copy, Debug)]
enum Draw {
    Uniform,
    Normal,
}

/// Two consecutive fills of `n` values (and one from block 7 with
/// `Philox::at`) on the run-time tier and on the typed tier, each into a
/// poisoned buffer; the values' bits and the counters after each fill
/// must agree, and no value may be left poisoned.
fn same_on_both_tiers<T: Bits>(
    draw: Draw,
    runtime: impl Fn(&kiln::Stream, &mut Philox, &mut kiln::Buffer<T>) -> kiln::Result<()>,
    typed: impl Fn(&kiln::typed::Stream<Cpu>, &mut Philox, &mut kiln::typed::Buffer<Cpu, T>) -> kiln::Result<()>,
) {
    let dev = Device::open(BackendKind::Cpu, 0).unwrap();
    let s = dev.stream();
    let ts = dev.typed::<Cpu>().expect("a CPU device").stream();
    for seed in SEEDS {
        for n in LENGTHS {
            let what = format!("{draw:?} {}, seed {seed}, n = {n}", T::DTYPE);
            for start in [Philox::new(seed), Philox::at(seed, 7)] {
                let (mut r, mut t) = (start, start);
                for fill in 0..2 {
                    let mut got = s.upload(&vec![T::POISON; n]).unwrap();
                    runtime(&s, &mut r, &mut got).unwrap();
                    let mut want = ts.upload(&vec![T::POISON; n]).unwrap();
                    typed(&ts, &mut t, &mut want).unwrap();
                    let got: Vec<u64> = got.to_vec().unwrap().into_iter().map(T::bits).collect();
                    let want: Vec<u64> = want.to_vec().unwrap().into_iter().map(T::bits).collect();
                    assert_eq!(got, want, "{what}, from block {}, fill {fill}", start.counter());
                    assert!(got.iter().all(|&b| b != T::POISON.bits()), "{what}: a value left poisoned");
                    assert_eq!(r, t, "{what}: the streams after fill {fill}");
                }
                assert!(r.counter() > start.counter(), "{what}: the stream did not move");
            }
        }
    }
}

fn uniform_case<T: Bits + Uniform>() {
    same_on_both_tiers::<T>(
        Draw::Uniform,
        |s, rng, dst| fill_uniform(s, rng, dst),
        |s, rng, dst| rng.fill_uniform(s, dst),
    );
}

fn normal_case<T: Bits + Normal>() {
    same_on_both_tiers::<T>(
        Draw::Normal,
        |s, rng, dst| fill_normal(s, rng, dst),
        |s, rng, dst| rng.fill_normal(s, dst),
    );
}

#[test]
fn uniform_values_are_the_typed_tiers_bits() {
    uniform_case::<u32>();
    uniform_case::<f32>();
    uniform_case::<f64>();
}

#[test]
fn normal_values_are_the_typed_tiers_bits() {
    normal_case::<f32>();
    normal_case::<f64>();
}

/// An empty output takes no block: the stream does not move.
#[test]
fn empty_fills_take_nothing() {
    let s = Device::open(BackendKind::Cpu, 0).unwrap().stream();
    let mut rng = Philox::at(9, 3);
    let mut empty = s.alloc::<f32>(0).unwrap();
    fill_uniform(&s, &mut rng, &mut empty).unwrap();
    fill_normal(&s, &mut rng, &mut empty).unwrap();
    assert_eq!(rng, Philox::at(9, 3));
}
