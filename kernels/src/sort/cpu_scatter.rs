//! The CPU radix pass's stable scatter.
//!
//! The counts say where each tile's run of each digit lies in the output:
//! runs follow one another by digit, then by tile. The output is cut into
//! those runs (`split_at_mut`), so each tile owns its 256 runs outright and
//! the tiles scatter in parallel, no two able to meet.
//!
//! Small tiles store each key straight into its run ([`Direct`]): their
//! runs are short and the output stays in cache for the next pass; the
//! runs' lines are asked for, in order, before the first key.
//! Large ones ([`Streamed`]) put a tile's keys first into a 64-byte buffer
//! per digit (16 words, in L1) and copy a full buffer into its run as one
//! cache line, with non-temporal stores on x86-64. Writing 256 runs key by
//! key keeps 256 partly written lines in flight, more than a core tracks,
//! and each line is read before it is written; line by line, and past the
//! cache, the output streams to memory at about twice the rate. Each run's
//! first copy is cut short so that later copies start on a line boundary.

use kiln_core::{Error, Result};

/// Words per buffer: one 64-byte line.
const LINE: usize = 16;

/// Where each (tile, digit) run lies: `counts[d * tiles + t]` keys of digit
/// `d` from tile `t`. Returns the runs of `out`, indexed `t * 256 + d`;
/// an error when the counts do not add up to `n` or exceed `out`.
pub(super) fn runs<'a>(out: &'a mut [u32], counts: &[u32], tiles: usize, n: usize) -> Result<Vec<&'a mut [u32]>> {
    let total: u64 = counts.iter().map(|&c| c as u64).sum();
    if total != n as u64 || out.len() < n {
        return Err(Error::invalid(
            "radix sort scatter (CPU)",
            format!("the digit counts add up to {total} keys for {n} keys and {} outputs", out.len()),
        ));
    }
    let mut slots: Vec<Option<&'a mut [u32]>> = (0..tiles * 256).map(|_| None).collect();
    let mut rest = &mut out[..n];
    for d in 0..256 {
        for t in 0..tiles {
            let (run, tail) = std::mem::take(&mut rest).split_at_mut(counts[d * tiles + t] as usize);
            slots[t * 256 + d] = Some(run);
            rest = tail;
        }
    }
    Ok(slots.into_iter().map(|s| s.unwrap_or_default()).collect())
}

/// Where a tile's keys (or values) go: its 256 runs, one per digit.
pub(super) trait Sink {
    /// Append `word` to digit `d`'s run; an error if the run is full (the
    /// tile holds more keys of `d` than were counted).
    fn push(&mut self, d: usize, word: u32) -> Result<()>;
    /// Write out whatever is still held.
    fn finish(self) -> Result<()>;
}

fn overflow(d: usize, have: usize) -> Error {
    Error::invalid(
        "radix sort scatter (CPU)",
        format!("more keys of digit {d} in a tile than its run of {have}: the keys changed during the sort"),
    )
}

/// Stores each word straight into its run.
pub(super) struct Direct<'r, 'a> {
    runs: &'r mut [&'a mut [u32]],
    done: [usize; 256],
}

impl<'r, 'a> Direct<'r, 'a> {
    /// A sink writing into `runs` (one per digit), each of whose lines is
    /// first asked for, run after run: the keys then land in lines the
    /// core already holds, where each store into a line it does not hold
    /// would wait for it. (On a 2-core x86-64 VM this took a sort of 1 Mi
    /// u32 keys from 6.4-6.5 ms to 4.9-5.4, and of 4 Mi from 26-29 to
    /// 23-24; asking with PREFETCHW instead, for lines to write, was no
    /// faster.)
    pub(super) fn new(runs: &'r mut [&'a mut [u32]]) -> Self {
        for run in runs.iter() {
            crate::prefetch::lines(run);
        }
        Direct { runs, done: [0; 256] }
    }
}

impl Sink for Direct<'_, '_> {
    #[inline(always)]
    fn push(&mut self, d: usize, word: u32) -> Result<()> {
        let at = self.done[d];
        let run = &mut self.runs[d];
        let have = run.len();
        *run.get_mut(at).ok_or_else(|| overflow(d, have))? = word;
        self.done[d] = at + 1;
        Ok(())
    }

    fn finish(self) -> Result<()> {
        Ok(())
    }
}

/// Buffers a line of each run and copies it out whole, past the cache.
pub(super) struct Streamed<'r, 'a> {
    runs: &'r mut [&'a mut [u32]],
    buf: Vec<[u32; LINE]>,
    /// The first filled word of each buffer (nonzero before a run's first copy).
    from: [u8; 256],
    /// Words filled in each buffer.
    fill: [u8; 256],
    /// Words already copied into each run.
    done: [usize; 256],
}

