//! `Array::matmul`: NumPy's `matmul` on kiln's batched products. Leading
//! dimensions broadcast, a 1-d operand is promoted to a matrix (and its
//! axis dropped from the result), and operands are read where they lie:
//! a transposed view takes the product's transposed flag, a sliced one
//! its leading dimension and a broadcast one a batch stride of 0. Only a
//! view no product can read (no axis of unit step among its last two,
//! or a negative step) is copied row-major first.

use kiln_core::{Backend, Error, MatmulShape, MatrixLayout, Precision, Result};

use super::Array;
use super::layout::checked_len;
use crate::matmul::{MatmulElement, matmul};

/// A view's last two axes as a [`MatrixLayout`] (its batch stride left at
/// 0), or `None` where no product reads it in place.
fn matrix_layout(shape: &[usize], strides: &[isize]) -> Option<MatrixLayout> {
    let d = shape.len();
    let (rows, cols) = (shape[d - 2], shape[d - 1]);
    let (sr, sc) = (usize::try_from(strides[d - 2]).ok()?, usize::try_from(strides[d - 1]).ok()?);
    // An axis of extent 1 is never stepped along: its stride is free.
    if (sc == 1 || cols <= 1) && (sr >= cols || rows <= 1) {
        Some(MatrixLayout { transposed: false, ld: if rows <= 1 { cols } else { sr }, stride: 0 })
    } else if (sr == 1 || rows <= 1) && (sc >= rows || cols <= 1) {
        Some(MatrixLayout { transposed: true, ld: if cols <= 1 { rows } else { sc }, stride: 0 })
    } else {
        None
    }
}

/// The batch axes (all but the last two) merged where every operand steps
/// over the next axis exactly: (extent, stride of a, stride of b), inner
/// axis last. c is row-major, so its strides follow from the extents.
fn batch_axes(shape: &[usize], a: &[isize], b: &[isize], matrix: usize) -> Vec<(usize, isize, isize, usize)> {
    let mut axes: Vec<(usize, isize, isize, usize)> = Vec::new();
    // c's stride of each axis: the product of the later extents times one matrix.
    let mut c_stride = matrix;
    let mut strides = vec![0usize; shape.len()];
    for d in (0..shape.len()).rev() {
        strides[d] = c_stride;
        c_stride = c_stride.saturating_mul(shape[d]);
    }
    for d in 0..shape.len() {
        let (n, sa, sb, sc) = (shape[d], a[d], b[d], strides[d]);
        if n == 1 {
            continue;
        }
        match axes.last_mut() {
            Some(last)
                if isize::try_from(n).is_ok_and(|n| last.1 == sa * n && last.2 == sb * n) && last.3 == sc * n =>
            {
                last.0 *= n;
                last.1 = sa;
                last.2 = sb;
                last.3 = sc;
            }
            _ => axes.push((n, sa, sb, sc)),
        }
    }
    axes
}

impl<B: Backend, T: MatmulElement> Array<B, T> {
    /// The matrix product with NumPy's `matmul` semantics, computed exactly
    /// ([`Precision::Exact`]); see [`matmul_with`](Self::matmul_with).
    ///
    /// # Examples
    /// ```
    /// use kiln_core::Device;
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// use ndarray::array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// let a = Array::from_ndarray(&s, &array![[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]])?;
    /// let c = a.matmul(&a.t())?; // a times its transpose, read in place
    /// assert_eq!(c.to_ndarray()?, array![[14.0f32, 32.0], [32.0, 77.0]].into_dyn());
    /// assert!(a.matmul(&a).is_err()); // 2 x 3 times 2 x 3
    ///
    /// // A stack of two 2 x 3 matrices times one vector: shape [2, 2].
    /// let stack = Array::from_vec(&s, &[2, 2, 3], &[1.0f32, 0., 0., 0., 1., 0., 1., 1., 1., 2., 2., 2.])?;
    /// let v = Array::from_vec(&s, &[3], &[1.0f32, 2.0, 3.0])?;
    /// let y = stack.matmul(&v)?;
    /// assert_eq!(y.shape(), [2, 2]);
    /// assert_eq!(y.to_vec()?, [1.0, 2.0, 6.0, 12.0]);
    /// # Ok(()) }
    /// ```
    pub fn matmul(&self, other: &Array<B, T>) -> Result<Array<B, T::Acc>> {
        self.matmul_with(other, Precision::Exact)
    }

