//! A transform as steps: one [`AxisPass`] per transformed axis, each from
//! one slot (the input, the output or a scratch array) to another, and,
//! for a vendor FFT, the layout of the whole transform as one call.

use kiln_core::{DType, FftKind, FftLayout, FftSide};

use super::shape::dense_strides;
use super::{AxisPass, BatchDim, FftDirection, FftShape};

/// Where a step reads or writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot {
    /// The caller's input (read only).
    Input,
    /// The caller's output.
    Output,
    /// Scratch array `0` or `1`: dense, of the complex side's shape.
    Scratch(usize),
}

/// One step: `pass` from `from` to `to`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Step {
    pub pass: AxisPass,
    pub from: Slot,
    pub to: Slot,
}

/// The steps of `kind` over `shape` (checked), reading an input laid out
/// with `input_strides` (in elements, one per axis of the input's shape)
/// and writing a dense output, the last step scaled by `scale`; `None`
/// where an axis's batch does not fold into two dimensions (an input
/// whose strides are not those of a dense array; the caller makes it
/// dense first). Complex-to-complex and real-to-complex steps alternate
/// between the output and scratch 0, ending in the output; the
/// complex-to-real steps alternate between scratch 0 and 1, the last
/// writing the output.
pub(crate) fn steps(
    kind: FftKind,
    direction: FftDirection,
    shape: &FftShape,
    input_strides: &[usize],
    scale: f64,
) -> Option<Vec<Step>> {
    let full = shape.shape().to_vec();
    let half = shape.half_shape();
    let axes = shape.axes();
    let (&last, rest) = axes.split_last()?;
    // (axis, pass kind), in the order they run.
    let order: Vec<(usize, FftKind)> = match kind {
        FftKind::C2C => axes.iter().rev().map(|&a| (a, FftKind::C2C)).collect(),
        FftKind::R2C => {
            std::iter::once((last, FftKind::R2C)).chain(rest.iter().rev().map(|&a| (a, FftKind::C2C))).collect()
        }
        FftKind::C2R => {
            rest.iter().rev().map(|&a| (a, FftKind::C2C)).chain(std::iter::once((last, FftKind::C2R))).collect()
        }
    };
    let complex = if kind == FftKind::C2C { full.clone() } else { half.clone() };
    let input_shape = if kind == FftKind::C2R { half.clone() } else { full.clone() };
    let output_shape = if kind == FftKind::C2R { full.clone() } else { complex.clone() };
    let k = order.len();
    let mut steps = Vec::with_capacity(k);
    let mut from = Slot::Input;
    for (i, &(axis, pass_kind)) in order.iter().enumerate() {
        let to = match kind {
            _ if i + 1 == k => Slot::Output,
            FftKind::C2R => Slot::Scratch(i % 2),
            _ if (k - 1 - i).is_multiple_of(2) => Slot::Output,
            _ => Slot::Scratch(0),
        };
        let (src_shape, src_strides) = match from {
            Slot::Input => (&input_shape, input_strides.to_vec()),
            Slot::Output => (&output_shape, dense_strides(&output_shape)),
            Slot::Scratch(_) => (&complex, dense_strides(&complex)),
        };
        let dst_shape = if to == Slot::Output { &output_shape } else { &complex };
        let dst_strides = dense_strides(dst_shape);
        let batch = fold_batch(axis, src_shape, &src_strides, &dst_strides)?;
        let pass = AxisPass {
            kind: pass_kind,
            direction: match pass_kind {
                FftKind::R2C => FftDirection::Forward,
                FftKind::C2R => FftDirection::Inverse,
                FftKind::C2C => direction,
            },
            n: full[axis],
            input_stride: src_strides[axis],
            output_stride: dst_strides[axis],
            batch,
            scale: if i + 1 == k { scale } else { 1.0 },
        };
        steps.push(Step { pass, from, to });
        from = to;
    }
    Some(steps)
}

/// The batch of a pass along `axis`: every other axis of `shape` with more
/// than one index, as (count, source stride, destination stride), adjacent
/// ones merged where both sides step evenly across them; `None` if more
/// than two remain.
fn fold_batch(axis: usize, shape: &[usize], src: &[usize], dst: &[usize]) -> Option<[BatchDim; 2]> {
    let mut dims: Vec<BatchDim> = Vec::new();
    for i in (0..shape.len()).filter(|&i| i != axis && shape[i] > 1) {
        let dim = BatchDim { count: shape[i], input: src[i], output: dst[i] };
        match dims.last_mut() {
            Some(prev) if prev.input == dim.input * dim.count && prev.output == dim.output * dim.count => {
                *prev = BatchDim { count: prev.count * dim.count, input: dim.input, output: dim.output };
            }
            _ => dims.push(dim),
        }
    }
    if shape.contains(&0) {
        return Some([BatchDim { count: 0, input: 0, output: 0 }, BatchDim::ONE]);
    }
    match dims.as_slice() {
        [] => Some([BatchDim::ONE, BatchDim::ONE]),
        [a] => Some([*a, BatchDim::ONE]),
        [a, b] => Some([*a, *b]),
        _ => None,
    }
}

