//! Asking for input to be brought into cache ahead of a loop that reads
//! it. Where a loop does much work per element (histograms, compaction),
//! the hardware's own prefetching does not run far enough ahead of it on
//! every machine (measured on a 2-core x86-64 VM: a histogram read 3 GB/s
//! of input per core without, 6 with).

/// Bring the lines of `ahead` into cache (a hint: it reads nothing into
/// registers and cannot fault).
#[inline(always)]
pub(crate) fn lines<T>(ahead: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let range = ahead.as_ptr_range();
        for line in (range.start as usize..range.end as usize).step_by(64) {
            // SAFETY: SSE is part of x86-64, and a prefetch neither reads
            // memory into registers nor faults; the address lies inside `ahead`.
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

/// Bring the lines of `s` into cache ready to be written (a hint, as
/// [`lines`]): a store into a line not held for writing first waits for
/// the line, and a loop storing into many places at once (a radix
/// scatter's 256 runs) keeps too many of those waits in flight for a core;
/// asked for in order first, the lines come at the rate of a sequential
/// read. Each line that holds part of `s` is asked for, the first one
/// included where `s` starts inside it.
#[inline(always)]
pub(crate) fn lines_for_write<T>(s: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0};
        let range = s.as_ptr_range();
        for line in (range.start as usize & !63..range.end as usize).step_by(64) {
            // SAFETY: SSE is part of x86-64; a prefetch (PREFETCHW, where
            // the CPU has it, else a plain prefetch or nothing) neither
            // reads memory into registers nor faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_ET0>(line as *const i8) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = s;
}
