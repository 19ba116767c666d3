//! The CPU backend's transforms: rustfft's plans (mixed radix with SIMD
//! butterflies for smooth lengths, Rader and Bluestein for the rest), run
//! over a pass's batch in parallel with rayon.
//!
//! Each task takes a tile of up to [`TILE`] transforms that lie side by side
//! along the pass's inner batch dimension, gathers them into one contiguous
//! buffer (reading `TILE` neighbours at once, so that a column pass reads
//! whole cache lines), transforms them with one call, and scatters the
//! scaled results. The output positions of different transforms are
//! disjoint ([`disjoint`], checked before any is written), which is what
//! lets tasks write one buffer from several threads.

use std::sync::{Arc, Mutex};

use kiln_core::{Complex, Error, FftKind, HostArgs, HostClosure, Program, Result};
use rayon::prelude::*;
use realfft::RealFftPlanner;
use rustfft::{Fft, FftPlanner};

use super::{AxisPass, FftDirection, FftFloat};

/// Transforms gathered and computed together by one task.
const TILE: usize = 16;

/// rustfft's and realfft's planners for one precision, kept for the whole
/// process (their plans are shared by every thread and every CPU device):
/// [`FftFloat`]'s `planners`.
pub struct Planners<T: rustfft::FftNum> {
    complex: Mutex<FftPlanner<T>>,
    real: Mutex<RealFftPlanner<T>>,
}

impl<T: FftFloat> Planners<T> {
    pub(super) fn new() -> Self {
        Planners { complex: Mutex::new(FftPlanner::new()), real: Mutex::new(RealFftPlanner::new()) }
    }

    fn complex(&self, n: usize, direction: FftDirection) -> Arc<dyn Fft<T>> {
        let mut p = self.complex.lock().unwrap_or_else(|p| p.into_inner());
        match direction {
            FftDirection::Forward => p.plan_fft_forward(n),
            FftDirection::Inverse => p.plan_fft_inverse(n),
        }
    }
}

/// The CPU program of `pass` on `T`: a closure over the pass, named and
/// keyed by everything in it, so that the device's kernel cache keeps one
/// per distinct pass (the CPU's plans, cached per device).
pub(crate) fn program<T: FftFloat>(pass: &AxisPass) -> Program {
    let key = format!("kiln_fft_cpu_{}_{pass:?}", T::DTYPE);
    let pass = *pass;
    let run = move |args: &mut HostArgs<'_>| match pass.kind {
        FftKind::C2C => {
            let (src, dst) = (args.input::<Complex<T>>(0)?, args.output::<Complex<T>>(1)?);
            run_pass(&pass, src, dst, complex_lines::<T>(&pass))
        }
        FftKind::R2C => {
            let (src, dst) = (args.input::<T>(0)?, args.output::<Complex<T>>(1)?);
            run_pass(&pass, src, dst, forward_real_lines::<T>(&pass))
        }
        FftKind::C2R => {
            let (src, dst) = (args.input::<Complex<T>>(0)?, args.output::<T>(1)?);
            run_pass(&pass, src, dst, inverse_real_lines::<T>(&pass))
        }
    };
    Program::new(&key).host_closure(HostClosure::new(key.clone(), run))
}

/// What transforms a tile: `(input lines, output lines, lines)`, each side
/// holding `lines` transforms one after another.
type Lines<'a, I, O> = Box<dyn Fn(&mut [I], &mut [O], usize) -> Result<()> + Send + Sync + 'a>;

fn complex_lines<T: FftFloat>(pass: &AxisPass) -> Lines<'static, Complex<T>, Complex<T>> {
    let fft = T::planners().complex(pass.n, pass.direction);
    let scratch_len = fft.get_outofplace_scratch_len();
    Box::new(move |input, output, _| {
        let mut scratch = vec![Complex::default(); scratch_len];
        fft.process_outofplace_with_scratch(input, output, &mut scratch);
        Ok(())
    })
}

fn forward_real_lines<T: FftFloat>(pass: &AxisPass) -> Lines<'static, T, Complex<T>> {
    let n = pass.n;
    let fft = T::planners().real.lock().unwrap_or_else(|p| p.into_inner()).plan_fft_forward(n);
    let scratch_len = fft.get_scratch_len();
    Box::new(move |input, output, lines| {
        let mut scratch = vec![Complex::default(); scratch_len];
        let half = n / 2 + 1;
        for (i, o) in input.chunks_exact_mut(n).zip(output.chunks_exact_mut(half)).take(lines) {
            fft.process_with_scratch(i, o, &mut scratch).map_err(|e| Error::invalid("rfft (CPU)", e.to_string()))?;
        }
        Ok(())
    })
}

fn inverse_real_lines<T: FftFloat>(pass: &AxisPass) -> Lines<'static, Complex<T>, T> {
    let n = pass.n;
    let fft = T::planners().real.lock().unwrap_or_else(|p| p.into_inner()).plan_fft_inverse(n);
    let scratch_len = fft.get_scratch_len();
    Box::new(move |input, output, lines| {
        let mut scratch = vec![Complex::default(); scratch_len];
        let half = n / 2 + 1;
        for (i, o) in input.chunks_exact_mut(half).zip(output.chunks_exact_mut(n)).take(lines) {
            // NumPy and cuFFT ignore the imaginary parts of the zero
            // frequency and (for even n) of the last; realfft asks for zeros.
            i[0].im = T::from_wide(0.0);
            if n.is_multiple_of(2) {
                i[half - 1].im = T::from_wide(0.0);
            }
            fft.process_with_scratch(i, o, &mut scratch).map_err(|e| Error::invalid("irfft (CPU)", e.to_string()))?;
        }
        Ok(())
    })
}

