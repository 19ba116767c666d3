//! Asking for memory to be brought into cache ahead of a loop that uses
//! it. Where a loop does much work per element (histograms, compaction),
//! the hardware's own prefetching does not run far enough ahead of it on
//! every machine (measured on a 2-core x86-64 VM: a histogram read 3 GB/s
//! of input per core without, 6 with). Where a loop stores into many
//! places at once (a radix scatter's 256 runs), each store into a line the
//! core does not hold waits for it, more such waits than a core keeps in
//! flight; asked for in order first, the lines come at the rate of a
//! sequential read. Where a loop computes from cache alone (a square root
//! over a chunk's column), memory would sit idle: [`Ahead`] holds the lines
//! the next chunk reads, asked for a few at a time from inside such loops.

/// Bring the line that holds `address` into cache (a hint: it reads
/// nothing into registers and cannot fault, whatever the address).
#[inline(always)]
fn line(address: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: SSE is part of x86-64, and a prefetch neither reads
        // memory into registers nor faults, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(address as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = address;
}

/// Bring every line that holds part of `ahead` into cache (a hint: it
/// reads nothing into registers and cannot fault).
#[inline(always)]
pub(crate) fn lines<T>(ahead: &[T]) {
    let range = ahead.as_ptr_range();
    for at in (range.start as usize & !63..range.end as usize).step_by(64) {
        line(at);
    }
}

/// Slices [`Ahead`] holds at most (the arguments a chunk reads in place);
/// one past them is left to the hardware.
const AHEAD_SLICES: usize = 8;

/// The most lines one [`Ahead::ask`] asks for.
const MOST_PER_ASK: usize = 8;

/// The lines of a few slices, in order, to be asked for a few at a time
/// from loops that read only cache ([`Ahead::ask`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Ahead {
    /// `[line, end)` address ranges; `ranges[next..len]` are left.
    ranges: [(usize, usize); AHEAD_SLICES],
    next: usize,
    len: usize,
    /// Lines per [`Ahead::ask`].
    per_ask: usize,
}

impl Ahead {
    /// No lines to ask for.
    pub(crate) const NONE: Ahead = Ahead { ranges: [(0, 0); AHEAD_SLICES], next: 0, len: 0, per_ask: 1 };

    /// Add the lines that hold part of `s` (past [`AHEAD_SLICES`] slices,
    /// or for an empty one, nothing).
    pub(crate) fn push<T>(&mut self, s: &[T]) {
        let range = s.as_ptr_range();
        if self.len < AHEAD_SLICES && !s.is_empty() {
            self.ranges[self.len] = (range.start as usize & !63, range.end as usize);
            self.len += 1;
        }
    }

    /// Ask for the lines over `asks` calls of [`Ahead::ask`] (as evenly as
    /// whole lines allow, at most [`MOST_PER_ASK`] a call).
    pub(crate) fn pace(&mut self, asks: usize) {
        let lines: usize = self.ranges[self.next..self.len].iter().map(|(at, end)| (end - at).div_ceil(64)).sum();
        self.per_ask = lines.div_ceil(asks.max(1)).clamp(1, MOST_PER_ASK);
    }

    /// Whether every line has been asked for.
    #[inline(always)]
    pub(crate) fn is_done(&self) -> bool {
        self.next >= self.len
    }

    /// Ask for the next few lines (as [`Ahead::pace`] set; fewer at the end).
    #[inline(always)]
    pub(crate) fn ask(&mut self) {
        for _ in 0..self.per_ask {
            if self.next >= self.len {
                return;
            }
            let Some((at, end)) = self.ranges.get_mut(self.next) else { return };
            line(*at);
            *at += 64;
            if *at >= *end {
                self.next += 1;
            }
        }
    }
}

/// Bytes ahead of a streaming read that its input is asked for: on a
/// 2-core x86-64 VM a read-only pass went from 24 to 31-33 GB/s with its
/// input asked for 8 to 16 KiB ahead, and fell off again past 32 KiB.
pub(crate) const STREAM_AHEAD: usize = 12 << 10;

/// Bring the line [`STREAM_AHEAD`] bytes past element `i` of `s` into
/// cache, within `s` or past its end (a hint: a prefetch of any address
/// neither faults nor reads into registers, so the address need not be in
/// `s`; it is formed with wrapping arithmetic and never dereferenced).
#[inline(always)]
pub(crate) fn stream<T>(s: &[T], i: usize) {
    line((s.as_ptr().wrapping_add(i) as usize).wrapping_add(STREAM_AHEAD));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The asks until every line has been asked for.
    fn asks_to_finish(mut ahead: Ahead) -> usize {
        let mut asks = 0;
        while !ahead.is_done() {
            ahead.ask();
            asks += 1;
        }
        asks
    }

    /// The lines that hold part of non-empty `s`.
    fn lines_of<T>(s: &[T]) -> usize {
        let r = s.as_ptr_range();
        (r.end as usize - 1) / 64 - r.start as usize / 64 + 1
    }

    #[test]
    fn paced_lines_are_all_asked_for_within_the_asks_given() {
        let a = vec![0f32; 4096];
        let b = vec![0f64; 4096];
        for (n, asks) in [(2048, 128), (2047, 128), (17, 1), (1, 128), (100, 7)] {
            // A slice starting inside a line covers that line too.
            let (x, y) = (&a[1..1 + n], &b[..n]);
            let mut ahead = Ahead::NONE;
            ahead.push(x);
            ahead.push(y);
            ahead.pace(asks);
            let taken = asks_to_finish(ahead);
            let total = lines_of(x) + lines_of(y);
            assert!(taken <= asks, "{n} elements: {taken} asks, {asks} given");
            assert!(
                taken * ahead.per_ask >= total,
                "{n} elements: {taken} asks of {} for {total} lines",
                ahead.per_ask
            );
            assert!((taken - 1) * ahead.per_ask < total, "{n} elements: {taken} asks of {}", ahead.per_ask);
        }
        assert!(Ahead::NONE.is_done());
        let mut empty = Ahead::NONE;
        empty.push::<f32>(&[]);
        assert!(empty.is_done());
    }

    #[test]
    fn slices_past_the_limit_are_left_out() {
        let a = vec![0u8; 64 * 4];
        let mut ahead = Ahead::NONE;
        for _ in 0..AHEAD_SLICES + 3 {
            ahead.push(&a[..]);
        }
        ahead.pace(usize::MAX);
        assert_eq!(ahead.per_ask, 1);
        assert_eq!(asks_to_finish(ahead), AHEAD_SLICES * lines_of(&a));
    }
}
