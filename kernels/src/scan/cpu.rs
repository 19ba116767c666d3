//! CPU implementation of the scans, the reference: integers wrap exactly,
//! `f32` prefixes accumulate in f64 and `f64` ones with Neumaier's
//! compensation, so each output is within about one rounding of the exact
//! prefix. Parallel over chunks, sequential inside a chunk: unsegmented
//! scans in one pass over memory (`cpu_pass.rs`), segmented ones in two
//! (chunk carries, then each chunk from the prefix entering it).

use std::marker::PhantomData;

use kiln_core::{DType, Error, HostArgs, Result};
use rayon::prelude::*;

use super::prefix::{CHAINS, CHUNK, Prefix, part_sums, scan_chains};
use crate::Number;
use crate::reduce::Compensated;

/// Sums of `T`, the built-in scans' operation.
pub(crate) struct Sum<T>(PhantomData<T>);

impl<T> Sum<T> {
    pub(crate) const OF: Sum<T> = Sum(PhantomData);
}

macro_rules! int_prefix {
    ($t:ty) => {
        impl Prefix for Sum<$t> {
            type T = $t;
            type Acc = $t;
            fn zero(&self) -> $t {
                0
            }
            fn push(&self, acc: $t, v: $t) -> $t {
                acc.wrapping_add(v)
            }
            fn join(&self, a: $t, b: $t) -> $t {
                a.wrapping_add(b)
            }
            fn value(&self, acc: $t) -> $t {
                acc
            }
        }
    };
}
int_prefix!(i32);
int_prefix!(u32);

impl Prefix for Sum<f32> {
    type T = f32;
    type Acc = f64;
    fn zero(&self) -> f64 {
        0.0
    }
    fn push(&self, acc: f64, v: f32) -> f64 {
        acc + v as f64
    }
    fn join(&self, a: f64, b: f64) -> f64 {
        a + b
    }
    fn value(&self, acc: f64) -> f32 {
        acc as f32
    }
    fn chunk_sums(&self, xs: &[f32]) -> [f64; CHAINS] {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (detected just above).
            return unsafe { super::cpu_f32::part_sums(xs) };
        }
        part_sums(self, xs)
    }
    fn scan_chunk(&self, exclusive: bool, xs: &[f32], ys: &mut [f32], start: f64, sums: &[f64; CHAINS]) {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (detected just above).
            return unsafe { super::cpu_f32::scan_chains(exclusive, xs, ys, start, sums) };
        }
        scan_chains(self, exclusive, xs, ys, start, sums)
    }
}

impl Prefix for Sum<f64> {
    type T = f64;
    type Acc = Compensated;
    fn zero(&self) -> Compensated {
        Compensated::default()
    }
    fn push(&self, acc: Compensated, v: f64) -> Compensated {
        acc.add(v)
    }
    fn join(&self, a: Compensated, b: Compensated) -> Compensated {
        a.merge(b)
    }
    fn value(&self, acc: Compensated) -> f64 {
        acc.total()
    }
}

/// A chunk's effect on the prefix: its sum since its last segment start,
/// and whether it holds a segment start (which discards what came before).
#[derive(Clone, Copy)]
struct Carry<A> {
    acc: A,
    starts: bool,
}

fn chunk_carry<P: Prefix>(p: &P, x: &[P::T], flags: &[u32]) -> Carry<P::Acc> {
    let mut c = Carry { acc: p.zero(), starts: false };
    for (&v, &f) in x.iter().zip(flags) {
        if f != 0 {
            c = Carry { acc: p.zero(), starts: true };
        }
        c.acc = p.push(c.acc, v);
    }
    c
}

