//! What the user-kernel tests share: the CPU device and deterministic inputs.
// Each test crate uses a part of this module.
#![allow(dead_code)]

use kiln_core::{Device, Stream};
use kiln_cpu::Cpu;

/// The CPU device.
pub fn dev() -> Device<Cpu> {
    Device::<Cpu>::open(0).expect("the CPU device opens")
}

/// A stream of the CPU device.
pub fn stream() -> Stream<Cpu> {
    dev().stream()
}

/// A deterministic pseudo-random u64 stream (splitmix64).
pub fn values(n: usize, seed: u64) -> Vec<u64> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = s;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        })
        .collect()
}