    /// The matrix product with NumPy's `matmul` semantics, in the
    /// arithmetic `precision` allows ([`Precision`]; TF32 and bf16 change
    /// f32 products on CUDA's vendor path only):
    ///
    /// - two matrices (`m x k` and `k x n`) give an `m x n` array of the
    ///   accumulator type (f32 for f16 and bf16);
    /// - arrays of more dimensions are stacks of matrices in their last two
    ///   axes; the leading axes broadcast together (`[2, 1, m, k]` by
    ///   `[3, k, n]` gives `[2, 3, m, n]`);
    /// - a 1-d first operand is a row (`1 x k`), a 1-d second one a column
    ///   (`k x 1`), and that axis is left out of the result (two vectors
    ///   give a 0-d array, their inner product).
    ///
    /// Each product of the stack runs as one batched `matmul` where the
    /// operands' strides allow it (several otherwise), reading transposed,
    /// sliced and broadcast views in place. `Err` for 0-d operands, inner
    /// sizes that differ, or leading axes that do not broadcast, naming
    /// both shapes.
    ///
    /// # Examples
    /// ```
    /// use kiln_core::{Device, Precision};
    /// use kiln_cpu::Cpu;
    /// use kiln_kernels::array::Array;
    /// # fn main() -> kiln_core::Result<()> {
    /// let s = Device::<Cpu>::open(0)?.stream();
    /// // Three 2 x 2 matrices, each times one shared 2 x 2 matrix.
    /// let a = Array::from_vec(&s, &[3, 2, 2], &[1.0f32, 0., 0., 1., 2., 0., 0., 2., 0., 1., 1., 0.])?;
    /// let b = Array::from_vec(&s, &[2, 2], &[1.0f32, 2.0, 3.0, 4.0])?;
    /// let c = a.matmul_with(&b, Precision::Tf32)?; // exact on the CPU
    /// assert_eq!(c.shape(), [3, 2, 2]);
    /// assert_eq!(c.to_vec()?, [1., 2., 3., 4., 2., 4., 6., 8., 3., 4., 1., 2.]);
    /// let e = a.matmul(&Array::from_vec(&s, &[3, 2], &[0.0f32; 6])?).unwrap_err();
    /// assert!(e.to_string().contains("[3, 2, 2]") && e.to_string().contains("[3, 2]"));
    /// # Ok(()) }
    /// ```
    pub fn matmul_with(&self, other: &Array<B, T>, precision: Precision) -> Result<Array<B, T::Acc>> {
        let what = format!("Array::matmul of {:?} by {:?}", self.shape(), other.shape());
        if self.ndim() == 0 || other.ndim() == 0 {
            return Err(Error::invalid(what, "takes arrays of at least one dimension (NumPy's matmul), not scalars"));
        }
        // 1-d operands promoted: a row in front, a column behind.
        let a = if self.ndim() == 1 { self.insert_axis(0)? } else { self.clone() };
        let b = if other.ndim() == 1 { other.insert_axis(1)? } else { other.clone() };
        let (da, db) = (a.ndim(), b.ndim());
        let (m, k, kb, n) = (a.shape()[da - 2], a.shape()[da - 1], b.shape()[db - 2], b.shape()[db - 1]);
        if k != kb {
            return Err(Error::invalid(what, format!("the inner sizes differ: {k} columns against {kb} rows")));
        }
        let batch = super::broadcast_shapes(&a.shape()[..da - 2], &b.shape()[..db - 2])
            .map_err(|_| Error::invalid(what.clone(), "the leading (stack) axes do not broadcast together"))?;
        let full = |x: &Array<B, T>, rows, cols| {
            let shape: Vec<usize> = batch.iter().copied().chain([rows, cols]).collect();
            x.broadcast_to(&shape)
        };
        let (a, b) = (full(&a, m, k)?, full(&b, k, n)?);
        // Operands no product reads in place are copied row-major.
        let readable = |x: Array<B, T>| -> Result<(Array<B, T>, MatrixLayout)> {
            match matrix_layout(x.shape(), x.strides()) {
                Some(l) if x.strides().iter().all(|s| *s >= 0) => Ok((x, l)),
                _ => {
                    let x = x.to_contiguous()?;
                    let l = matrix_layout(x.shape(), x.strides()).ok_or_else(|| {
                        Error::invalid(what.clone(), "a row-major copy is not a matrix layout (a kiln bug)")
                    })?;
                    Ok((x, l))
                }
            }
        };
        let ((a, la), (b, lb)) = (readable(a)?, readable(b)?);
        let mut out_shape = batch.clone();
        out_shape.extend([m, n]);
        let len = checked_len(&out_shape, &what)?;
        let mut c = self.stream().alloc::<T::Acc>(len)?;
        if len > 0 {
            self.products(&a, la, &b, lb, &mut c, (&batch, m, n, k), precision)?;
        }
        // The promoted axes left out, as NumPy does.
        let mut shape = out_shape;
        if other.ndim() == 1 {
            shape.remove(shape.len() - 1);
        }
        if self.ndim() == 1 {
            shape.remove(shape.len() - if other.ndim() == 1 { 1 } else { 2 });
        }
        Array::from_buffer(c, &shape)
    }

