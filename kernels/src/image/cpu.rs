//! CPU implementation of gray and the convolutions.

use kiln_core::Result;
use multiversion::multiversion;
use rayon::prelude::*;

use super::{Border, Pixel, border_index};
use crate::code::Code;
use crate::prefetch;

/// Pixels per rayon task.
const PIXELS: usize = 1 << 15;

/// Pixels gray splits into channels at a time.
const GROUP: usize = 64;
/// How many groups ahead of the one split gray asks for its input.
const AHEAD: usize = 4;

/// Pixels of a row a convolution sums side by side in registers.
const LANES: usize = 32;

/// The seed's luma weights in exact integer arithmetic, truncated.
pub(crate) fn gray_of(r: u8, g: u8, b: u8) -> u8 {
    ((299 * r as u32 + 587 * g as u32 + 114 * b as u32) / 1000) as u8
}

/// `out[i] = gray(input[CH i..])`.
pub(crate) fn gray<const CH: usize>(input: &[u8], out: &mut [u8], _pixels: u64) -> Result<()> {
    // Chunks of pixels per task. With AVX2, byte shuffles split 32 pixels
    // at a time into their channels in registers. Otherwise (and for the
    // last few pixels), groups of pixels are first split into their
    // channels (a plain copy), then weighed channel by channel in a loop
    // that vectorises (interleaved bytes do not).
    #[cfg(target_arch = "x86_64")]
    let avx2 = is_x86_feature_detected!("avx2");
    out.par_chunks_mut(PIXELS).zip(input.par_chunks(PIXELS * CH)).for_each(|(o, p)| {
        #[cfg(target_arch = "x86_64")]
        let (o, p) = if avx2 {
            // SAFETY: the CPU has AVX2 (detected above).
            let done = unsafe { super::gray_x86::gray::<CH>(o, p) };
            (&mut o[done..], &p[done * CH..])
        } else {
            (o, p)
        };
        let (mut r, mut g, mut b) = ([0u8; GROUP], [0u8; GROUP], [0u8; GROUP]);
        for (j, (o, q)) in o.chunks_mut(GROUP).zip(p.chunks(GROUP * CH)).enumerate() {
            // The splitting copy is slow enough for the hardware
            // prefetcher to fall behind it: ask for the input ahead.
            if let Some(ahead) = p.get((j + AHEAD) * GROUP * CH..) {
                prefetch::lines(&ahead[..ahead.len().min(GROUP * CH)]);
            }
            for (k, px) in q.chunks_exact(CH).enumerate().take(GROUP) {
                (r[k], g[k], b[k]) = (px[0], px[1], px[2]);
            }
            weigh(o, (&r, &g, &b));
        }
    });
    Ok(())
}

/// `o[i] = gray(r[i], g[i], b[i])`, built also for AVX2 and chosen at run time.
#[multiversion(targets("x86_64+avx2"))]
fn weigh(o: &mut [u8], (r, g, b): (&[u8; GROUP], &[u8; GROUP], &[u8; GROUP])) {
    for (((o, &r), &g), &b) in o.iter_mut().zip(r).zip(g).zip(b) {
        *o = gray_of(r, g, b);
    }
}

/// A convolution's input as its window slides along a row: `input[start +
/// i * width + j]` is tap (i, j) of the first pixel summed.
#[derive(Clone, Copy)]
struct Window<'a, P> {
    input: &'a [P],
    start: usize,
    width: usize,
    fw: usize,
    fh: usize,
}

/// `out[x] = sum(w[i][j] * window(x)[i][j]) / divisor` for each pixel of
/// `out`, whose window lies wholly inside the image. Blocks of `LANES`
/// pixels are summed side by side in registers, tap by tap in the filter's
/// raster order from 0.0, each product and sum rounded separately (the same
/// bits as one pixel at a time). Built also for AVX2 and AVX-512, chosen at
/// run time.
#[multiversion(targets("x86_64+avx512f+avx512bw", "x86_64+avx2"))]
fn interior<P: Pixel>(out: &mut [P], win: Window<'_, P>, weights: &[f32], divisor: f32) {
    let done = out.len() - out.len() % LANES;
    for (b, o) in out[..done].chunks_exact_mut(LANES).enumerate() {
        sum_block::<P, LANES>(o, win, b * LANES, weights, divisor);
    }
    for x in done..out.len() {
        sum_block::<P, 1>(&mut out[x..x + 1], win, x, weights, divisor);
    }
}

