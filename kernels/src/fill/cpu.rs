//! CPU implementation of sequence.

use kiln_core::{DType, Result};
use multiversion::multiversion;
use rayon::prelude::*;

use crate::{Number, stream_store};

/// Elements per rayon task.
const CHUNK: usize = 1 << 16;
/// Elements computed at a time before a large sequence's copy out.
const STAGE: usize = 1024;

/// `dst[i] = start + i * step`.
pub(crate) fn sequence<T: Number>(dst: &mut [T], start: T, step: T, _n: u64) -> Result<()> {
    // Indices below 2^31 convert to floats from i32, which vectorises (from
    // u64 it does not before AVX-512); both round the same integer to nearest.
    let small_len = dst.len() < i32::MAX as usize;
    if small_len
        && T::DTYPE == DType::F32
        && let Ok(d) = bytemuck::try_cast_slice_mut::<T, f32>(dst)
    {
        let (a, s) = (bytemuck::cast::<T, f32>(start), bytemuck::cast::<T, f32>(step));
        small(d, |i| a + i as f32 * s);
        return Ok(());
    }
    if small_len
        && T::DTYPE == DType::F64
        && let Ok(d) = bytemuck::try_cast_slice_mut::<T, f64>(dst)
    {
        let (a, s) = (bytemuck::cast::<T, f64>(start), bytemuck::cast::<T, f64>(step));
        small(d, |i| a + f64::from(i) * s);
        return Ok(());
    }
    dst.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        let base = (c * CHUNK) as u64;
        for (i, d) in (base..).zip(chunk) {
            *d = start.add(T::from_index(i).mul(step));
        }
    });
    Ok(())
}

/// `dst[i] = f(i)` for a destination of fewer than `i32::MAX` elements.
/// Large ones are computed a stage at a time into a buffer in L1 and
/// copied out past the cache ([`stream_store`]).
fn small<T: bytemuck::Pod + Send, F: Fn(i32) -> T + Sync>(dst: &mut [T], f: F) {
    let streamed = std::mem::size_of_val(dst) >= stream_store::STREAM_FROM;
    dst.par_chunks_mut(CHUNK).enumerate().for_each(|(c, chunk)| {
        let base = (c * CHUNK) as i32;
        if !streamed {
            return from(chunk, base, &f);
        }
        let mut stage = [T::zeroed(); STAGE];
        for (s, part) in chunk.chunks_mut(STAGE).enumerate() {
            let stage = &mut stage[..part.len()];
            from(stage, base + (s * STAGE) as i32, &f);
            stream_store::copy(part, stage);
        }
        stream_store::fence();
    });
}

/// `chunk[k] = f(base + k)`, built also for AVX2 and chosen at run time.
#[multiversion(targets("x86_64+avx2"))]
fn from<T, F: Fn(i32) -> T>(chunk: &mut [T], base: i32, f: &F) {
    for (k, d) in chunk.iter_mut().enumerate() {
        *d = f(base + k as i32);
    }
}

#[cfg(test)]
mod tests {
    use kiln_core::Device;
    use kiln_cpu::Cpu;

    use crate::fill::sequence;
    use crate::stream_store::STREAM_FROM;

    #[test]
    fn large_sequences_are_streamed_whole() {
        let dev = Device::<Cpu>::open(0).unwrap();
        let s = dev.stream();
        // Past the streaming threshold, ending mid-stage; the view starts
        // 3 elements in, so its lines begin mid-buffer.
        let n = STREAM_FROM / 4 + 1029;
        let mut f = s.upload(&vec![f32::NAN; n + 3]).unwrap();
        sequence(&s, &mut f.slice_mut(3..).unwrap(), 1.5f32, 0.25).unwrap();
        let got = f.to_vec().unwrap();
        assert!(got[..3].iter().all(|v| v.is_nan()), "before the view");
        let wrong = got[3..].iter().enumerate().position(|(i, &v)| v != 1.5 + i as f32 * 0.25);
        assert_eq!(wrong, None, "f32 sequence of {n}");
        let n = STREAM_FROM / 8 + 5;
        let mut d = s.upload(&vec![f64::NAN; n]).unwrap();
        sequence(&s, &mut d, -2.0f64, 0.125).unwrap();
        let wrong = d.to_vec().unwrap().iter().enumerate().position(|(i, &v)| v != -2.0 + i as f64 * 0.125);
        assert_eq!(wrong, None, "f64 sequence of {n}");
    }
}