impl<'r, 'a> Streamed<'r, 'a> {
    /// Buffers for `runs` (one per digit), aligned so that each run's copies
    /// after its first start on a 64-byte line.
    pub(super) fn new(runs: &'r mut [&'a mut [u32]]) -> Self {
        let mut from = [0u8; 256];
        for (f, run) in from.iter_mut().zip(runs.iter()) {
            // The word of its line the run starts at.
            *f = ((run.as_ptr() as usize / 4) % LINE) as u8;
        }
        Streamed { runs, buf: vec![[0; LINE]; 256], from, fill: from, done: [0; 256] }
    }

    /// Copy digit `d`'s buffer into its run.
    #[inline(never)]
    fn flush(&mut self, d: usize) -> Result<()> {
        let (from, fill) = (self.from[d] as usize, self.fill[d] as usize);
        let at = self.done[d];
        let have = self.runs[d].len();
        let dst = self.runs[d].get_mut(at..at + fill - from).ok_or_else(|| overflow(d, have))?;
        crate::stream_store::copy(dst, &self.buf[d][from..fill]);
        self.done[d] = at + fill - from;
        self.from[d] = 0;
        self.fill[d] = 0;
        Ok(())
    }
}

impl Sink for Streamed<'_, '_> {
    #[inline(always)]
    fn push(&mut self, d: usize, word: u32) -> Result<()> {
        let f = self.fill[d] as usize;
        self.buf[d][f] = word;
        self.fill[d] = f as u8 + 1;
        if f + 1 == LINE {
            self.flush(d)?;
        }
        Ok(())
    }

    fn finish(mut self) -> Result<()> {
        for d in 0..256 {
            if self.fill[d] > self.from[d] {
                self.flush(d)?;
            }
        }
        crate::stream_store::fence();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_follow_by_digit_then_tile() {
        let mut out: Vec<u32> = (0..10).collect();
        // Two tiles: digit 0 has 1 + 2 keys, digit 1 has 3 + 0, digit 5 has 4 + 0.
        let mut counts = vec![0u32; 512];
        counts[0] = 1;
        counts[1] = 2;
        counts[2] = 3;
        counts[10] = 4;
        let runs = runs(&mut out, &counts, 2, 10).unwrap();
        assert_eq!(runs.len(), 512);
        assert_eq!(&*runs[0], &[0]);
        assert_eq!(&*runs[256], &[1, 2]);
        assert_eq!(&*runs[1], &[3, 4, 5]);
        assert!(runs[257].is_empty());
        assert_eq!(&*runs[5], &[6, 7, 8, 9]);
    }

    #[test]
    fn counts_that_do_not_add_up_are_errors() {
        let mut out = vec![0u32; 8];
        let mut counts = vec![0u32; 256];
        counts[3] = 7;
        assert!(runs(&mut out, &counts, 1, 8).is_err());
        counts[3] = 9;
        assert!(runs(&mut out, &counts, 1, 8).is_err());
        assert!(runs(&mut out[..4], &counts, 1, 9).is_err());
    }

    #[test]
    fn streamed_writes_every_word_in_order_and_refuses_overflow() {
        // Runs of every length around a line, at every alignment.
        for skew in 0..LINE {
            let lens: Vec<usize> = (0..256).map(|d| (d * 7 + skew) % 41).collect();
            let n: usize = lens.iter().sum();
            let mut backing = vec![u32::MAX; n + skew];
            let out = &mut backing[skew..];
            let mut counts = vec![0u32; 256];
            for (c, &l) in counts.iter_mut().zip(&lens) {
                *c = l as u32;
            }
            let mut rs = runs(out, &counts, 1, n).unwrap();
            let mut c = Streamed::new(&mut rs);
            for (d, &l) in lens.iter().enumerate().rev() {
                for i in 0..l {
                    c.push(d, (d * 1000 + i) as u32).unwrap();
                }
            }
            c.finish().unwrap();
            let want: Vec<u32> =
                lens.iter().enumerate().flat_map(|(d, &l)| (0..l).map(move |i| (d * 1000 + i) as u32)).collect();
            assert_eq!(&backing[skew..], &want[..], "skew {skew}");
            let mut direct_backing = vec![u32::MAX; n];
            let mut rs = runs(&mut direct_backing, &counts, 1, n).unwrap();
            let mut c = Direct::new(&mut rs);
            for (d, &l) in lens.iter().enumerate() {
                for i in 0..l {
                    c.push(d, (d * 1000 + i) as u32).unwrap();
                }
            }
            c.finish().unwrap();
            assert_eq!(direct_backing, want, "direct, skew {skew}");
        }
        let mut out = vec![0u32; 3];
        let mut counts = vec![0u32; 256];
        counts[0] = 3;
        let mut rs = runs(&mut out, &counts, 1, 3).unwrap();
        let mut c = Streamed::new(&mut rs);
        let pushed: Result<Vec<()>> = (0..40).map(|i| c.push(0, i)).collect();
        assert!(pushed.is_err());
        let mut rs = runs(&mut out, &counts, 1, 3).unwrap();
        let mut c = Direct::new(&mut rs);
        let pushed: Result<Vec<()>> = (0..4).map(|i| c.push(0, i)).collect();
        assert!(pushed.is_err());
    }
}