/// Scan `x` into `y` (same length; `flags` too when segmented). A
/// segmented scan takes two passes over chunks: their carries, then each
/// chunk from the prefix entering it.
fn scan_slices<P: Prefix>(p: &P, exclusive: bool, x: &[P::T], flags: Option<&[u32]>, y: &mut [P::T]) -> Result<()> {
    if y.len() != x.len() || flags.is_some_and(|f| f.len() != x.len()) {
        return Err(Error::invalid("scan on the CPU", "x, flags and y must have the same length"));
    }
    let Some(flags) = flags else {
        return super::cpu_pass::scan(p, exclusive, x.len(), |c| Ok(super::cpu_pass::chunk_of(x, c)), y);
    };
    let carries: Vec<Carry<P::Acc>> = x
        .par_chunks(CHUNK)
        .enumerate()
        .map(|(c, xs)| chunk_carry(p, xs, &flags[c * CHUNK..c * CHUNK + xs.len()]))
        .collect();
    // The prefix entering each chunk, sequentially over the (few) chunks.
    let mut entering = Vec::with_capacity(carries.len());
    let mut acc = p.zero();
    for c in &carries {
        entering.push(acc);
        acc = if c.starts { c.acc } else { p.join(acc, c.acc) };
    }
    y.par_chunks_mut(CHUNK).zip(x.par_chunks(CHUNK)).zip(entering).enumerate().for_each(|(c, ((ys, xs), start))| {
        let mut acc = start;
        for (i, (y, &v)) in ys.iter_mut().zip(xs).enumerate() {
            if flags[c * CHUNK + i] != 0 {
                acc = p.zero();
            }
            if exclusive {
                *y = p.value(acc);
                acc = p.push(acc, v);
            } else {
                acc = p.push(acc, v);
                *y = p.value(acc);
            }
        }
    });
    Ok(())
}

fn dispatch<T: Number>(args: &mut HostArgs<'_>, exclusive: bool, segmented: bool, in_place: bool) -> Result<()> {
    match T::DTYPE {
        DType::I32 => typed::<i32>(args, exclusive, segmented, in_place),
        DType::U32 => typed::<u32>(args, exclusive, segmented, in_place),
        DType::F32 => typed::<f32>(args, exclusive, segmented, in_place),
        DType::F64 => typed::<f64>(args, exclusive, segmented, in_place),
        d => Err(Error::invalid("scan on the CPU", format!("no scan for {d}"))),
    }
}

/// The CUDA kernel's arguments taken by type: `x` (or `y`, in place) first,
/// the `flags` of a segmented scan after it, then the look-back state
/// (`status`, `aggs`, `incls`: not needed here) and the length.
fn typed<T>(args: &mut HostArgs<'_>, exclusive: bool, segmented: bool, in_place: bool) -> Result<()>
where
    T: kiln_core::Element,
    Sum<T>: Prefix<T = T>,
{
    let sum = &Sum::<T>::OF;
    match (segmented, in_place) {
        (false, false) => {
            args.call(|x: &[T], y: &mut [T], _status: &mut [u64], _aggs: &mut [T], _incls: &mut [T], _n: u64| {
                scan_slices(sum, exclusive, x, None, y)
            })
        }
        (false, true) => args.call(|y: &mut [T], _status: &mut [u64], _aggs: &mut [T], _incls: &mut [T], _n: u64| {
            let x = y.to_vec();
            scan_slices(sum, exclusive, &x, None, y)
        }),
        (true, false) => args.call(
            |x: &[T], flags: &[u32], y: &mut [T], _status: &mut [u64], _aggs: &mut [T], _incls: &mut [T], _n: u64| {
                scan_slices(sum, exclusive, x, Some(flags), y)
            },
        ),
        (true, true) => {
            args.call(|y: &mut [T], flags: &[u32], _status: &mut [u64], _aggs: &mut [T], _incls: &mut [T], _n: u64| {
                let x = y.to_vec();
                scan_slices(sum, exclusive, &x, Some(flags), y)
            })
        }
    }
}

/// The host function of a scan kernel; the const parameters are the
/// kernel's defines: EXCLUSIVE, SEGMENTED, IN_PLACE.
pub(crate) fn scan<T: Number, const EXCLUSIVE: bool, const SEGMENTED: bool, const IN_PLACE: bool>(
    args: &mut HostArgs<'_>,
) -> Result<()> {
    dispatch::<T>(args, EXCLUSIVE, SEGMENTED, IN_PLACE)
}
