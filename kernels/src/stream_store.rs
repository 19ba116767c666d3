//! Copies into host memory that bypass the cache (non-temporal stores on
//! x86-64), for outputs too large to stay in cache: a plain store first
//! reads the line it writes, so such an output moves twice its bytes.

/// Outputs of this many bytes and more are worth writing past the cache.
pub(crate) const STREAM_FROM: usize = 32 << 20;

/// Copy `src` into `dst` (the same length), the lines of `dst` that lie
/// whole inside it with non-temporal stores where the machine has them.
/// Call [`fence`] before the written memory is handed to another thread.
#[inline]
pub(crate) fn copy<T: bytemuck::Pod>(dst: &mut [T], src: &[T]) {
    let (dst, src): (&mut [u8], &[u8]) = (bytemuck::cast_slice_mut(dst), bytemuck::cast_slice(src));
    let n = dst.len().min(src.len());
    let (dst, src) = (&mut dst[..n], &src[..n]);
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let head = dst.as_ptr().align_offset(64).min(n);
        let lines = (n - head) / 64 * 64;
        let (first, rest) = dst.split_at_mut(head);
        let (middle, tail) = rest.split_at_mut(lines);
        first.copy_from_slice(&src[..head]);
        for (to, from) in middle.chunks_exact_mut(64).zip(src[head..].chunks_exact(64)) {
            let (to, from) = (to.as_mut_ptr().cast::<__m128i>(), from.as_ptr().cast::<__m128i>());
            for q in 0..4 {
                // SAFETY: SSE2 is part of x86-64. Both chunks are 64 bytes,
                // so bytes 16q..16q + 16 lie inside each; `to` starts on a
                // 64-byte boundary, so the store is 16-byte aligned as
                // `_mm_stream_si128` requires; the load is unaligned. `dst`
                // is borrowed exclusively.
                unsafe { _mm_stream_si128(to.add(q), _mm_loadu_si128(from.add(q))) };
            }
        }
        tail.copy_from_slice(&src[head + lines..]);
    }
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(src);
}

/// Copy `src` into `dst` (the same length): with `stream` as [`copy`] does,
/// else with plain stores.
#[inline]
pub(crate) fn write<T: bytemuck::Pod>(dst: &mut [T], src: &[T], stream: bool) {
    if stream {
        copy(dst, src);
    } else {
        dst.copy_from_slice(src);
    }
}

/// Order this thread's non-temporal stores before its later stores (such
/// as the end of a parallel task, which publishes its output).
#[inline]
pub(crate) fn fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of x86-64; a fence has no operands.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// Calls [`fence`] when dropped, if made with `true`: held across a task
/// that may stream, it orders the task's stores on every way out of it,
/// errors included.
pub(crate) struct FenceOnDrop(pub(crate) bool);

impl Drop for FenceOnDrop {
    fn drop(&mut self) {
        if self.0 {
            fence();
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn copies_every_byte_at_any_alignment() {
        let src: Vec<u32> = (0..300u32).map(|i| i.wrapping_mul(2654435761)).collect();
        let mut backing = vec![0u32; 320];
        for skew in 0..16 {
            for len in [0, 1, 15, 16, 17, 100, 300] {
                backing.fill(7);
                super::copy(&mut backing[skew..skew + len], &src[..len]);
                super::fence();
                assert_eq!(&backing[skew..skew + len], &src[..len], "skew {skew}, {len} words");
                assert!(backing[..skew].iter().chain(&backing[skew + len..]).all(|&w| w == 7));
            }
        }
    }
}