/// Scales a value by a real factor.
trait Scaled<T> {
    fn scaled(self, by: T) -> Self;
}

impl<T: FftFloat> Scaled<T> for T {
    fn scaled(self, by: T) -> Self {
        self * by
    }
}

impl<T: FftFloat> Scaled<T> for Complex<T> {
    fn scaled(self, by: T) -> Self {
        Complex::new(self.re * by, self.im * by)
    }
}

/// A pointer to the output that tasks share: each writes only its own
/// transforms' elements, which [`disjoint`] has shown to be distinct.
struct Shared<O>(*mut O, usize);

// SAFETY: the tasks holding it write disjoint elements (see `run_pass`).
unsafe impl<O: Send> Sync for Shared<O> {}

/// Whether no two transforms of `pass` write one output element: each
/// output dimension (the transform's, and the batch's with more than one
/// index) steps past everything the dimensions of smaller steps cover.
pub(crate) fn disjoint(pass: &AxisPass) -> bool {
    let (_, n_out) = pass.lengths();
    let mut dims: Vec<(usize, usize)> = [(n_out, pass.output_stride)]
        .into_iter()
        .chain(pass.batch.iter().map(|b| (b.count, b.output)))
        .filter(|&(count, _)| count > 1)
        .collect();
    dims.sort_by_key(|&(_, step)| step);
    let mut extent = 1usize;
    for (count, step) in dims {
        if step < extent {
            return false;
        }
        extent = step.saturating_mul(count - 1).saturating_add(extent);
    }
    true
}

/// Run `pass` from `src` to `dst`: tiles of transforms in parallel, each
/// gathered, transformed by `lines`, scaled and scattered.
fn run_pass<I, O, T>(pass: &AxisPass, src: &[I], dst: &mut [O], lines: Lines<'_, I, O>) -> Result<()>
where
    I: Copy + Default + Send + Sync,
    O: Copy + Default + Send + Scaled<T>,
    T: FftFloat,
{
    let what = || format!("fft {:?} of length {} (CPU)", pass.kind, pass.n);
    let (span_in, span_out) = pass.spans().ok_or_else(|| Error::invalid(what(), "the layout overflows"))?;
    if src.len() < span_in || dst.len() < span_out {
        return Err(Error::invalid(
            what(),
            format!("views of {} and {} elements; the pass spans {span_in} and {span_out}", src.len(), dst.len()),
        ));
    }
    if !disjoint(pass) {
        return Err(Error::invalid(what(), "two transforms would write one output element"));
    }
    if pass.transforms() == 0 {
        return Ok(());
    }
    let (n_in, n_out) = pass.lengths();
    let [outer, inner] = pass.batch;
    let tiles_per_row = inner.count.div_ceil(TILE);
    let scale = T::from_wide(pass.scale);
    let out = Shared(dst.as_mut_ptr(), dst.len());
    let out = &out;
    (0..outer.count * tiles_per_row).into_par_iter().try_for_each(|t| {
        let (b0, first) = (t / tiles_per_row, t % tiles_per_row * TILE);
        let count = TILE.min(inner.count - first);
        let mut input = vec![I::default(); n_in * count];
        let mut output = vec![O::default(); n_out * count];
        let base_in = b0 * outer.input + first * inner.input;
        for j in 0..n_in {
            for l in 0..count {
                input[l * n_in + j] = src[base_in + j * pass.input_stride + l * inner.input];
            }
        }
        lines(&mut input, &mut output, count)?;
        let base_out = b0 * outer.output + first * inner.output;
        for k in 0..n_out {
            for l in 0..count {
                let at = base_out + k * pass.output_stride + l * inner.output;
                debug_assert!(at < out.1);
                let v = output[l * n_out + k];
                let v = if pass.scale == 1.0 { v } else { v.scaled(scale) };
                // SAFETY: `at` < span_out <= dst.len() (checked above), and
                // no other task writes element `at`: the transforms' output
                // elements are disjoint (checked above) and each transform
                // belongs to one tile.
                unsafe { *out.0.add(at) = v };
            }
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fft::BatchDim;

    fn pass(n: usize, stride: usize, batch: [BatchDim; 2]) -> AxisPass {
        AxisPass {
            kind: FftKind::C2C,
            direction: FftDirection::Forward,
            n,
            input_stride: stride,
            output_stride: stride,
            batch,
            scale: 1.0,
        }
    }

    #[test]
    fn overlapping_outputs_are_found() {
        let rows = BatchDim { count: 4, input: 8, output: 8 };
        assert!(disjoint(&pass(8, 1, [rows, BatchDim::ONE])));
        let cols = BatchDim { count: 8, input: 1, output: 1 };
        assert!(disjoint(&pass(4, 8, [cols, BatchDim::ONE])));
        let too_close = BatchDim { count: 4, input: 8, output: 7 };
        assert!(!disjoint(&pass(8, 1, [too_close, BatchDim::ONE])));
        let same = BatchDim { count: 2, input: 0, output: 0 };
        assert!(!disjoint(&pass(8, 1, [same, BatchDim::ONE])));
    }
}
