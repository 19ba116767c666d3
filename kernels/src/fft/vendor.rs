//! Transforms through the device's vendor FFT (cuFFT on CUDA): a pass as
//! one call per index of its smaller batch dimension, and the scaling the
//! vendor leaves out.

use kiln_core::{
    Args, Backend, BufferView, BufferViewMut, DType, Element, FftLayout, FftSide, LaunchConfig, Program, Result,
    Stream, ViewMut,
};

use super::{AxisPass, BatchDim, FftFloat};
use crate::launch::{BLOCK, blocks, cuda_source, program};

/// The vendor layout of `pass` for one index of `outer`, its batch the
/// other dimension: rank 1, `n` points, strided as the pass says.
fn layout(pass: &AxisPass, precision: DType, inner: BatchDim) -> FftLayout {
    let (n_in, n_out) = pass.lengths();
    FftLayout {
        kind: pass.kind,
        precision,
        rank: 1,
        dims: [pass.n, 1, 1],
        batch: inner.count,
        input: FftSide { stride: pass.input_stride, dist: inner.input.max(1), embed: [n_in, 1, 1] },
        output: FftSide { stride: pass.output_stride, dist: inner.output.max(1), embed: [n_out, 1, 1] },
    }
}

/// Enqueue `pass` from `src` into `dst` with the vendor FFT, unscaled: one
/// call per index of the batch dimension with fewer indices, the other the
/// call's batch. A complex-to-real pass may overwrite `src` (cuFFT's do).
pub(crate) fn pass<B: Backend, T: FftFloat, I: Element, O: Element>(
    stream: &Stream<B>,
    src: BufferView<'_, B, I>,
    mut dst: BufferViewMut<'_, B, O>,
    pass: &AxisPass,
) -> Result<()> {
    let [a, b] = pass.batch;
    let (outer, inner) = if a.count >= b.count { (b, a) } else { (a, b) };
    let layout = layout(pass, T::DTYPE, inner);
    let (span_in, span_out) = layout.spans().unwrap_or((0, 0));
    for o in 0..outer.count {
        let x = src.slice(o * outer.input..o * outer.input + span_in)?;
        let mut y = dst.slice_mut(o * outer.output..o * outer.output + span_out)?;
        stream.vendor_fft(&x, &mut y, &layout, pass.direction)?;
    }
    Ok(())
}

/// Multiply the `2 * len` reals of complex data (or `len` reals) in `data`
/// by `factor`: the normalisation a vendor FFT leaves out. CUDA only (the
/// vendor path's backend).
pub(crate) fn scale<B: Backend, T: FftFloat, E: Element>(
    stream: &Stream<B>,
    data: &mut impl ViewMut<B, E>,
    factor: f64,
) -> Result<()> {
    let reals = data.view().len() * (size_of::<E>() / size_of::<T>());
    if reals == 0 || factor == 1.0 {
        return Ok(());
    }
    let name = format!("kiln_fft_scale_{}", T::DTYPE);
    let prog = program(&name, || Program::new(&name).cuda(cuda_source(T::DTYPE, SCALE)).define("KERNEL", &name));
    let kernel = stream.device().kernel(&prog)?;
    let limits = &stream.device().info().limits;
    let config = LaunchConfig::new(blocks(reals, BLOCK as usize, limits.max_grid[0].min(65_535)), BLOCK);
    let args = Args::new().arg(data.view_mut()).scalar(T::from_wide(factor)).arg(reals as u64);
    // SAFETY: the kernel writes x[0..n) for n the number of reals in the
    // view (its elements times the reals per element), inside the view.
    unsafe { stream.launch(&kernel, config, args) }
}

/// `x[i] *= s` for `i < n`, grid-stride.
const SCALE: &str = r#"
extern "C" __global__ void KERNEL(T* __restrict__ x, T s, unsigned long long n) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        x[i] = x[i] * s;
    }
}
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use kiln_core::{FftDirection, FftKind};

    #[test]
    fn a_column_pass_is_batched_over_its_larger_dimension() {
        let pass = AxisPass {
            kind: FftKind::C2C,
            direction: FftDirection::Forward,
            n: 8,
            input_stride: 16,
            output_stride: 16,
            batch: [BatchDim { count: 16, input: 1, output: 1 }, BatchDim::ONE],
            scale: 1.0,
        };
        let l = layout(&pass, DType::F32, pass.batch[0]);
        assert_eq!((l.batch, l.input.stride, l.input.dist), (16, 16, 1));
        assert_eq!(l.spans(), Some((128, 128)));
        assert!(l.check().is_ok());
    }
}