    /// Every product of the stack into the row-major `c`: one batched
    /// `matmul` per index of the batch axes that do not merge into the
    /// innermost one.
    #[allow(clippy::too_many_arguments, reason = "the operands and the product's sizes, as the one caller has them")]
    fn products(
        &self,
        a: &Array<B, T>,
        la: MatrixLayout,
        b: &Array<B, T>,
        lb: MatrixLayout,
        c: &mut kiln_core::Buffer<B, T::Acc>,
        (batch, m, n, k): (&[usize], usize, usize, usize),
        precision: Precision,
    ) -> Result<()> {
        let d = batch.len();
        let axes = batch_axes(batch, &a.strides()[..d], &b.strides()[..d], m * n);
        let (inner, outer) = match axes.split_last() {
            Some((inner, outer)) => (*inner, outer),
            None => ((1, 0, 0, m * n), &[][..]),
        };
        let shape = MatmulShape::new(m, n, k).batch(inner.0).precision(precision).layouts(
            MatrixLayout { stride: inner.1 as usize, ..la },
            MatrixLayout { stride: inner.2 as usize, ..lb },
            MatrixLayout { stride: inner.3, ..MatrixLayout::dense(m, n, false) },
        );
        let [span_a, span_b, span_c] =
            shape.spans().ok_or_else(|| Error::invalid("Array::matmul", "an operand overflows the address space"))?;
        let count: usize = outer.iter().map(|x| x.0).product();
        for index in 0..count {
            // The offsets of this index of the outer axes, innermost varying fastest.
            let (mut rest, mut oa, mut ob, mut oc) = (index, a.layout().offset(), b.layout().offset(), 0usize);
            for &(extent, sa, sb, sc) in outer.iter().rev() {
                let i = rest % extent;
                rest /= extent;
                oa += i * sa as usize;
                ob += i * sb as usize;
                oc += i * sc;
            }
            // An operand of no elements (k = 0) is an empty view wherever it would start.
            let range = |at: usize, span: usize| if span == 0 { 0..0 } else { at..at + span };
            let va = a.buffer().slice(range(oa, span_a))?;
            let vb = b.buffer().slice(range(ob, span_b))?;
            let mut vc = c.slice_mut(oc..oc + span_c)?;
            matmul(self.stream(), &va, &vb, &mut vc, shape)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use kiln_core::Device;
    use kiln_cpu::Cpu;
    use ndarray::{ArrayD, Axis, IxDyn, s};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    use super::*;

    /// NumPy's matmul on the host, in f64: the reference.
    fn reference(a: &ArrayD<f64>, b: &ArrayD<f64>) -> ArrayD<f64> {
        let a2 = if a.ndim() == 1 { a.clone().insert_axis(Axis(0)) } else { a.clone() };
        let b2 = if b.ndim() == 1 { b.clone().insert_axis(Axis(1)) } else { b.clone() };
        let (da, db) = (a2.ndim(), b2.ndim());
        let (m, k, n) = (a2.shape()[da - 2], a2.shape()[da - 1], b2.shape()[db - 1]);
        let batch = crate::array::broadcast_shapes(&a2.shape()[..da - 2], &b2.shape()[..db - 2]).unwrap();
        let full = |x: &ArrayD<f64>, r, c| {
            let shape: Vec<usize> = batch.iter().copied().chain([r, c]).collect();
            x.broadcast(IxDyn(&shape)).unwrap().to_owned()
        };
        let (a3, b3) = (full(&a2, m, k), full(&b2, k, n));
        let mut shape = batch.clone();
        shape.extend([m, n]);
        let mut c = ArrayD::<f64>::zeros(IxDyn(&shape));
        let count: usize = batch.iter().product();
        let (a3, b3) =
            (a3.into_shape_with_order((count, m, k)).unwrap(), b3.into_shape_with_order((count, k, n)).unwrap());
        {
            let mut c3 = c.view_mut().into_shape_with_order((count, m, n)).unwrap();
            for z in 0..count {
                let prod = a3.slice(s![z, .., ..]).dot(&b3.slice(s![z, .., ..]));
                c3.slice_mut(s![z, .., ..]).assign(&prod);
            }
        }
        let mut out: Vec<usize> = c.shape().to_vec();
        if b.ndim() == 1 {
            out.pop();
        }
        if a.ndim() == 1 {
            out.remove(out.len() - if b.ndim() == 1 { 1 } else { 2 });
        }
        c.into_shape_with_order(IxDyn(&out)).unwrap()
    }

    /// Random stacks (broadcast, transposed, sliced, 1-d) multiplied on the
    /// CPU device against the f64 reference: small integers, so every sum is exact.
    #[test]
    fn matmul_follows_numpy_on_views_of_every_kind() {
        let s = Device::<Cpu>::open(0).unwrap().stream();
        let mut rng = ChaCha8Rng::seed_from_u64(44);
        for case in 0..300 {
            let (m, k, n) = (rng.random_range(1..6), rng.random_range(0..6), rng.random_range(1..6));
            let lead = |rng: &mut ChaCha8Rng| -> Vec<usize> {
                (0..rng.random_range(0..3)).map(|_| if rng.random_bool(0.4) { 1 } else { 3 }).collect()
            };
            let (ba, bb) = (lead(&mut rng), lead(&mut rng));
            let make = |rng: &mut ChaCha8Rng, lead: &[usize], r: usize, c: usize, vector: bool| {
                let mut shape = lead.to_vec();
                if vector {
                    shape = vec![r * c];
                } else {
                    shape.extend([r, c]);
                }
                let len: usize = shape.iter().product();
                let host: Vec<f32> = (0..len).map(|_| rng.random_range(-4..5) as f32).collect();
                ArrayD::from_shape_vec(IxDyn(&shape), host).unwrap()
            };
            let (va, vb) = (rng.random_bool(0.15), rng.random_bool(0.15));
            let ha = make(&mut rng, &ba, if va { 1 } else { m }, k, va);
            let hb = make(&mut rng, &bb, k, if vb { 1 } else { n }, vb);
            // The device operands: plain, transposed in place (a view of a
            // transposed copy), or sliced out of a wider array.
            let device = |rng: &mut ChaCha8Rng, h: &ArrayD<f32>| -> Array<Cpu, f32> {
                let d = h.ndim();
                match (d >= 2, rng.random_range(0..3)) {
                    (true, 1) => {
                        let mut axes: Vec<usize> = (0..d).collect();
                        axes.swap(d - 2, d - 1);
                        let t = h.clone().permuted_axes(axes.clone()).as_standard_layout().to_owned();
                        Array::from_ndarray(&s, &t).unwrap().permuted_axes(&axes).unwrap()
                    }
                    (true, 2) => {
                        let mut wide = h.shape().to_vec();
                        wide[d - 1] += 2;
                        let mut w = ArrayD::<f32>::from_elem(IxDyn(&wide), f32::NAN);
                        w.slice_each_axis_mut(|ax| ndarray::Slice::from(0..h.shape()[ax.axis.index()] as isize))
                            .assign(h);
                        let full = Array::from_ndarray(&s, &w).unwrap();
                        let info: Vec<ndarray::SliceInfoElem> =
                            (0..d).map(|ax| ndarray::SliceInfoElem::from(0..h.shape()[ax] as isize)).collect();
                        full.slice(info).unwrap()
                    }
                    _ => Array::from_ndarray(&s, h).unwrap(),
                }
            };
            let (da, db) = (device(&mut rng, &ha), device(&mut rng, &hb));
            let want = reference(&ha.mapv(f64::from), &hb.mapv(f64::from));
            let got =
                da.matmul(&db).unwrap_or_else(|e| panic!("case {case}: {:?} . {:?}: {e}", ha.shape(), hb.shape()));
            assert_eq!(got.shape(), want.shape(), "case {case}: {:?} . {:?}", ha.shape(), hb.shape());
            assert_eq!(
                got.to_ndarray().unwrap().mapv(f64::from),
                want,
                "case {case}: {:?} . {:?}",
                ha.shape(),
                hb.shape()
            );
        }
    }

    #[test]
    fn shapes_that_do_not_multiply_are_refused_naming_both() {
        let s = Device::<Cpu>::open(0).unwrap().stream();
        let a = Array::from_vec(&s, &[2, 3, 4], &[1.0f32; 24]).unwrap();
        for (shape, says) in
            [(vec![3usize, 4, 2], "do not broadcast"), (vec![3, 2], "inner sizes differ"), (vec![], "scalars")]
        {
            let len = shape.iter().product();
            let b = Array::from_vec(&s, &shape, &vec![1.0f32; len]).unwrap();
            let e = a.matmul(&b).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("[2, 3, 4]"), "{shape:?}: {e}");
        }
    }

    #[test]
    fn views_map_to_layouts_or_to_none() {
        // Row-major, a sliced row-major view (ld 5), its transpose, and a broadcast row.
        assert_eq!(matrix_layout(&[2, 3], &[3, 1]), Some(MatrixLayout { transposed: false, ld: 3, stride: 0 }));
        assert_eq!(matrix_layout(&[2, 3], &[5, 1]), Some(MatrixLayout { transposed: false, ld: 5, stride: 0 }));
        assert_eq!(matrix_layout(&[3, 2], &[1, 5]), Some(MatrixLayout { transposed: true, ld: 5, stride: 0 }));
        assert_eq!(matrix_layout(&[4, 3], &[0, 1]), None);
        assert_eq!(matrix_layout(&[1, 3], &[0, 1]), Some(MatrixLayout { transposed: false, ld: 3, stride: 0 }));
        // Every other column: no unit step.
        assert_eq!(matrix_layout(&[2, 3], &[6, 2]), None);
        assert_eq!(matrix_layout(&[2, 3], &[-3, 1]), None);
    }

    #[test]
    fn batch_axes_merge_where_every_operand_steps_over_the_next() {
        // [2, 3] stacks of 4 x 4 dense a, shared b: one axis of 6.
        assert_eq!(batch_axes(&[2, 3], &[48, 16], &[0, 0], 16), vec![(6, 16, 0, 16)]);
        // b varies along the first axis only: two axes.
        assert_eq!(batch_axes(&[2, 3], &[48, 16], &[16, 0], 16), vec![(2, 48, 16, 48), (3, 16, 0, 16)]);
        // Extent-1 axes vanish.
        assert_eq!(batch_axes(&[1, 3], &[0, 16], &[0, 16], 16), vec![(3, 16, 16, 16)]);
        assert_eq!(batch_axes(&[], &[], &[], 16), vec![]);
    }
}
