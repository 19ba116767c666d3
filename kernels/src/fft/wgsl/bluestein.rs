//! Bluestein's chirp-z transform, for lengths with a prime factor past 7.
//!
//! With `w_j = exp(-+ pi i j^2 / n)` (`-` forward), `jk = (j^2 + k^2 -
//! (k - j)^2) / 2` makes the transform a convolution:
//! `X[k] = w_k sum_j (x_j w_j) conj(w_{k - j})`. It is computed circularly
//! at a smooth length `m >= 2n - 1` (so that nothing wraps): the first
//! kernel of a forward length-`m` transform reads `x_j w_j` (zero from `n`
//! on), its last multiplies by the transform of the filter `conj(w)`
//! (made on the host in f64, divided by `m`), and the last kernel of the
//! inverse length-`m` transform multiplies element `k` by `w_k`, scales,
//! and writes the `n` (or fewer) elements kept.

use super::plan::bluestein_len;
use super::stockham::{Load, Store};
use super::{First, Last, Launches, Sequence, Slot, sequence, tables};

/// A Bluestein plan: the two smooth transforms and the table offsets of
/// the chirp and of the filter's transform.
#[derive(Debug, Clone)]
pub(super) struct Bluestein {
    n: usize,
    m: usize,
    fwd: Sequence,
    inv: Sequence,
    chirp: u32,
    filter: u32,
}

impl Bluestein {
    /// The plan of length `n` in direction `inverse`, its constants added
    /// to `tb`; `None` where `n` is too long to pad in this address space
    /// or workgroup memory is too small.
    pub(super) fn new(n: usize, inverse: bool, csize: usize, shared: usize, tb: &mut tables::Builder) -> Option<Self> {
        let m = bluestein_len(n)?;
        let fwd = sequence(m, false, csize, shared, tb)?;
        let inv = sequence(m, true, csize, shared, tb)?;
        let chirp = tb.chirp(n, inverse);
        let filter = tb.filter(n, m, inverse);
        Some(Bluestein { n, m, fwd, inv, chirp, filter })
    }

    /// The launches from the source to `to`: one kernel where the padded
    /// length is one (the whole convolution in workgroup memory), else the
    /// forward transform into scratch (`m` per transform) and the inverse
    /// from it.
    pub(super) fn launches(&self, ls: &mut Launches<'_>, load: Load, store: Store, keep: usize, scale: f64, to: Slot) {
        let head = First { load, pre: Some((self.chirp, self.n as u32)) };
        let trunc = Some(keep.min(self.n) as u32);
        if self.fwd.kernels.len() == 1 && !self.fwd.kernels[0].radices.is_empty() {
            let last = Last { store, post: None, trunc, scale };
            ls.sequence(&self.fwd, head, last, Slot::Src, to, Some(self.filter));
            return;
        }
        let mid = Slot::Scratch(if matches!(to, Slot::Scratch(0, _)) { 1 } else { 0 }, self.m);
        let last = Last { store: Store::Complex, post: Some(self.filter), trunc: None, scale: 1.0 };
        ls.sequence(&self.fwd, head, last, Slot::Src, mid, None);
        let head = First { load: Load::Complex, pre: None };
        ls.sequence(&self.inv, head, Last { store, post: Some(self.chirp), trunc, scale }, mid, to, None);
    }
}
