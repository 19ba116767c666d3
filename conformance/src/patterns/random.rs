//! Philox4x32-10 fills: every backend's values against a host Philox
//! written here from the paper (Salmon et al., SC'11), bit for bit, at
//! counters that carry across the 32-bit word and into misaligned views.
//! Normal values: bit for bit against kiln's host transform of the same
//! words (the promise that every backend gives the same bits), and within
//! a few ulps of the Box-Muller transform computed here with the standard
//! library's `ln`, `sqrt`, `cos` and `sin` in f64.

use kiln_core::{Backend, DType, Device};
use kiln_kernels::random::{Normal, Philox, Uniform};
use rand::Rng;

use crate::sample::poison_for;
use crate::{Cases, Ctx, Expected, Failure, Sample, Tolerance};

/// One Philox4x32 round-keyed block: ten rounds of two 32x32 multiplies.
fn block(counter: u64, seed: u64) -> [u32; 4] {
    let mut x = [counter as u32, (counter >> 32) as u32, 0, 0];
    let mut k = [seed as u32, (seed >> 32) as u32];
    for round in 0..10 {
        if round > 0 {
            k[0] = k[0].wrapping_add(0x9E37_79B9);
            k[1] = k[1].wrapping_add(0xBB67_AE85);
        }
        let a = 0xD251_1F53u64 * x[0] as u64;
        let b = 0xCD9E_8D57u64 * x[2] as u64;
        x = [((b >> 32) as u32) ^ x[1] ^ k[0], b as u32, ((a >> 32) as u32) ^ x[3] ^ k[1], a as u32];
    }
    x
}

/// The host's value `i` of a fill of `T` from `counter`.
trait Reference: Uniform + Sample {
    fn nth(seed: u64, counter: u64, i: usize) -> Self;
}

impl Reference for u32 {
    fn nth(seed: u64, counter: u64, i: usize) -> u32 {
        block(counter.wrapping_add(i as u64 / 4), seed)[i % 4]
    }
}

impl Reference for f32 {
    fn nth(seed: u64, counter: u64, i: usize) -> f32 {
        // The top 24 bits over 2^24: exact in f32.
        (u32::nth(seed, counter, i) >> 8) as f32 / 16_777_216.0
    }
}

impl Reference for f64 {
    fn nth(seed: u64, counter: u64, i: usize) -> f64 {
        let w = block(counter.wrapping_add(i as u64 / 2), seed);
        let (a, b) = (w[2 * (i % 2)] as u64 >> 5, w[2 * (i % 2) + 1] as u64 >> 6);
        ((a << 26) | b) as f64 / 9_007_199_254_740_992.0
    }
}

/// A buffer of `n + 7` elements whose `n` values from `at` on are
/// `value(0..n)`: the expected contents (`value`, poison around it) and the
/// poisoned contents to upload. The view is misaligned by `at` (0..3), and
/// the elements around it must stay as they were.
fn framed<T: Sample>(n: usize, at: usize, value: impl Fn(usize) -> T) -> (Vec<T>, Vec<T>) {
    let inside = |i: usize| (at..at + n).contains(&i);
    let mut full: Vec<T> = (0..n + 7).map(|i| if inside(i) { value(i - at) } else { T::default() }).collect();
    let init = poison_for(&full);
    for (i, v) in init.iter().enumerate() {
        if !inside(i) {
            full[i] = *v;
        }
    }
    (full, init)
}

fn uniform<B: Backend, T: Reference>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let rng = &mut ctx.rng;
    let seed: u64 = rng.random();
    let counter: u64 = match rng.random_range(0..4) {
        0 => 0,
        1 => 0xffff_ffff - rng.random_range(0..4u64), // carries into the high word
        2 => rng.random::<u64>() >> 8,
        _ => u64::MAX - (ctx.n as u64).div_ceil(T::PER_BLOCK) - rng.random_range(0..3u64),
    };
    let n = ctx.n;
    let at = rng.random_range(0..4usize);
    let (full, init) = framed(n, at, |i| T::nth(seed, counter, i));
    let s = device.stream();
    let mut buf = device.upload(&init)?;
    let mut philox = Philox::at(seed, counter);
    philox.fill_uniform(&s, &mut buf.slice_mut(at..at + n)?)?;
    let what = format!("{n} values from seed {seed:#x} at block {counter:#x}, {at} elements into the buffer");
    ctx.compare(&what, &Expected::new(full, Tolerance::Exact), &buf.to_vec()?)?;
    let next = counter + (n as u64).div_ceil(T::PER_BLOCK);
    if philox.counter() != next {
        return Err(Failure::Contract(format!(
            "{what}: the stream moved to block {}, expected {next}",
            philox.counter()
        )));
    }
    // The next fill, as an array, continues from there.
    if next.checked_add(3).is_some() {
        let a = Philox::at(seed, next).uniform::<B, T>(&s, &[2, 3])?;
        let want: Vec<T> = (0..6).map(|i| T::nth(seed, next, i)).collect();
        ctx.compare(&format!("an array from block {next:#x}"), &Expected::new(want, Tolerance::Exact), &a.to_vec()?)?;
    }
    Ok(())
}