/// The whole transform as one vendor call, where it is one: a dense input,
/// the axes the last `k <= 3` of the array's (the real axis last for a real
/// transform), a batch over the leading ones.
pub(crate) fn whole(kind: FftKind, precision: DType, shape: &FftShape, input_dense: bool) -> Option<FftLayout> {
    let ndim = shape.shape().len();
    let axes = shape.axes();
    let k = axes.len();
    if !input_dense || k > 3 || k > ndim {
        return None;
    }
    let trailing = (ndim - k..ndim).all(|a| axes.contains(&a));
    if !trailing || (kind != FftKind::C2C && axes.last() != Some(&(ndim - 1))) {
        return None;
    }
    let lead = &shape.shape()[..ndim - k];
    let mut dims = [1usize; 3];
    dims[..k].copy_from_slice(&shape.shape()[ndim - k..]);
    let mut layout = FftLayout {
        kind,
        precision,
        rank: k,
        dims,
        batch: lead.iter().product(),
        input: FftSide { stride: 1, dist: 0, embed: [1; 3] },
        output: FftSide { stride: 1, dist: 0, embed: [1; 3] },
    };
    let (din, dout) = layout.side_dims();
    layout.input = FftSide { stride: 1, dist: din[..k].iter().product(), embed: din };
    layout.output = FftSide { stride: 1, dist: dout[..k].iter().product(), embed: dout };
    Some(layout)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_2d_complex_transform_runs_columns_into_scratch_then_rows_into_the_output() {
        let shape = FftShape::new(&[4, 8]).all_axes();
        let s = steps(FftKind::C2C, FftDirection::Forward, &shape, &[8, 1], 0.5).unwrap();
        assert_eq!(s.len(), 2);
        // The last axis first, into scratch; then the first axis, into the output, scaled.
        assert_eq!((s[0].pass.n, s[0].pass.input_stride, s[0].from, s[0].to), (8, 1, Slot::Input, Slot::Scratch(0)));
        assert_eq!(s[0].pass.batch[0], BatchDim { count: 4, input: 8, output: 8 });
        assert_eq!((s[1].pass.n, s[1].pass.input_stride, s[1].to), (4, 8, Slot::Output));
        assert_eq!(s[1].pass.batch[0], BatchDim { count: 8, input: 1, output: 1 });
        assert_eq!((s[0].pass.scale, s[1].pass.scale), (1.0, 0.5));
    }

    #[test]
    fn real_transforms_put_the_real_axis_first_or_last() {
        let shape = FftShape::new(&[6, 10]).all_axes();
        let r = steps(FftKind::R2C, FftDirection::Forward, &shape, &[10, 1], 1.0).unwrap();
        assert_eq!((r[0].pass.kind, r[0].pass.n, r[0].pass.batch[0].output), (FftKind::R2C, 10, 6));
        assert_eq!((r[1].pass.kind, r[1].pass.n, r[1].pass.input_stride), (FftKind::C2C, 6, 6));
        let c = steps(FftKind::C2R, FftDirection::Inverse, &FftShape::new(&[3, 6, 10]).all_axes(), &[36, 6, 1], 1.0)
            .unwrap();
        let slots: Vec<_> = c.iter().map(|s| (s.from, s.to)).collect();
        assert_eq!(
            slots,
            [(Slot::Input, Slot::Scratch(0)), (Slot::Scratch(0), Slot::Scratch(1)), (Slot::Scratch(1), Slot::Output)]
        );
        assert_eq!(
            (c[2].pass.kind, c[2].pass.n, c[2].pass.batch[0].input, c[2].pass.batch[0].output),
            (FftKind::C2R, 10, 6, 10)
        );
    }

    #[test]
    fn a_middle_axis_batches_over_the_outer_and_inner_axes() {
        let shape = FftShape::new(&[3, 5, 7]).along(&[1]);
        let s = steps(FftKind::C2C, FftDirection::Forward, &shape, &[35, 7, 1], 1.0).unwrap();
        assert_eq!(
            s[0].pass.batch,
            [BatchDim { count: 3, input: 35, output: 35 }, BatchDim { count: 7, input: 1, output: 1 }]
        );
        // Strides that do not fold into two batch dimensions.
        let odd = FftShape::new(&[3, 5, 7, 2]).along(&[1]);
        assert!(steps(FftKind::C2C, FftDirection::Forward, &odd, &[200, 30, 4, 1], 1.0).is_none());
    }

    #[test]
    fn trailing_axes_of_a_dense_input_are_one_vendor_call() {
        let shape = FftShape::new(&[2, 16, 8]).along(&[1, 2]);
        let l = whole(FftKind::R2C, DType::F32, &shape, true).unwrap();
        assert_eq!((l.rank, l.dims, l.batch), (2, [16, 8, 1], 2));
        assert_eq!((l.input.dist, l.output.dist, l.output.embed), (128, 80, [16, 5, 1]));
        assert!(whole(FftKind::R2C, DType::F32, &FftShape::new(&[2, 16, 8]).along(&[2, 1]), true).is_none());
        assert!(whole(FftKind::C2C, DType::F32, &FftShape::new(&[2, 16, 8]).along(&[2, 1]), true).is_some());
        assert!(whole(FftKind::C2C, DType::F32, &FftShape::new(&[2, 16, 8]).along(&[0]), true).is_none());
        assert!(whole(FftKind::C2C, DType::F32, &shape, false).is_none());
    }
}
