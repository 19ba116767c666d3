//! Asking for memory to be brought into cache ahead of a loop that uses
//! it. Where a loop does much work per element (histograms, compaction),
//! the hardware's own prefetching does not run far enough ahead of it on
//! every machine (measured on a 2-core x86-64 VM: a histogram read 3 GB/s
//! of input per core without, 6 with). Where a loop stores into many
//! places at once (a radix scatter's 256 runs), each store into a line the
//! core does not hold waits for it, more such waits than a core keeps in
//! flight; asked for in order first, the lines come at the rate of a
//! sequential read.

/// Bring every line that holds part of `ahead` into cache (a hint: it
/// reads nothing into registers and cannot fault).
#[inline(always)]
pub(crate) fn lines<T>(ahead: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let range = ahead.as_ptr_range();
        for line in (range.start as usize & !63..range.end as usize).step_by(64) {
            // SAFETY: SSE is part of x86-64, and a prefetch neither reads
            // memory into registers nor faults, whatever the address (here
            // one in a line that holds part of `ahead`).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line as *const i8) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ahead;
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
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let at = s.as_ptr().wrapping_add(i).cast::<i8>().wrapping_add(STREAM_AHEAD);
        // SAFETY: SSE is part of x86-64; a prefetch neither reads memory
        // into registers nor faults, whatever the address.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(at) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (s, i);
}
