//! A running prefix and the chunks and chains the CPU scans run it in:
//! the leaf the CPU scans (`cpu.rs`, `cpu_pass.rs`, `cpu_f32.rs`) and the
//! user scans and folds on the host share.

use multiversion::multiversion;

/// Elements per rayon task.
pub(crate) const CHUNK: usize = 1 << 16;

/// A running prefix: an associative operation on `T` values, accumulated
/// in `Acc`. The operation is a value, so one that is chosen at run time
/// (a user scan's) scans through the same chunks and chains as the sums.
pub(crate) trait Prefix: Sync {
    type T: Copy + Send + Sync;
    type Acc: Copy + Send + Sync;
    /// The prefix of no elements.
    fn zero(&self) -> Self::Acc;
    fn push(&self, acc: Self::Acc, v: Self::T) -> Self::Acc;
    /// `earlier` followed by `later`.
    fn join(&self, earlier: Self::Acc, later: Self::Acc) -> Self::Acc;
    fn value(&self, acc: Self::Acc) -> Self::T;
    /// [`part_sums`], with vector instructions where the operation has them.
    fn chunk_sums(&self, xs: &[Self::T]) -> [Self::Acc; CHAINS] {
        part_sums(self, xs)
    }
    /// [`scan_chains`], with vector instructions where the operation has them.
    fn scan_chunk(
        &self,
        exclusive: bool,
        xs: &[Self::T],
        ys: &mut [Self::T],
        start: Self::Acc,
        sums: &[Self::Acc; CHAINS],
    ) {
        scan_chains(self, exclusive, xs, ys, start, sums)
    }
}

/// Independent prefix chains run side by side in a chunk: one chain's
/// additions wait for each other, the chains' do not, so a chunk is
/// scanned at several additions per cycle rather than one per addition's latency.
pub(crate) const CHAINS: usize = 8;

/// The sums of the `CHAINS` parts of `xs`: `len / CHAINS` elements each,
/// the last part also the remainder; computed side by side.
#[multiversion(targets("x86_64+avx2"))]
pub(super) fn part_sums<P: Prefix + ?Sized>(p: &P, xs: &[P::T]) -> [P::Acc; CHAINS] {
    let part = xs.len() / CHAINS;
    let mut acc = [p.zero(); CHAINS];
    for i in 0..part {
        for (k, a) in acc.iter_mut().enumerate() {
            *a = p.push(*a, xs[k * part + i]);
        }
    }
    for &v in &xs[CHAINS * part..] {
        acc[CHAINS - 1] = p.push(acc[CHAINS - 1], v);
    }
    acc
}

/// The parts' sums joined in order.
pub(crate) fn parts_total<P: Prefix>(p: &P, sums: &[P::Acc; CHAINS]) -> P::Acc {
    sums.iter().fold(p.zero(), |a, &s| p.join(a, s))
}

/// Scan one chunk `xs` into `ys` from the prefix `start` entering it: each
/// part from its own entering prefix (`start` and the sums of the parts
/// before it, `sums` from [`part_sums`]), the parts side by side.
#[multiversion(targets("x86_64+avx2"))]
pub(super) fn scan_chains<P: Prefix + ?Sized>(
    p: &P,
    exclusive: bool,
    xs: &[P::T],
    ys: &mut [P::T],
    start: P::Acc,
    sums: &[P::Acc; CHAINS],
) {
    let part = xs.len() / CHAINS;
    let mut acc = [start; CHAINS];
    for k in 1..CHAINS {
        acc[k] = p.join(acc[k - 1], sums[k - 1]);
    }
    let step = |acc: &mut P::Acc, v: P::T, y: &mut P::T| {
        if exclusive {
            *y = p.value(*acc);
            *acc = p.push(*acc, v);
        } else {
            *acc = p.push(*acc, v);
            *y = p.value(*acc);
        }
    };
    for i in 0..part {
        for (k, a) in acc.iter_mut().enumerate() {
            step(a, xs[k * part + i], &mut ys[k * part + i]);
        }
    }
    for (v, y) in xs[CHAINS * part..].iter().zip(&mut ys[CHAINS * part..]) {
        step(&mut acc[CHAINS - 1], *v, y);
    }
}
