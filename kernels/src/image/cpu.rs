//! CPU implementation of gray and the convolutions.

use kiln_core::{HostArgs, Result};
use multiversion::multiversion;
use rayon::prelude::*;

use super::{border_index, Border, Pixel};
use crate::prefetch;

/// Pixels per rayon task.
const PIXELS: usize = 1 << 15;

/// Pixels gray splits into channels at a time.
const GROUP: usize = 64;
/// How many groups ahead of the one split gray asks for its input.
const AHEAD: usize = 4;

/// Pixels of a row a convolution sums together.
const SEGMENT: usize = 512;

/// The seed's luma weights in exact integer arithmetic, truncated.
pub(crate) fn gray_of(r: u8, g: u8, b: u8) -> u8 {
    ((299 * r as u32 + 587 * g as u32 + 114 * b as u32) / 1000) as u8
}

/// `out[i] = gray(in[CH i..])`; arguments (in, out, pixels).
pub(crate) fn gray<const CH: usize>(args: &mut HostArgs<'_>) -> Result<()> {
    let input = args.input::<u8>(0)?;
    let out = args.output::<u8>(1)?;
    // Chunks of pixels per task. Inside, groups of pixels are first split
    // into their channels (a plain copy), then weighed channel by channel
    // in a loop that vectorises (interleaved bytes do not).
    out.par_chunks_mut(PIXELS).zip(input.par_chunks(PIXELS * CH)).for_each(|(o, p)| {
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

/// `sums[i] += w * p[i]`, built also for AVX2 (wider vectors, the same
/// separate roundings) and chosen at run time.
#[multiversion(targets("x86_64+avx2"))]
fn tap<P: Pixel>(sums: &mut [f32], p: &[P], w: f32) {
    for (s, p) in sums.iter_mut().zip(p) {
        *s += w * p.to_f32();
    }
}

/// `out = convolve(in, weights) / divisor`; arguments (in, weights, out,
/// width, height, filter_w, filter_h, border, divisor). Rows in parallel;
/// each sum is taken in f32 in the filter's raster order, as on the GPUs.
pub(crate) fn convolve<P: Pixel>(args: &mut HostArgs<'_>) -> Result<()> {
    let (input, weights) = (args.input::<P>(0)?, args.input::<f32>(1)?);
    let width = args.scalar::<u64>(3)? as usize;
    let height = args.scalar::<u64>(4)? as usize;
    let fw = args.scalar::<u32>(5)? as usize;
    let fh = args.scalar::<u32>(6)? as usize;
    let border = Border::from_code(args.scalar::<u32>(7)?);
    let divisor = args.scalar::<f32>(8)?;
    let out = args.output::<P>(2)?;
    if width == 0 {
        return Ok(());
    }
    let (rx, ry) = ((fw / 2) as i64, (fh / 2) as i64);
    // Where the whole filter lies inside the image no tap needs the border
    // rule: those pixels of a row are summed together, tap by tap in the
    // filter's raster order (each pixel's sum in the same order as below,
    // so the same bits), which vectorises across the row.
    let (left, right) = (fw / 2, fw - 1 - fw / 2);
    let (up, down) = (fh / 2, fh - 1 - fh / 2);
    let xs = left..width.saturating_sub(right).max(left);
    out.par_chunks_mut(width).enumerate().for_each(|(y, row)| {
        let inside = y >= up && y + down < height && !xs.is_empty() && row.len() == width;
        if inside {
            // Segments of the row, so the sums and the taps' input stay in
            // the first-level cache across the taps.
            let mut sums = [0.0f32; SEGMENT];
            for x0 in xs.clone().step_by(SEGMENT) {
                let len = SEGMENT.min(xs.end - x0);
                let sums = &mut sums[..len];
                sums.fill(0.0);
                for i in 0..fh {
                    for j in 0..fw {
                        let w = weights[i * fw + j];
                        let start = (y - up + i) * width + x0 - left + j;
                        tap(sums, &input[start..start + len], w);
                    }
                }
                for (o, s) in row[x0..x0 + len].iter_mut().zip(sums.iter()) {
                    *o = P::from_f32(s / divisor);
                }
            }
        }
        for (x, o) in row.iter_mut().enumerate() {
            if inside && xs.contains(&x) {
                continue;
            }
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
            *o = P::from_f32(sum / divisor);
        }
    });
    Ok(())
}