/// Box-Muller in f64 with the standard library, from the words kiln's
/// transform reads, and the error it may be from it.
trait NormalReference: Normal + Sample {
    /// Value `k` of the block `w`, and its bound.
    fn box_muller(w: &[u32; 4], k: usize) -> (Self, f64);
}

/// `ln(u)` for `u = x 2^-32`, through `ln_1p` of the exact `u - 1` near 1.
fn ln_unit(x: u32) -> f64 {
    if x >> 31 == 1 {
        (-f64::from(x.wrapping_neg()) / 4_294_967_296.0).ln_1p()
    } else {
        (f64::from(x) / 4_294_967_296.0).ln()
    }
}

impl NormalReference for f32 {
    fn box_muller(w: &[u32; 4], k: usize) -> (f32, f64) {
        let (a, b) = (w[2 * (k / 2)], w[2 * (k / 2) + 1]);
        let r = (-2.0 * ln_unit(a | 1)).sqrt();
        let th = std::f64::consts::TAU * f64::from(b) / 4_294_967_296.0;
        let z = if k.is_multiple_of(2) { r * th.cos() } else { r * th.sin() };
        (z as f32, 4e-7 * z.abs() + 3e-7)
    }
}

impl NormalReference for f64 {
    fn box_muller(w: &[u32; 4], k: usize) -> (f64, f64) {
        let x = ((u64::from(w[0]) << 32) | u64::from(w[1])) | 1;
        let r = if x >> 63 == 1 {
            (-2.0 * (-(x.wrapping_neg() as f64) / 18_446_744_073_709_551_616.0).ln_1p()).sqrt()
        } else {
            (-2.0 * (x as f64 / 18_446_744_073_709_551_616.0).ln()).sqrt()
        };
        let hi = (u64::from(w[2]) << 32) | u64::from(w[3]);
        let th = std::f64::consts::TAU * (hi as f64 / 18_446_744_073_709_551_616.0);
        let z = if k == 0 { r * th.cos() } else { r * th.sin() };
        (z, 2e-15 * z.abs() + 2e-15 * r)
    }
}

fn normal<B: Backend, T: NormalReference>(device: &Device<B>, ctx: &mut Ctx) -> Result<(), Failure> {
    let rng = &mut ctx.rng;
    let seed: u64 = rng.random();
    let per = T::PER_BLOCK;
    let counter: u64 = match rng.random_range(0..3) {
        0 => 0,
        1 => 0xffff_ffff - rng.random_range(0..4u64),
        _ => rng.random::<u64>() >> 8,
    };
    let n = ctx.n;
    let at = rng.random_range(0..4usize);
    let words = |i: usize| block(counter.wrapping_add(i as u64 / per), seed);
    let (full, init) = framed(n, at, |i| T::normals(&words(i))[i % per as usize]);
    let s = device.stream();
    let mut buf = device.upload(&init)?;
    let mut philox = Philox::at(seed, counter);
    philox.fill_normal(&s, &mut buf.slice_mut(at..at + n)?)?;
    let got = buf.to_vec()?;
    let what = format!("{n} normal values from seed {seed:#x} at block {counter:#x}, {at} elements into the buffer");
    ctx.compare(&format!("{what}, against kiln's host transform"), &Expected::new(full, Tolerance::Exact), &got)?;
    let (want, bounds): (Vec<T>, Vec<f64>) = (0..n).map(|i| T::box_muller(&words(i), i % per as usize)).unzip();
    ctx.compare(&format!("{what}, against f64 Box-Muller"), &Expected::within(want, bounds), &got[at..at + n])?;
    let next = counter + (n as u64).div_ceil(per);
    if philox.counter() != next {
        return Err(Failure::Contract(format!(
            "{what}: the stream moved to block {}, expected {next}",
            philox.counter()
        )));
    }
    Ok(())
}

/// Add the Philox cases to `group`.
pub fn register<B: Backend>(c: &mut Cases<B>, group: &'static str) {
    c.one(group, "random/uniform", DType::U32, uniform::<B, u32>);
    c.one(group, "random/uniform", DType::F32, uniform::<B, f32>);
    c.one(group, "random/uniform", DType::F64, uniform::<B, f64>);
    c.one(group, "random/normal", DType::F32, normal::<B, f32>);
    c.one(group, "random/normal", DType::F64, normal::<B, f64>);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_host_reference_gives_the_random123_known_answers() {
        assert_eq!(block(0, 0), [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]);
    }
}