/// The `N` pixels `o` from `x` of [`interior`]'s row.
#[inline(always)]
fn sum_block<P: Pixel, const N: usize>(o: &mut [P], win: Window<'_, P>, x: usize, weights: &[f32], divisor: f32) {
    let mut acc = [0.0f32; N];
    for i in 0..win.fh {
        for j in 0..win.fw {
            let w = weights[i * win.fw + j];
            let at = win.start + i * win.width + j + x;
            for (a, p) in acc.iter_mut().zip(&win.input[at..at + N]) {
                *a += w * p.to_f32();
            }
        }
    }
    for (o, a) in o.iter_mut().zip(acc) {
        *o = P::from_f32(a / divisor);
    }
}

/// `out = convolve(input, weights) / divisor`, the filter `fw x fh`, edges
/// by the border of code `border`. Rows in parallel; each sum is taken in
/// f32 in the filter's raster order, as on the GPUs.
#[allow(clippy::too_many_arguments)]
pub(crate) fn convolve<P: Pixel>(
    input: &[P],
    weights: &[f32],
    out: &mut [P],
    width: u64,
    height: u64,
    fw: u32,
    fh: u32,
    border: u32,
    divisor: f32,
) -> Result<()> {
    let (width, height, fw, fh) = (width as usize, height as usize, fw as usize, fh as usize);
    let border = Border::decode(border, "convolve on the CPU: the border argument")?;
    if width == 0 {
        return Ok(());
    }
    let (rx, ry) = ((fw / 2) as i64, (fh / 2) as i64);
    // Where the whole filter lies inside the image no tap needs the border
    // rule: those pixels of a row are summed side by side, each in the same
    // order as below (so the same bits), which vectorises across the row.
    let (left, right) = (fw / 2, fw - 1 - fw / 2);
    let (up, down) = (fh / 2, fh - 1 - fh / 2);
    let xs = left..width.saturating_sub(right).max(left);
    out.par_chunks_mut(width).enumerate().for_each(|(y, row)| {
        let inside = y >= up && y + down < height && !xs.is_empty() && row.len() == width;
        if inside {
            let win = Window { input, start: (y - up) * width + xs.start - left, width, fw, fh };
            interior(&mut row[xs.clone()], win, weights, divisor);
        }
        // The pixels whose window crosses the border, one at a time.
        let edges = if inside { [0..xs.start, xs.end..row.len()] } else { [0..row.len(), 0..0] };
        for x in edges.into_iter().flatten() {
            let mut sum = 0.0f32;
            for i in 0..fh {
                let gy = border_index(y as i64 + i as i64 - ry, height as i64, border);
                for j in 0..fw {
                    let gx = border_index(x as i64 + j as i64 - rx, width as i64, border);
                    let p = match (gy, gx) {
                        (Some(gy), Some(gx)) => input[gy * width + gx].to_f32(),
                        _ => 0.0,
                    };
                    sum += weights[i * fw + j] * p;
                }
            }
            row[x] = P::from_f32(sum / divisor);
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// The window sums of `interior`, one pixel at a time in raster order.
    fn one_at_a_time(win: Window<'_, f32>, n: usize, weights: &[f32], divisor: f32) -> Vec<f32> {
        (0..n)
            .map(|x| {
                let mut sum = 0.0f32;
                for i in 0..win.fh {
                    for j in 0..win.fw {
                        sum += weights[i * win.fw + j] * win.input[win.start + i * win.width + j + x];
                    }
                }
                sum / divisor
            })
            .collect()
    }

    #[test]
    fn interior_sums_give_the_bits_of_one_pixel_at_a_time() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for (fw, fh) in [(1, 1), (3, 3), (5, 3), (1, 7), (15, 15)] {
            for n in [1, LANES - 1, LANES, LANES + 1, 3 * LANES + 5] {
                let width = n + fw - 1 + 2;
                let input: Vec<f32> = (0..width * (fh + 1)).map(|_| rng.random_range(-1e3f32..1e3)).collect();
                let weights: Vec<f32> = (0..fw * fh).map(|_| rng.random_range(-2.0f32..2.0)).collect();
                let win = Window { input: &input, start: width + 1, width, fw, fh };
                let mut out = vec![f32::NAN; n];
                interior(&mut out, win, &weights, 3.0);
                let want = one_at_a_time(win, n, &weights, 3.0);
                for (x, (got, want)) in out.iter().zip(&want).enumerate() {
                    assert_eq!(got.to_bits(), want.to_bits(), "pixel {x} of {n}, {fw} x {fh} filter");
                }
            }
        }
    }
}
